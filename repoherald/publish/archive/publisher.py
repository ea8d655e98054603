"""The ``archive`` publisher: each repository-day as ``.md`` + ``.json`` files, plus an index.

Layout: ``<out>/<path template>[.<lang>].md`` and its ``.json`` twin, with the
template ``{year}/{name}/{date}`` by default (the old tool's layout), and
``<out>/index.md`` + ``index.json`` listing every report newest first.

Order of writes, so a kill at any point leaves a readable archive: both
texts are rendered before the archive is called; both temporary files are
written and synced; then the ``.json`` is renamed into place, then the
``.md``, then the index is rebuilt (inside :meth:`ArchivePublisher.batch`,
as ``run`` writes, the pairs are written on a thread in the order given and
the index once, at the end). A kill can therefore leave the new
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
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from repoherald.config.defaults import DEFAULT_LANG, DEFAULT_PATH_TEMPLATE, Lang
from repoherald.errors import PublishError
from repoherald.publish.archive.atomic import sweep_stale, write_atomic, write_files
from repoherald.publish.archive.background import OrderedWriter
from repoherald.publish.archive.index import ArchiveIndex, IndexEntry, entry_from_report
from repoherald.publish.archive.layout import report_path, safe_component, template_validator
from repoherald.publish.base import (
    Delivery,
    Publication,
    PublisherOptions,
    Status,
    join_identities,
    same_identity,
)
from repoherald.redact import redact
from repoherald.render import twin
from repoherald.render.content_hash import content_hash_bytes

__all__ = ["ArchiveOptions", "ArchivePublisher", "report_path", "safe_component", "write_atomic"]


class ArchiveOptions(PublisherOptions):
    """``[[publish]] type = "archive"``."""

    out: Path = Field(description="Archive directory.")
    path: str = Field(
        default=DEFAULT_PATH_TEMPLATE,
        description="Path template: {year}, {month}, {day}, {date}, {name}; .md/.json appended.",
    )
    lang: Lang = Field(
        default=DEFAULT_LANG,
        description="Main language: its reports have no language tag in the file name"
        " (others get e.g. .en.md).",
    )
    index_lang: Lang | None = Field(
        default=None,
        description="Language of index.md (default: `lang`); `run` passes the report language.",
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
        self._index = ArchiveIndex(options.out, options.index_lang or options.lang)
        self._held: dict[str, IndexEntry] | None = None
        """Index entries of the reports written inside :meth:`batch`, not yet in the index."""
        self._writer: OrderedWriter | None = None
        """Writes the pairs inside :meth:`batch`."""

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        return ()

    def paths(self, item: Publication) -> tuple[Path, Path]:
        """Where ``item``'s ``.md`` and ``.json`` go."""
        o = self.options
        tag = None if item.lang == o.lang else item.lang
        md = report_path(o.out, o.path, item.name, item.day, "md", tag)
        return md, report_path(o.out, o.path, item.name, item.day, "json", tag)

    def publish(self, item: Publication, landed: Callable[[], None] | None = None) -> Delivery:
        """Write ``item``'s pair (unless unchanged), then call ``landed``.

        Inside :meth:`batch` the pair is written on a thread and ``landed`` is
        called by a later call (or on leaving) once the pair is in place; it
        is never called for a pair that could not be written.
        """
        if item.report is None:
            raise PublishError("archive: needs the analysed report: write it with `repoherald run`")
        md_path, json_path = self.paths(item)
        if self._writer is not None:
            self._writer.landed(wait_for=(md_path, json_path))
        md_data, json_data = item.markdown.encode("utf-8"), item.json.encode("utf-8")
        previous = self._previous_hash(item, md_path, json_path)
        new_hash = content_hash_bytes(md_data, json_data)
        sweep_stale(md_path.parent)
        # An unchanged report is left as it is: a re-run does not touch the
        # files (nor their "generated" line), so an archive kept in git
        # shows no change and no fsync is spent on it.
        files = [(json_path, json_data), (md_path, md_data)] if previous != new_hash else []
        rel_json = json_path.relative_to(self.options.out).as_posix()
        entry = entry_from_report(item.report, rel_json, len(json_data))

        def then() -> None:
            if self.options.index:
                if self._held is not None:
                    self._held[rel_json] = entry
                else:
                    self._index.update({rel_json: entry})
            if landed is not None:
                landed()

        if self._writer is not None:
            self._writer.submit(files, then)
        else:
            if files:
                write_files(files)
            then()
        rel = md_path.relative_to(self.options.out).as_posix()
        status = Status.UNCHANGED if previous == new_hash else Status.SENT
        return Delivery(status, rel, new_hash, f"archive: {rel}", (md_path, json_path))

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Within, reports are written on a thread and the index once, on leaving.

        The pairs are written in the order published, on one thread
        (:class:`~repoherald.publish.archive.background.OrderedWriter`): their fsyncs
        wait on the disk while the caller renders the next day. A failed write
        is raised by the next :meth:`publish` or on leaving; later pairs are
        not written. Rebuilding the index walks the archive and rewrites two
        files; a run of thirty days did it thirty times. It is rebuilt on
        leaving even when the body fails, so the days written before the
        failure are listed (and the body's error is the one raised). A kill
        inside leaves the index behind by the days written since entering:
        the next rebuild, which walks the whole archive, lists them.
        """
        if self._held is not None:
            yield  # already batching: the outer batch writes the index
            return
        self._held, self._writer = {}, OrderedWriter()
        try:
            yield
        except BaseException:
            with contextlib.suppress(PublishError):
                self._end_batch()
            raise
        self._end_batch()

    def _end_batch(self) -> None:
        """Wait for the writes, then rebuild the index with the pairs that landed."""
        writer, self._writer = self._writer, None
        try:
            if writer is not None:
                writer.finish()
        except BaseException:
            with contextlib.suppress(PublishError):
                self._release_index()
            raise
        self._release_index()

    def _release_index(self) -> None:
        held, self._held = self._held, None
        if held:
            self._index.update(held)

    def _previous_hash(self, item: Publication, md_path: Path, json_path: Path) -> str | None:
        """The content hash of the pair already at the target, after checking whose it is."""
        try:
            old_json = json_path.read_bytes()
        except OSError:
            return None  # none yet, or unreadable: the write will replace it or say why
        other = _recorded_identity(old_json)
        if other is not None and not same_identity(other, item.identity):
            raise PublishError(redact(self._clash(item, json_path, other)))
        try:
            old_md = md_path.read_bytes()
        except OSError:
            return None
        return content_hash_bytes(old_md, old_json)

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


def _recorded_identity(twin_data: bytes) -> str | None:
    """The identity a JSON twin records, or None when it records none (an older twin).

    A twin that cannot be read records none: the write replaces it.
    """
    try:
        ids = twin.read_stamp(twin_data).source_ids
    except twin.TwinError:
        return None
    if not ids or not all(ids):
        return None
    return join_identities([i for i in ids if i])
