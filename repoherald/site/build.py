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
import shutil
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from repoherald.errors import PublishError, UsageError
from repoherald.i18n import CONSOLE_LANGUAGE, LANGUAGES
from repoherald.publish.archive.layout import UNTAGGED_LANG
from repoherald.site import commits_html, recordstore
from repoherald.site.aggregate import Dirty, write_aggregates
from repoherald.site.assets import write_assets
from repoherald.site.commits_html import Labels
from repoherald.site.daypage import day_context
from repoherald.site.manifest import Entry, load_manifest, save_manifest
from repoherald.site.pages import render, write_page
from repoherald.site.records import DayRecord, DaySummary, day_record, summarize
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


def _read(
    archive: Path, f: TwinFile, old: Entry | None
) -> tuple[Entry, dict[str, Any] | None, DayRecord | None]:
    """The manifest entry of ``f`` and, when it must be (re)built, its twin and record."""
    if old is not None and old.size == f.size and old.mtime_ns == f.mtime_ns:
        return old, None, None
    try:
        data = (archive / f.rel).read_bytes()
    except OSError as exc:
        problem = f"{f.rel}: cannot be read ({exc.strerror}): check its permissions"
        return Entry("", f.size, f.mtime_ns, (), None, problem), None, None
    digest = twin_hash(data)
    if old is not None and old.hash == digest:
        return replace(old, size=f.size, mtime_ns=f.mtime_ns), None, None
    parsed = parse_twin(f.rel, data)
    if isinstance(parsed, TwinProblem):
        return Entry(digest, f.size, f.mtime_ns, (), None, parsed.message), None, None
    try:
        record = day_record(f.rel, day_page_path(f.rel), parsed)
    except _DAMAGED:
        return _damaged(Entry(digest, f.size, f.mtime_ns, (), None, None), f.rel), None, None
    return Entry(digest, f.size, f.mtime_ns, (), summarize(record), None), parsed, record


def _siblings(rels: list[str]) -> dict[str, list[tuple[str, str]]]:
    """The other-language twins of each twin, by file name: ``(lang, twin path)``.

    The archive names a report in another language than its main one
    ``<day>.<lang>.json`` beside ``<day>.json``
    (:func:`~repoherald.publish.archive.layout.lang_suffix`),
    so the language switch is known before any twin is parsed and a build
    never holds more than one parsed twin.
    """
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rel in rels:
        stem = rel[: -len(".json")]
        head, dot, tag = stem.rpartition(".")
        if dot and tag in LANGUAGES and "/" not in tag:
            groups[head].append((tag, rel))
        else:
            groups[stem].append((UNTAGGED_LANG, rel))
    return {
        rel: sorted(o for o in group if o[1] != rel)
        for group in groups.values()
        for _, rel in group
    }


def _render_day(
    out: Path, record: DaySummary, twin: dict[str, Any], others: list[tuple[str, str]]
) -> None:
    page = record.page
    here = posixpath.dirname(page)
    languages = [
        {"lang": lg, "href": posixpath.relpath(day_page_path(rel), here or ".")}
        for lg, rel in others
    ]
    name = record.repos[0].name if record.repos else record.twin
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
        html=commits_html,
        L=Labels(record.lang),
    )
    write_page(out, page, text)


def _damaged(entry: Entry, rel: str) -> Entry:
    problem = f"{rel}: its report is damaged: run that day again to rewrite it"
    return replace(entry, summary=None, problem=problem)


def _day(
    archive: Path,
    out: Path,
    entry: Entry,
    twin: dict[str, Any] | None,
    others: list[tuple[str, str]],
) -> Literal["built", "current", "damaged"]:
    """Build the day page of ``entry`` when its twin or its language switch changed.

    Says whether it was ``built``, already ``current``, or its twin turned out ``damaged``.
    """
    record = entry.summary
    assert record is not None
    links = tuple(r for _, r in others)
    if twin is None and entry.langs == links and (out / record.page).is_file():
        return "current"
    if twin is None:
        again = parse_twin(record.twin, (archive / record.twin).read_bytes())
        if isinstance(again, TwinProblem):
            return "damaged"
        twin = again
    try:
        _render_day(out, record, twin, others)
    except _DAMAGED:
        return "damaged"
    return "built"


