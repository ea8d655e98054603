"""``index.md`` and ``index.json`` at the root of the archive: every repository-day, newest first.

The index is rebuilt from the JSON twins present in the archive after each
write, so it stays complete when reports are deleted, added by another
machine, or restored from git. Parsing every twin each time would grow with
the archive, so the previous ``index.json`` serves as a cache: an entry is
reused while its twin has the same size, and re-read otherwise (and always
for the twins just written). Only complete pairs are listed — a twin whose
``.md`` is missing would be a dead link.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from repoherald.i18n import EMOJI, t
from repoherald.models import DayReport, Importance
from repoherald.publish.archive.atomic import sweep_stale, write_files
from repoherald.render import escape, twin

INDEX_MD = "index.md"
INDEX_JSON = "index.json"
INDEX_VERSION = 1


@dataclass(frozen=True)
class IndexEntry:
    """One report pair, as listed in the index (paths relative to the archive, with ``/``)."""

    date: str
    lang: str
    repos: tuple[str, ...]
    commits: int
    high: int
    failed: int
    """Repositories of the report that could not be read."""
    md: str
    json: str
    bytes: int
    """Size of the JSON twin: the cache key of this entry."""


_FIELDS = tuple(f.name for f in fields(IndexEntry))


def entry_from_twin(data: twin.Twin, rel_json: str, size: int) -> IndexEntry | None:
    """The index entry of a read JSON twin, or None when it is not a day's report."""
    stats = [r.stats for r in data.repos]
    if data.kind != "day" or any(s is None for s in stats):
        return None
    return IndexEntry(
        date=data.date.isoformat(),
        lang=data.lang,
        repos=tuple(r.name for r in data.repos),
        commits=sum(s.commits for s in stats if s),
        high=sum(s.importance.get(Importance.HIGH.value, 0) for s in stats if s),
        failed=sum(1 for r in data.repos if r.error),
        md=rel_json[: -len(".json")] + ".md",
        json=rel_json,
        bytes=size,
    )


def entry_from_report(report: DayReport, rel_json: str, size: int) -> IndexEntry:
    """The index entry of the twin rendered from ``report`` (without parsing the twin back)."""
    return IndexEntry(
        date=report.day.isoformat(),
        lang=report.lang,
        repos=tuple(s.name for s in report.sections),
        commits=sum(len(s.entries) for s in report.sections),
        high=sum(e.analysis.importance is Importance.HIGH for e in report.entries),
        failed=sum(1 for s in report.sections if s.error),
        md=rel_json[: -len(".json")] + ".md",
        json=rel_json,
        bytes=size,
    )


