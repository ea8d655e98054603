"""The pages over many days: home, one page per repository, trends, search.

Home and trends are written on every build from the day summaries in the
manifest (no twin and no commit is read). A repository's page and a month's
search segment are written from the full records (:mod:`.recordstore`), and
only when a build changed that repository or month (or they are missing).
A repository-day reported in two languages counts once: the one in the
site's language is preferred, else the first language.
"""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from html import escape
from pathlib import Path

from markupsafe import Markup

from repoherald.publish.archive.layout import safe_component
from repoherald.site import recordstore
from repoherald.site.commits_html import rich
from repoherald.site.daypage import Facets, badge, type_name
from repoherald.site.heatmap import DayCount, heatmap
from repoherald.site.pages import render, write_page
from repoherald.site.records import IMPORTANCES, CommitRecord, DayRecord, DaySummary
from repoherald.site.searchindex import (
    Doc,
    KeptDamaged,
    is_written,
    write_root,
    write_segment,
)
from repoherald.site.slugs import repo_page, repo_trends_page
from repoherald.site.trends import DayNumbers, charts, svg, table
from repoherald.site.twins import TwinProblem
from repoherald.site.words import word

RECENT = 7
"""Days per repository on the home page."""


@dataclass(frozen=True)
class Dirty:
    """What a build changed: record-store buckets (``repo@YYYY-MM``), and those it loaded."""

    buckets: set[str]
    loaded: dict[str, dict[str, DayRecord]]
    full: bool

    def repos(self) -> set[str]:
        return {b.split("@", 1)[0] for b in self.buckets}

    def months(self) -> set[str]:
        return {b.split("@", 1)[1] for b in self.buckets}

    def records(self, out: Path, keys: list[str]) -> list[DayRecord]:
        found: list[DayRecord] = []
        for key in keys:
            records = self.loaded.get(key)
            if records is None:
                records = recordstore.load(out, key)
            found += records.values()
        return found


@dataclass
class RepoDay:
    """One repository on one day: its numbers (once) and its page in each language."""

    date: str
    counts: tuple[int, int, int] = (0, 0, 0)
    affects: int = 0
    failed: str = ""
    types: dict[str, int] = field(default_factory=dict)
    high_areas: dict[str, int] = field(default_factory=dict)
    pages: dict[str, str] = field(default_factory=dict)
    """Language -> day page (relative to the site root)."""

    @property
    def commits(self) -> int:
        return sum(self.counts)

    def page(self, lang: str) -> str:
        return self.pages.get(lang) or next(iter(self.pages.values()))


def _by_repo(summaries: list[DaySummary], lang: str) -> dict[str, dict[str, RepoDay]]:
    """Repository -> date -> :class:`RepoDay`, the preferred language's numbers."""
    repos: dict[str, dict[str, RepoDay]] = defaultdict(dict)
    ordered = sorted(summaries, key=lambda s: (s.lang != lang, s.lang, s.twin))
    for s in ordered:
        for r in s.repos:
            day = repos[r.name].get(s.date)
            if day is None:
                day = repos[r.name][s.date] = RepoDay(
                    s.date, r.counts, r.affects, r.failed, r.types, r.high_areas
                )
            day.pages.setdefault(s.lang, s.page)
    return {name: dict(sorted(days.items(), reverse=True)) for name, days in sorted(repos.items())}


