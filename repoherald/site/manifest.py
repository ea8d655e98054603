"""The out directory's memory of what it was built from: one entry per twin.

An entry holds the twin's hash (and size and mtime, so an untouched twin is
not even re-read), the sibling twins its page links to, and either the twin's
:class:`~repoherald.site.records.DaySummary` or the problem that kept it out
(its full record is in :mod:`repoherald.site.recordstore`).
A manifest from another site format or repoherald version is ignored, so
the next build is a full one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repoherald._version import __version__
from repoherald.site.records import DaySummary

MANIFEST = ".repoherald-site.json"
SITE_FORMAT = 4
"""Raised whenever a page's layout changes, so every page is built again."""


@dataclass(frozen=True, slots=True)
class Entry:
    """What the site made of one twin."""

    hash: str
    size: int
    mtime_ns: int
    langs: tuple[str, ...]
    """The other-language twins its page links to (a change means the page is built again)."""
    summary: DaySummary | None
    problem: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "hash": self.hash,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "langs": list(self.langs),
            "summary": self.summary.to_json() if self.summary else None,
            "problem": self.problem,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        summary = data.get("summary")
        return cls(
            str(data["hash"]),
            int(data["size"]),
            int(data["mtime_ns"]),
            tuple(data["langs"]),
            DaySummary.from_json(summary) if summary else None,
            data.get("problem"),
        )


def _stamp() -> str:
    return f"{SITE_FORMAT}/{__version__}"


def load_manifest(out: Path) -> dict[str, Entry]:
    """The entries of the last build by twin path; empty when absent, damaged or outdated."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        if data.get("stamp") != _stamp():
            return {}
        return {rel: Entry.from_json(e) for rel, e in data["twins"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return {}


def save_manifest(out: Path, entries: dict[str, Entry]) -> None:
    """Write the manifest last, so a build killed midway is redone by the next one."""
    data = {"stamp": _stamp(), "twins": {rel: e.to_json() for rel, e in sorted(entries.items())}}
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out / MANIFEST)