def build_site(archive: Path, out: Path, lang: str = CONSOLE_LANGUAGE) -> SiteResult:
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
    if not old:
        shutil.rmtree(out / recordstore.STORE, ignore_errors=True)
    files = find_twins(archive)
    siblings = _siblings([f.rel for f in files])
    entries: dict[str, Entry] = {}
    fresh: dict[str, DayRecord] = {}
    built: list[str] = []

    def day(
        rel: str, entry: Entry, twin: dict[str, Any] | None, others: list[tuple[str, str]]
    ) -> Entry:
        state = _day(archive, out, entry, twin, others)
        if state == "damaged":
            fresh.pop(rel, None)
            return _damaged(entry, rel)
        if state == "built" and rel not in built:
            built.append(rel)
        return replace(entry, langs=tuple(r for _, r in others))

    for f in files:
        entry, twin, record = _read(archive, f, old.get(f.rel))
        if record is not None:
            fresh[f.rel] = record
        entries[f.rel] = day(f.rel, entry, twin, siblings[f.rel]) if entry.summary else entry
    # A page whose sibling turned out unusable must not link to it.
    unusable = {rel for rel, e in entries.items() if e.summary is None}
    for rel, entry in list(entries.items()):
        if entry.summary is not None and unusable.intersection(entry.langs):
            others = [o for o in siblings[rel] if o[1] not in unusable]
            entries[rel] = day(rel, entry, None, others)
    removed = _remove_stale(out, old, entries)
    dirty = _update_store(out, old, entries, fresh)
    problems = tuple(TwinProblem(rel, e.problem) for rel, e in sorted(entries.items()) if e.problem)
    summaries = [e.summary for e in entries.values() if e.summary is not None]
    write_assets(out)
    write_aggregates(out, summaries, problems, lang, dirty)
    save_manifest(out, entries)
    return SiteResult(out, tuple(built), removed, problems, len(summaries))


def _update_store(
    out: Path, old: dict[str, Entry], entries: dict[str, Entry], fresh: dict[str, DayRecord]
) -> Dirty:
    """Put the fresh records in the record store, drop those of twins gone or now unusable;
    what changed (repositories, months), for the aggregates."""
    changes: dict[str, dict[str, DayRecord | None]] = defaultdict(dict)
    for rel, entry in old.items():
        now = entries.get(rel)
        if entry.summary is not None and (now is None or now.summary is None or rel in fresh):
            names = [r.name for r in entry.summary.repos]
            for key in recordstore.buckets_of(names, entry.summary.date):
                changes[key][rel] = None
    for rel, record in fresh.items():
        for key in recordstore.buckets_of(record.repos, record.date):
            changes[key][rel] = record
    loaded: dict[str, dict[str, DayRecord]] = {}
    for key, change in changes.items():
        records = recordstore.load(out, key) if old else {}
        for rel, new in change.items():
            if new is None:
                records.pop(rel, None)
            else:
                records[rel] = new
        recordstore.save(out, key, records)
        loaded[key] = records
    return Dirty(set(changes), loaded, full=not old)


def _remove_stale(out: Path, old: dict[str, Entry], entries: dict[str, Entry]) -> tuple[str, ...]:
    """Delete the pages of twins that are gone (or now unusable)."""
    removed: list[str] = []
    for rel, entry in old.items():
        if entry.summary is None:
            continue
        now = entries.get(rel)
        if now is not None and now.summary is not None:
            continue
        page = out / entry.summary.page
        if page.is_file():
            page.unlink()
            removed.append(entry.summary.page)
    return tuple(removed)