def load_entries(path: Path) -> dict[str, IndexEntry]:
    """The entries of an existing ``index.json`` by twin path (empty when absent or damaged)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {e["json"]: IndexEntry(**{**e, "repos": tuple(e["repos"])}) for e in data["reports"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _twins(out_dir: Path) -> list[tuple[str, int]]:
    """(relative path, size) of every JSON twin that has its ``.md``; hidden entries skipped.

    Plain ``os.scandir`` and strings: this runs after every write, over the whole archive.
    """
    found: list[tuple[str, int]] = []
    pending = [("", str(out_dir))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                listing = [e for e in it if not e.name.startswith(".")]
        except OSError:
            continue
        names = {e.name for e in listing}
        for entry in listing:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((rel + "/", entry.path))
                elif (
                    entry.name.endswith(".json")
                    and rel != INDEX_JSON
                    and entry.name[: -len(".json")] + ".md" in names
                ):
                    found.append((rel, entry.stat().st_size))
            except OSError:
                continue
    return found


def collect(
    out_dir: Path, fresh: dict[str, IndexEntry], previous: dict[str, IndexEntry]
) -> list[IndexEntry]:
    """Every complete report pair in ``out_dir``, newest first.

    ``fresh`` holds entries known to be current (the twins just written);
    ``previous`` entries are reused while their twin keeps its size.
    """
    entries: list[IndexEntry] = []
    for rel, size in _twins(out_dir):
        known = fresh.get(rel) or previous.get(rel)
        if known is not None and (rel in fresh or known.bytes == size):
            entries.append(known)
            continue
        try:
            data = twin.read((out_dir / rel).read_bytes())
        except (OSError, twin.TwinError):
            continue
        entry = entry_from_twin(data, rel, size)
        if entry is not None:
            entries.append(entry)
    entries.sort(key=lambda e: (e.md, e.lang))
    entries.sort(key=lambda e: e.date, reverse=True)
    return entries


@lru_cache(maxsize=1 << 16)
def _json_row(e: IndexEntry) -> str:
    """One entry as a JSON object (memoised: the index is re-rendered after every write)."""
    data = {f: getattr(e, f) for f in _FIELDS} | {"repos": list(e.repos)}
    return json.dumps(data, ensure_ascii=False)


def render_index_json(entries: list[IndexEntry]) -> str:
    """``{"schema_version": 1, "reports": [...]}``, one report per line (diffs stay readable)."""
    rows = ",\n".join(_json_row(e) for e in entries)
    body = f"\n{rows}\n" if rows else ""
    return f'{{"schema_version": {INDEX_VERSION}, "reports": [{body}]}}\n'


def _link(rel: str) -> str:
    """A relative link that GitHub resolves from the archive root (``index.md``'s folder)."""
    return quote(rel, safe="/")


def render_index_md(entries: list[IndexEntry], lang: str) -> str:
    """The index as a GitHub Markdown table, one row per report pair."""
    lines = [f"# {t(lang, 'index.title')}", ""]
    if not entries:
        return "\n".join([*lines, t(lang, "index.empty"), ""])
    lines += [t(lang, "index.intro"), ""]
    head = [
        t(lang, "index.col_date"),
        t(lang, "index.col_repo"),
        t(lang, "index.col_lang"),
        t(lang, "index.col_commits"),
        EMOJI[Importance.HIGH],
        "JSON",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [_md_row(e, lang) for e in entries]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1 << 16)
def _md_row(e: IndexEntry, lang: str) -> str:
    """One table row (memoised, like :func:`_json_row`)."""
    name = escape.cell(", ".join(e.repos))
    if e.failed:
        name += f" (❌ {t(lang, 'index.failed')}: {e.failed})"
    cells = [
        escape.cell(e.date),
        f"[{name}]({_link(e.md)})",
        escape.cell(e.lang),
        str(e.commits),
        str(e.high),
        f"[json]({_link(e.json)})",
    ]
    return "| " + " | ".join(cells) + " |"


class ArchiveIndex:
    """Keeps ``index.md`` and ``index.json`` of one archive current across many writes.

    The entries seen last are kept in memory, so a run that writes many days
    reads ``index.json`` once; every update still walks the archive, so
    deletions and twins written by others are picked up.
    """

    def __init__(self, out_dir: Path, lang: str) -> None:
        self.out_dir = out_dir
        self.lang = lang
        self._known: dict[str, IndexEntry] | None = None
        self._texts: tuple[str, str] | None = None

    def update(self, fresh: dict[str, IndexEntry] | None = None) -> None:
        """Rebuild the index with ``fresh`` entries (just written); write it if it changed."""
        out = self.out_dir
        sweep_stale(out)
        if self._known is None:
            self._known = load_entries(out / INDEX_JSON)
        entries = collect(out, fresh or {}, self._known)
        self._known = {e.json: e for e in entries}
        texts = (render_index_json(entries), render_index_md(entries, self.lang))
        files = [(out / INDEX_JSON, texts[0]), (out / INDEX_MD, texts[1])]
        if texts == self._texts and all(p.is_file() for p, _ in files):
            return
        if any(_differs(path, text) for path, text in files):
            write_files(files, sync=False)  # derived data: rebuilt by the next write if lost
        self._texts = texts


def _differs(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") != text
    except (OSError, UnicodeDecodeError):
        return True
