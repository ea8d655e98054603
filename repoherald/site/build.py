"""``build_site``: the archive's twins in, a static site out, rebuilding only what changed.

A twin whose size, mtime and hash are those the manifest remembers keeps
its page; a changed or new twin gets its day page built again (and so does
a page whose sibling languages changed, for its language switch). Then the
aggregates — home, repository pages, trends, search index — are written
from the records the manifest keeps, which costs no twin parsing. A twin
that cannot be used is one line in :attr:`SiteResult.problems` and on the
home page; it never stops the rest of the site.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from repoherald.errors import PublishError, UsageError
from repoherald.site.aggregate import write_aggregates
from repoherald.site.assets import write_assets
from repoherald.site.daypage import day_context
from repoherald.site.manifest import Entry, load_manifest, save_manifest
from repoherald.site.pages import render, write_page
from repoherald.site.records import DayRecord, day_record
from repoherald.site.slugs import repo_page
from repoherald.site.twins import TwinFile, TwinProblem, find_twins, parse_twin, twin_hash

_DAMAGED = (KeyError, TypeError, ValueError, AttributeError)
"""What reading a structurally damaged twin raises (wrong types where a report has others)."""


@dataclass(frozen=True, slots=True)
class SiteResult:
    """What a build did: the day pages it built, what it removed, and what it could not use."""

    out: Path
    days_built: tuple[str, ...]
    """Twins (archive-relative) whose day page was built by this run."""
    removed: tuple[str, ...]
    """Day pages deleted because their twin is gone."""
    problems: tuple[TwinProblem, ...]
    pages: int
    """Day pages the site has."""

    @property
    def ok(self) -> bool:
        return not self.problems


def day_page_path(twin_rel: str) -> str:
    """Where a twin's page goes: the twin's own path, ``.html`` for ``.json``."""
    return twin_rel[: -len(".json")] + ".html"


def _read(archive: Path, f: TwinFile, old: Entry | None) -> tuple[Entry, dict[str, Any] | None]:
    """The manifest entry of ``f`` and, when it must be (re)built, its parsed twin."""
    if old is not None and old.size == f.size and old.mtime_ns == f.mtime_ns:
        return old, None
    try:
        data = (archive / f.rel).read_bytes()
    except OSError as exc:
        problem = f"{f.rel}: cannot be read ({exc.strerror}): check its permissions"
        return Entry("", f.size, f.mtime_ns, (), None, problem), None
    digest = twin_hash(data)
    if old is not None and old.hash == digest:
        return replace(old, size=f.size, mtime_ns=f.mtime_ns), None
    parsed = parse_twin(f.rel, data)
    if isinstance(parsed, TwinProblem):
        return Entry(digest, f.size, f.mtime_ns, (), None, parsed.message), None
    try:
        record = day_record(f.rel, day_page_path(f.rel), parsed)
    except _DAMAGED:
        problem = f"{f.rel}: its report is damaged: run that day again to rewrite it"
        return Entry(digest, f.size, f.mtime_ns, (), None, problem), None
    return Entry(digest, f.size, f.mtime_ns, (), record, None), parsed


def _siblings(records: list[DayRecord]) -> dict[str, list[DayRecord]]:
    """The other-language pages of each twin's repository-day, by twin path."""
    groups: dict[tuple[tuple[str, ...], str], list[DayRecord]] = defaultdict(list)
    for r in records:
        groups[(r.repos, r.date)].append(r)
    return {
        r.twin: sorted((o for o in g if o is not r), key=lambda o: o.lang)
        for g in groups.values()
        for r in g
    }


def _render_day(
    out: Path, record: DayRecord, twin: dict[str, Any], others: list[DayRecord]
) -> None:
    page = record.page
    here = posixpath.dirname(page)
    languages = [{"lang": o.lang, "href": posixpath.relpath(o.page, here or ".")} for o in others]
    name = record.repos[0] if record.repos else record.twin
    d = day_context(twin)
    text = render(
        "day.html.j2",
        page,
        record.lang,
        title=f"{name} · {record.date}",
        page_kind="day",
        d=d,
        facets=d["facets"],
        total=d["total"],
        scope="day",
        languages=languages,
        repo_name=name,
        repo_page=posixpath.relpath(repo_page(name), here or "."),
    )
    write_page(out, page, text)


def build_site(archive: Path, out: Path, lang: str = "en") -> SiteResult:
    """Build (or bring up to date) the static site of ``archive`` in ``out``.

    ``lang`` is the language of the site's own pages (home, trends, search);
    each day page is in its report's language.
    """
    if not archive.is_dir():
        raise UsageError(f"archive {archive} is not a directory: point the site at the reports")
    try:
        out.mkdir(parents=True, exist_ok=True)
        return _build(archive, out, lang)
    except OSError as exc:
        raise PublishError(f"cannot write the site in {out}: {exc.strerror or exc}") from None


def _build(archive: Path, out: Path, lang: str) -> SiteResult:
    old = load_manifest(out)
    entries: dict[str, Entry] = {}
    parsed: dict[str, dict[str, Any]] = {}
    for f in find_twins(archive):
        entry, twin = _read(archive, f, old.get(f.rel))
        entries[f.rel] = entry
        if twin is not None:
            parsed[f.rel] = twin
    records = [e.record for e in entries.values() if e.record is not None]
    siblings = _siblings(records)
    built: list[str] = []
    for rel, entry in sorted(entries.items()):
        record = entry.record
        if record is None:
            continue
        others = siblings[rel]
        langs = tuple(o.lang for o in others)
        if rel not in parsed and entry.langs == langs and (out / record.page).is_file():
            continue
        twin = parsed.get(rel)
        if twin is None:
            again = parse_twin(rel, (archive / rel).read_bytes())
            if isinstance(again, TwinProblem):
                entries[rel] = replace(entry, record=None, problem=again.message)
                continue
            twin = again
        try:
            _render_day(out, record, twin, others)
        except _DAMAGED:
            problem = f"{rel}: its report is damaged: run that day again to rewrite it"
            entries[rel] = replace(entry, record=None, problem=problem)
            continue
        entries[rel] = replace(entry, langs=langs)
        built.append(rel)
    removed = _remove_stale(out, old, entries)
    problems = tuple(TwinProblem(rel, e.problem) for rel, e in sorted(entries.items()) if e.problem)
    records = [e.record for e in entries.values() if e.record is not None]
    write_assets(out)
    write_aggregates(out, records, problems, lang)
    save_manifest(out, entries)
    return SiteResult(out, tuple(built), removed, problems, len(records))


def _remove_stale(out: Path, old: dict[str, Entry], entries: dict[str, Entry]) -> tuple[str, ...]:
    """Delete the pages of twins that are gone (or now unusable)."""
    removed: list[str] = []
    for rel, entry in old.items():
        if entry.record is None:
            continue
        now = entries.get(rel)
        if now is not None and now.record is not None:
            continue
        page = out / entry.record.page
        if page.is_file():
            page.unlink()
            removed.append(entry.record.page)
    return tuple(removed)
