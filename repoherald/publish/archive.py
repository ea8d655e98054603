"""The ``archive`` publisher: each repository-day as ``.md`` + ``.json`` files, plus an index.

Layout: ``<out>/<path template>[.<lang>].md`` and its ``.json`` twin, with the
template ``{year}/{name}/{date}`` by default (the old tool's layout), and
``<out>/index.md`` + ``index.json`` listing every report newest first.

Order of writes, so a kill at any point leaves a readable archive: both
texts are rendered before the archive is called; both temporary files are
written and synced; then the ``.json`` is renamed into place, then the
``.md``, then the index is rebuilt. A kill can therefore leave the new
``.json`` beside the old ``.md`` (or beside none, for a new day), which the
next run of that day replaces — but never a ``.md`` without its ``.json``.
Temporary files of a killed writer are removed by the next write into the
same directory.

The archive never overwrites the report of a *different* repository: each
twin records the identity of what was read (``source_id`` of each repository
section), and a target whose twin names another identity is an error.
"""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any, ClassVar, cast

from pydantic import Field, field_validator

from repoherald.config import DEFAULT_LANG, DEFAULT_PATH_TEMPLATE, Lang
from repoherald.errors import PublishError
from repoherald.publish.atomic import sweep_stale, write_atomic, write_files
from repoherald.publish.base import (
    Delivery,
    Publication,
    PublisherOptions,
    Status,
    content_hash,
    join_identities,
    same_identity,
)
from repoherald.publish.index import entry_from_twin, update_index
from repoherald.publish.layout import report_path, safe_component, template_validator
from repoherald.redact import redact

__all__ = ["ArchiveOptions", "ArchivePublisher", "report_path", "safe_component", "write_atomic"]


class ArchiveOptions(PublisherOptions):
    """``[[publish]] type = "archive"``."""

    out: Path = Field(description="Archive directory.")
    path: str = Field(
        default=DEFAULT_PATH_TEMPLATE,
        description="Path template: {year}, {month}, {day}, {date}, {name}; .md/.json appended.",
    )
    lang: Lang = Field(
        default=cast(Lang, DEFAULT_LANG),
        description="Main language: its reports have no language tag in the file name"
        " (others get e.g. .en.md), and the index is written in it.",
    )
    index: bool = Field(default=True, description="Keep index.md and index.json up to date.")

    @field_validator("path")
    @classmethod
    def _valid_template(cls, value: str) -> str:
        return template_validator(value)


class ArchivePublisher:
    """Writes report pairs into a directory tree (usually committed to git)."""

    type: ClassVar[str] = "archive"
    Options: ClassVar[builtins.type[PublisherOptions]] = ArchiveOptions

    def __init__(self, options: ArchiveOptions) -> None:
        self.options = options

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        return ()

    def paths(self, item: Publication) -> tuple[Path, Path]:
        """Where ``item``'s ``.md`` and ``.json`` go."""
        o = self.options
        tag = None if item.lang == o.lang else item.lang
        md = report_path(o.out, o.path, item.name, item.day, "md", tag)
        return md, report_path(o.out, o.path, item.name, item.day, "json", tag)

    def publish(self, item: Publication) -> Delivery:
        md_path, json_path = self.paths(item)
        previous = self._previous_hash(item, md_path, json_path)
        new_hash = item.content_hash()
        sweep_stale(md_path.parent)
        write_files([(json_path, item.json), (md_path, item.markdown)])
        if self.options.index:
            self._update_index(item, json_path)
        rel = md_path.relative_to(self.options.out).as_posix()
        status = Status.UNCHANGED if previous == new_hash else Status.SENT
        return Delivery(status, rel, new_hash, f"archive: {rel}", (md_path, json_path))

    def _update_index(self, item: Publication, json_path: Path) -> None:
        rel_json = json_path.relative_to(self.options.out).as_posix()
        size = len(item.json.encode("utf-8"))
        try:
            entry = entry_from_twin(json.loads(item.json), rel_json, size)
        except ValueError:
            entry = None
        fresh = {rel_json: entry} if entry is not None else {}
        update_index(self.options.out, self.options.lang, fresh)

    def _previous_hash(self, item: Publication, md_path: Path, json_path: Path) -> str | None:
        """The content hash of the pair already at the target, after checking whose it is."""
        try:
            old_json = json_path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError):
            return None  # unreadable: the write will say so, or replace it
        other = _recorded_identity(old_json)
        if other is not None and not same_identity(other, item.identity):
            raise PublishError(redact(self._clash(item, json_path, other)))
        try:
            old_md = md_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return content_hash(old_md, old_json)

    def _clash(self, item: Publication, json_path: Path, other: str) -> str:
        where = json_path.relative_to(self.options.out).as_posix()
        fix = (
            "set `name` for one of them"
            if "{name}" in self.options.path
            else "add {name} to the path template"
        )
        return (
            f"{where} in the archive holds the report of {other}, not of {item.identity}:"
            f" two repositories would share one file, so {fix}"
        )


def _recorded_identity(twin: str) -> str | None:
    """The identity a JSON twin records, or None when it records none (an older twin)."""
    try:
        repos = json.loads(twin)["repos"]
        ids = [r["source_id"] for r in repos]
    except (ValueError, KeyError, TypeError):
        return None
    if not ids or not all(isinstance(i, str) and i for i in ids):
        return None
    return join_identities(ids)
