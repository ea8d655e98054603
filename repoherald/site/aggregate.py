"""The pages over many days: home, one page per repository, trends, search.

They are written on every build from the day records alone (no twin is
read), so a new day costs one day page plus these. A repository-day
reported in two languages counts once: the record in the site's language
is preferred, else the first language.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from repoherald.site.daypage import Facets, type_name
from repoherald.site.heatmap import DayCount, heatmap
from repoherald.site.pages import render, write_page
from repoherald.site.records import CommitRecord, DayRecord
from repoherald.site.searchindex import Doc, write_index
from repoherald.site.slugs import repo_page, repo_trends_page
from repoherald.site.trends import charts, svg, table
from repoherald.site.twins import TwinProblem
from repoherald.site.words import word

RECENT = 7
"""Days per repository on the home page."""


@dataclass
class RepoDay:
    """One repository on one day: its commits (once) and its page in each language."""

    date: str
    commits: list[CommitRecord] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)
    """Language -> day page (relative to the site root)."""
    failed: str = ""

    def count(self, importance: str) -> int:
        return sum(c.importance == importance for c in self.commits)

    @property
    def affects(self) -> int:
        return sum(c.affects for c in self.commits)


def _by_repo(records: list[DayRecord], lang: str) -> dict[str, dict[str, RepoDay]]:
    """Repository -> date -> :class:`RepoDay`, the preferred language's commits."""
    repos: dict[str, dict[str, RepoDay]] = defaultdict(dict)
    chosen: dict[tuple[str, str], str] = {}
    ordered = sorted(records, key=lambda r: (r.lang != lang, r.lang, r.twin))
    for r in ordered:
        for name in r.repos:
            day = repos[name].setdefault(r.date, RepoDay(r.date))
            day.pages.setdefault(r.lang, r.page)
            if (name, r.date) in chosen:
                continue
            chosen[(name, r.date)] = r.twin
            day.commits = [c for c in r.commits if c.repo == name]
            day.failed = next((e for n, e in r.failed if n == name), "")
    return {name: dict(sorted(days.items(), reverse=True)) for name, days in sorted(repos.items())}


