"""Which archived report of a repository-day to deliver: the one in the configured archive.

The store keeps one report path per repository, day and language, whatever
archive wrote it last: a ``report --out elsewhere`` of a day moves the
store's record away from the archive ``run`` writes. Delivering what the
record names would send another archive's page (a chat message said 🔴 4
for an archived page with 🔴 1). So the configured archive
(``--out`` / ``[report] out`` and ``[report] path``) decides; the store's
record only says which days were reported, and where it disagrees with the
archive a note says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from repoherald.publish.archive.layout import UNTAGGED_LANG, report_path
from repoherald.store.base import Store
from repoherald.store.ledger import content_hash


@dataclass(frozen=True, slots=True)
class Archive:
    """Where ``run`` writes its reports: the root folder and the path template."""

    out: Path
    template: str

    def md_path(self, name: str, day: date, lang: str) -> Path:
        """The ``.md`` of ``name``'s report of ``day`` in ``lang`` in this archive."""
        tag = None if lang == UNTAGGED_LANG else lang
        return report_path(self.out, self.template, name, day, "md", tag)


@dataclass(slots=True)
class ArchivedDays:
    """The report of each day to deliver, and one line per disagreement with the store."""

    paths: dict[date, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Row:
    lang: str
    path: Path
    content_hash: str


def archived_reports(
    store: Store, repo: str, days: Iterable[date], lang: str, archive: Archive
) -> ArchivedDays:
    """The ``.md`` in ``archive`` of each of ``days`` the store says ``repo`` was reported on.

    ``lang`` is preferred; another language's report of the day is taken when
    the archive has no ``lang`` one. A day the store recorded in another
    archive keeps the configured archive's path (so delivering it fails with
    "missing", naming where to look) and gets a note; so does a report whose
    text changed after the store recorded it (the archive's is delivered).
    """
    rows = _rows(store, repo, {d.isoformat() for d in days})
    out = ArchivedDays()
    for day in sorted(rows):
        by_lang = {r.lang: r for r in rows[day]}
        langs = [lang, *sorted(x for x in by_lang if x != lang)]
        chosen = next(
            (
                (x, archive.md_path(repo, day, x))
                for x in langs
                if archive.md_path(repo, day, x).is_file()
            ),
            None,
        )
        if chosen is None:
            row = by_lang.get(lang) or by_lang[langs[1]]
            wanted = archive.md_path(repo, day, row.lang)
            out.paths[day] = wanted
            if not _same_file(row.path, wanted):
                out.notes.append(
                    f"{repo} {day}: the store's record points at {row.path}, outside the"
                    f" configured archive {archive.out}: pass that archive's folder as --out"
                    " to deliver it, or report the day again into this one"
                )
            continue
        chosen_lang, path = chosen
        out.paths[day] = path
        note = _disagreement(repo, day, by_lang.get(chosen_lang), path)
        if note:
            out.notes.append(note)
    return out


def _rows(store: Store, repo: str, wanted: set[str]) -> dict[date, list[_Row]]:
    found: dict[date, list[_Row]] = {}
    for day, row_lang, path, digest in store.reported_days(repo):
        if day.isoformat() in wanted:
            found.setdefault(day, []).append(_Row(row_lang, Path(path), digest))
    return found


def _disagreement(repo: str, day: date, row: _Row | None, path: Path) -> str | None:
    """One line when the store's record of the day is not the archive's ``path``."""
    if row is None:
        return None  # the day's other language is recorded; this one was written beside it
    if not _same_file(row.path, path):
        return (
            f"{repo} {day}: the store's record points at {row.path}, another archive;"
            f" delivering {path} from the configured archive"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # delivering it says what is wrong with the file
    if row.content_hash and content_hash(text) != row.content_hash:
        return (
            f"{repo} {day}: {path} changed since the store recorded it;"
            " delivering the archive's text"
        )
    return None


def _same_file(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def recorded_reports(store: Store, repo: str, days: Iterable[date], lang: str) -> dict[date, Path]:
    """The ``.md`` the store recorded for each of ``days`` (``lang`` preferred).

    For the weekly roll-up, which reads the week's days as they were last
    written; a day's own delivery goes through :func:`archived_reports`.
    """
    rows = _rows(store, repo, {d.isoformat() for d in days})
    out = {}
    for day, found in rows.items():
        by_lang = {r.lang: r.path for r in found}
        out[day] = by_lang.get(lang) or by_lang[sorted(by_lang)[0]]
    return dict(sorted(out.items()))