def _rel(target: str, page: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


def _heat(days: dict[str, RepoDay], page: str | None, lang: str) -> Markup:
    counts: dict[date, DayCount] = {}
    for d, day in days.items():
        href = _rel(day.page(lang), page) if page is not None and day.pages else None
        counts[date.fromisoformat(d)] = DayCount(day.commits, day.counts[0], href)
    return heatmap(counts, word(lang, "heatmap"))


def _all_days(repos: dict[str, dict[str, RepoDay]]) -> dict[str, RepoDay]:
    """Every repository's numbers by date (for the home page's heat-map)."""
    merged: dict[str, RepoDay] = {}
    for days in repos.values():
        for d, day in days.items():
            m = merged.setdefault(d, RepoDay(d))
            m.counts = (m.counts[0] + day.counts[0], m.counts[1] + day.counts[1],
                        m.counts[2] + day.counts[2])  # fmt: skip
    return merged


def _trend_blocks(days: dict[str, dict[str, RepoDay]], lang: str) -> list[dict[str, object]]:
    numbers = [
        DayNumbers(date.fromisoformat(d), day.types, day.high_areas, day.affects)
        for repo in days.values()
        for d, day in repo.items()
    ]
    titles = {
        "types": word(lang, "per_week_type"),
        "high": word(lang, "per_week_high"),
        "affects": word(lang, "per_week_affects"),
    }
    found = charts(numbers, titles, lambda ty: type_name(lang, ty), word(lang, "other"))
    return [
        {"key": ch.key, "title": ch.title, "svg": svg(ch), "table": table(ch, word(lang, "week"))}
        for ch in found
    ]


def write_aggregates(
    out: Path, summaries: list[DaySummary], problems: tuple[TwinProblem, ...], lang: str,
    dirty: Dirty,
) -> None:  # fmt: skip
    """Write home and trends, and the repository pages and search segments that changed."""
    repos = _by_repo(summaries, lang)
    home = [
        {
            "name": name, "href": repo_page(name), "trends": repo_trends_page(name),
            "high": sum(day.counts[0] for day in days.values()),
            "recent": [
                {"date": d, "commits": day.commits, "high": day.counts[0],
                 "affects": day.affects, "failed": day.failed, "pages": sorted(day.pages.items())}
                for d, day in list(days.items())[:RECENT]
            ],
        }
        for name, days in repos.items()
    ]  # fmt: skip
    text = render(
        "home.html.j2", "index.html", lang, title=word(lang, "site_title"), page_kind="home",
        repos=home, problems=problems, heat=_heat(_all_days(repos), None, lang),
    )  # fmt: skip
    write_page(out, "index.html", text)
    text = render(
        "trends.html.j2", "trends.html", lang, title=word(lang, "trends_all"), page_kind="trends",
        heading=word(lang, "trends_all"), blocks=_trend_blocks(repos, lang), back=None,
    )  # fmt: skip
    write_page(out, "trends.html", text)
    keys = recordstore.keys(out)
    changed_repos = dirty.repos()
    for name, days in repos.items():
        slug = safe_component(name)
        if dirty.full or slug in changed_repos or not (out / repo_page(name)).is_file():
            records = dirty.records(out, [k for k in keys if k.split("@", 1)[0] == slug])
            _write_repo(out, name, days, _commits(records, name, lang), lang)
    months = sorted({s.date[:7] for s in summaries}, reverse=True)
    changed_months = dirty.months()
    rewritten = False
    for month in months:
        if dirty.full or month in changed_months or not is_written(out, month):
            records = dirty.records(out, [k for k in keys if k.split("@", 1)[1] == month])
            _write_search(out, month, records, lang)
            rewritten = True
    if rewritten or changed_months or not (out / "search/index.js").is_file():
        _write_search_root(out, months, keys, dirty, lang)
    _write_search_page(out, summaries, lang)


def _chosen(records: list[DayRecord], lang: str) -> list[DayRecord]:
    """One record per (repositories, day): the site's language first."""
    seen: set[tuple[tuple[str, ...], str]] = set()
    chosen = []
    for r in sorted(records, key=lambda r: (r.lang != lang, r.lang, r.twin)):
        if (r.repos, r.date) not in seen:
            seen.add((r.repos, r.date))
            chosen.append(r)
    return chosen


def _commits(records: list[DayRecord], name: str, lang: str) -> dict[str, list[CommitRecord]]:
    """A repository's commits by day (each day once)."""
    days: dict[str, list[CommitRecord]] = {}
    for r in _chosen(records, lang):
        days.setdefault(r.date, []).extend(c for c in r.commits if c.repo == name)
    return days


def _write_search(out: Path, month: str, records: list[DayRecord], lang: str) -> None:
    docs = [Doc(r.page, r.date, c) for r in _chosen(records, lang) for c in r.commits]
    docs.sort(key=lambda doc: doc.date, reverse=True)
    write_segment(out, month, docs)


def _write_search_root(
    out: Path, months: list[str], keys: list[str], dirty: Dirty, lang: str
) -> None:
    """The archive's term shards; a month whose kept postings are damaged is written
    again from its records (once each), so the index never silently loses it."""
    redone: set[str] = set()
    while True:
        try:
            write_root(out, months)
            return
        except KeptDamaged as exc:
            if exc.segment in redone:
                raise
            redone.add(exc.segment)
            records = dirty.records(out, [k for k in keys if k.split("@", 1)[1] == exc.segment])
            _write_search(out, exc.segment, records, lang)


def _write_search_page(out: Path, summaries: list[DaySummary], lang: str) -> None:
    types = sorted({t for s in summaries for r in s.repos for t in r.types})
    areas = sorted({a for s in summaries for r in s.repos for a in r.areas})
    labels = sorted({a for s in summaries for r in s.repos for a in r.labels})
    text = render(
        "search.html.j2", "search.html", lang, title=word(lang, "search"), page_kind="search",
        facets=Facets(importance=list(IMPORTANCES), types=types, areas=areas, labels=labels),
        total=0, scope="search",
    )  # fmt: skip
    write_page(out, "search.html", text)


def _notable_rows(rows: list[tuple[str, str, CommitRecord]], page: str, lang: str) -> Markup:
    """The repository page's 🔴 and "affects your code" rows (formatted, not templated:
    a year has thousands)."""
    badges = {i: escape(badge(lang, i)) for i in IMPORTANCES}
    names: dict[str, str] = {}
    out = []
    for d, target, c in rows:
        if c.change_type not in names:
            names[c.change_type] = escape(type_name(lang, c.change_type))
        out.append(
            f'<tr data-commit data-importance="{c.importance}" data-type="{escape(c.change_type)}"'
            f' data-areas="{escape(_json(c.areas))}" data-labels="{escape(_json(c.labels))}"'
            f' data-affects="{1 if c.affects else 0}"><td>{d}</td>'
            f'<td><a href="{escape(_rel(target, page))}#{escape(c.anchor)}">{rich(c.title)}</a>'
            f"{' ⚠️' if c.affects else ''}</td><td>{badges[c.importance]}</td>"
            f"<td>{names[c.change_type]}</td><td><code>{escape(c.sha[:7])}</code></td></tr>"
        )
    return Markup("\n".join(out))


def _json(values: tuple[str, ...]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def _write_repo(
    out: Path, name: str, days: dict[str, RepoDay], commits: dict[str, list[CommitRecord]],
    lang: str,
) -> None:  # fmt: skip
    page = repo_page(name)
    history = [
        {"date": d, "commits": day.commits, "high": day.counts[0], "medium": day.counts[1],
         "low": day.counts[2], "affects": day.affects, "failed": day.failed,
         "pages": [(lg, _rel(p, page)) for lg, p in sorted(day.pages.items())]}
        for d, day in days.items()
    ]  # fmt: skip
    notable = [
        (d, days[d].page(lang), c)
        for d in days
        for c in commits.get(d, [])
        if c.importance == "high" or c.affects
    ]
    listed = [c for _, _, c in notable]
    facets = Facets(
        importance=[i for i in IMPORTANCES if any(c.importance == i for c in listed)],
        types=sorted({c.change_type for c in listed}),
        areas=sorted({a for c in listed for a in c.areas}),
        labels=sorted({a for c in listed for a in c.labels}),
    )
    text = render(
        "repo.html.j2", page, lang, title=name, page_kind="repo", name=name, history=history,
        rows=_notable_rows(notable, page, lang), facets=facets, total=len(notable), scope="repo",
        heat=_heat(days, page, lang), trends=_rel(repo_trends_page(name), page),
    )  # fmt: skip
    write_page(out, page, text)
    trends_page = repo_trends_page(name)
    text = render(
        "trends.html.j2", trends_page, lang, title=f"{name} · {word(lang, 'trends')}",
        page_kind="trends", heading=f"{name} · {word(lang, 'trends')}",
        blocks=_trend_blocks({name: days}, lang), back=_rel(page, trends_page),
    )  # fmt: skip
    write_page(out, trends_page, text)