def _rel(target: str, page: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


def _heat(days: dict[str, RepoDay], page: str | None, lang: str) -> object:
    counts: dict[date, DayCount] = {}
    for d, day in days.items():
        href = None
        if page is not None and day.pages:
            target = day.pages.get(lang) or next(iter(day.pages.values()))
            href = _rel(target, page)
        counts[date.fromisoformat(d)] = DayCount(len(day.commits), day.count("high"), href)
    return heatmap(counts, word(lang, "heatmap"))


def _trend_blocks(days: dict[str, dict[str, RepoDay]], lang: str) -> list[dict[str, object]]:
    pairs = [
        (date.fromisoformat(d), c)
        for repo in days.values()
        for d, day in repo.items()
        for c in day.commits
    ]
    titles = {
        "types": word(lang, "per_week_type"),
        "high": word(lang, "per_week_high"),
        "affects": word(lang, "per_week_affects"),
    }
    found = charts(pairs, titles, lambda ty: type_name(lang, ty), word(lang, "other"))
    return [
        {"key": ch.key, "title": ch.title, "svg": svg(ch), "table": table(ch, word(lang, "week"))}
        for ch in found
    ]


def write_aggregates(
    out: Path, records: list[DayRecord], problems: tuple[TwinProblem, ...], lang: str
) -> None:
    """Write home, repository, trends and search pages and the search index."""
    repos = _by_repo(records, lang)
    home = []
    for name, days in repos.items():
        recent = [
            {
                "date": d,
                "commits": len(day.commits),
                "high": day.count("high"),
                "affects": day.affects,
                "failed": day.failed,
                "pages": sorted((lg, p) for lg, p in day.pages.items()),
            }
            for d, day in list(days.items())[:RECENT]
        ]
        home.append(
            {
                "name": name,
                "href": repo_page(name),
                "trends": repo_trends_page(name),
                "days": len(days),
                "recent": recent,
                "high": sum(day.count("high") for day in days.values()),
            }
        )
    text = render(
        "home.html.j2",
        "index.html",
        lang,
        title=word(lang, "site_title"),
        page_kind="home",
        repos=home,
        problems=problems,
        heat=_heat(_all_days(repos), None, lang),
    )
    write_page(out, "index.html", text)
    for name, days in repos.items():
        _write_repo(out, name, days, lang)
    text = render(
        "trends.html.j2",
        "trends.html",
        lang,
        title=word(lang, "trends_all"),
        page_kind="trends",
        heading=word(lang, "trends_all"),
        blocks=_trend_blocks(repos, lang),
        back=None,
    )
    write_page(out, "trends.html", text)
    docs = [
        Doc(f"{day.pages.get(lang) or next(iter(day.pages.values()))}#{c.anchor}", d, c)
        for days in repos.values()
        for d, day in days.items()
        for c in day.commits
    ]
    docs.sort(key=lambda doc: doc.date, reverse=True)
    write_index(out, docs)
    text = render(
        "search.html.j2",
        "search.html",
        lang,
        title=word(lang, "search"),
        page_kind="search",
        facets=Facets(
            importance=["high", "medium", "low"],
            types=sorted({d.commit.change_type for d in docs}),
            areas=sorted({a for d in docs for a in d.commit.areas}),
            labels=sorted({a for d in docs for a in d.commit.labels}),
        ),
        total=len(docs),
        scope="search",
    )
    write_page(out, "search.html", text)


def _all_days(repos: dict[str, dict[str, RepoDay]]) -> dict[str, RepoDay]:
    """Every repository's commits by date (for the home page's heat-map)."""
    merged: dict[str, RepoDay] = {}
    for days in repos.values():
        for d, day in days.items():
            merged.setdefault(d, RepoDay(d)).commits.extend(day.commits)
    return merged


def _write_repo(out: Path, name: str, days: dict[str, RepoDay], lang: str) -> None:
    page = repo_page(name)
    history = [
        {
            "date": d,
            "commits": len(day.commits),
            "high": day.count("high"),
            "medium": day.count("medium"),
            "low": day.count("low"),
            "affects": day.affects,
            "failed": day.failed,
            "pages": [(lg, _rel(p, page)) for lg, p in sorted(day.pages.items())],
        }
        for d, day in days.items()
    ]
    notable = [
        {
            "date": d,
            "c": c,
            "href": _rel(day.pages.get(lang) or next(iter(day.pages.values())), page)
            + "#"
            + c.anchor,
        }
        for d, day in days.items()
        for c in day.commits
        if c.importance == "high" or c.affects
    ]
    listed = [
        c for day in days.values() for c in day.commits if c.importance == "high" or c.affects
    ]
    facets = Facets(
        importance=[i for i in ("high", "medium", "low") if any(c.importance == i for c in listed)],
        types=sorted({c.change_type for c in listed}),
        areas=sorted({a for c in listed for a in c.areas}),
        labels=sorted({a for c in listed for a in c.labels}),
    )
    text = render(
        "repo.html.j2",
        page,
        lang,
        title=name,
        page_kind="repo",
        name=name,
        history=history,
        notable=notable,
        facets=facets,
        total=len(notable),
        scope="repo",
        heat=_heat(days, page, lang),
        trends=_rel(repo_trends_page(name), page),
    )
    write_page(out, page, text)
    trends_page = repo_trends_page(name)
    text = render(
        "trends.html.j2",
        trends_page,
        lang,
        title=f"{name} · {word(lang, 'trends')}",
        page_kind="trends",
        heading=f"{name} · {word(lang, 'trends')}",
        blocks=_trend_blocks({name: days}, lang),
        back=_rel(page, trends_page),
    )
    write_page(out, trends_page, text)
