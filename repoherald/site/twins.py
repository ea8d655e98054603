"""Reading the archive's JSON twins for the site: the one place the site parses a twin.

The reports stay the source of truth; the site reads only their JSON twins
(what :mod:`repoherald.render.json_twin` wrote). A twin that cannot be read
— damaged, not a report, or written by a newer repoherald — becomes a
:class:`TwinProblem` with one line saying what to do, and the rest of the
site is built: the home page lists every problem.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repoherald.publish.index import INDEX_JSON
from repoherald.render.json_twin import SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class TwinFile:
    """A twin found in the archive: its path relative to the archive (with ``/``) and stat."""

    rel: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class TwinProblem:
    """A twin the site could not use, and the one line that says why and what to do."""

    rel: str
    message: str


def find_twins(archive: Path) -> list[TwinFile]:
    """Every report twin under ``archive`` (hidden entries and ``index.json`` skipped), sorted."""
    found: list[TwinFile] = []
    pending = [("", str(archive))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                listing = [e for e in it if not e.name.startswith(".")]
        except OSError:
            continue
        for entry in listing:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((rel + "/", entry.path))
                elif entry.name.endswith(".json") and rel != INDEX_JSON:
                    st = entry.stat()
                    found.append(TwinFile(rel, st.st_size, st.st_mtime_ns))
            except OSError:
                continue
    found.sort(key=lambda f: f.rel)
    return found


def twin_hash(data: bytes) -> str:
    """The content hash the site's manifest keys a twin by."""
    return hashlib.sha256(data).hexdigest()


def parse_twin(rel: str, data: bytes) -> dict[str, Any] | TwinProblem:
    """The twin as a dict, or the problem that stops the site from using it."""
    try:
        twin = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return TwinProblem(rel, f"{rel}: not valid JSON: run that day again to rewrite it")
    if not isinstance(twin, dict) or "repos" not in twin or "date" not in twin:
        return TwinProblem(rel, f"{rel}: not a report twin: move it out of the archive")
    version = twin.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        return TwinProblem(
            rel,
            f"{rel}: written by a newer repoherald (schema {version!r}, this one reads"
            f" {SCHEMA_VERSION}): upgrade repoherald to build its page",
        )
    if not isinstance(twin["repos"], list):
        return TwinProblem(rel, f"{rel}: its repos are damaged: run that day again")
    return twin
