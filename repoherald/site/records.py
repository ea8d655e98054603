"""What the aggregate pages need of one twin, kept so an unchanged twin is never parsed again.

Two sizes: a :class:`DayRecord` has every commit (titles, search terms) and
is kept in the record store (:mod:`repoherald.site.recordstore`), read only
for the repositories and months a build changed; a :class:`DaySummary` has
the numbers of each repository-day (counts, types, areas) and is kept in
the manifest, read on every build for the home page and the trends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from repoherald.i18n import DEFAULT_LANGUAGE
from repoherald.render.escape import clean
from repoherald.site.terms import commit_terms

IMPORTANCES = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """One commit as the aggregates and the search index see it."""

    repo: str
    sha: str
    title: str
    author: str
    importance: str
    change_type: str
    areas: tuple[str, ...]
    labels: tuple[str, ...]
    affects: bool
    """It breaks, changes or touches the reader's own code (\"Affects your code\")."""
    anchor: str
    terms: str
    """The words search finds it by (:mod:`repoherald.site.terms`), space-separated: from
    the title, author, summary, reasons, API names, areas, labels and SHA."""

    def to_json(self) -> list[Any]:
        return [
            self.repo,
            self.sha,
            self.title,
            self.author,
            self.importance,
            self.change_type,
            list(self.areas),
            list(self.labels),
            int(self.affects),
            self.anchor,
            self.terms,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> CommitRecord:
        return cls(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            tuple(row[6]),
            tuple(row[7]),
            bool(row[8]),
            row[9],
            row[10],
        )


@dataclass(frozen=True, slots=True)
class DayRecord:
    """One twin: its page, day, language, repositories, counts, failures and commits."""

    twin: str
    page: str
    date: str
    lang: str
    repos: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    """(repository, error) of each repository the report could not read."""
    commits: tuple[CommitRecord, ...]

    def count(self, importance: str) -> int:
        return sum(c.importance == importance for c in self.commits)

    def to_json(self) -> dict[str, Any]:
        return {
            "twin": self.twin,
            "page": self.page,
            "date": self.date,
            "lang": self.lang,
            "repos": list(self.repos),
            "failed": [list(f) for f in self.failed],
            "commits": [c.to_json() for c in self.commits],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DayRecord:
        return cls(
            data["twin"],
            data["page"],
            data["date"],
            data["lang"],
            tuple(data["repos"]),
            tuple((str(a), str(b)) for a, b in data["failed"]),
            tuple(CommitRecord.from_json(r) for r in data["commits"]),
        )


def affected_shas(repo: dict[str, Any]) -> set[str]:
    """SHAs listed under "Affects your code" in one repository section of a twin."""
    downstream = repo.get("downstream") or {}
    shas = {
        str(i.get("sha"))
        for p in downstream.get("projects") or []
        for i in p.get("impacts") or []
        if i.get("sha")
    }
    shas |= {str(w.get("sha")) for w in downstream.get("watch_hits") or [] if w.get("sha")}
    return shas


def _search_text(commit: dict[str, Any]) -> str:
    analysis = commit.get("analysis") or {}
    facts = commit.get("facts") or {}
    parts = [str(analysis.get("summary") or "")]
    parts += [str(r) for r in analysis.get("reasons") or []]
    parts += [str(a.get("name") or "") for a in facts.get("api_changes") or []]
    return clean(" ".join(p for p in parts if p))


def day_record(rel: str, page: str, twin: dict[str, Any]) -> DayRecord:
    """The record of a parsed twin (raises KeyError/TypeError/ValueError when damaged)."""
    commits: list[CommitRecord] = []
    failed: list[tuple[str, str]] = []
    names: list[str] = []
    for repo in twin["repos"]:
        name = clean(str(repo["name"]))
        names.append(name)
        if repo.get("error"):
            failed.append((name, clean(str(repo["error"]))))
        affects = affected_shas(repo)
        for c in repo.get("commits") or []:
            analysis = c.get("analysis") or {}
            facts = c.get("facts") or {}
            importance = str(analysis.get("importance") or "low")
            title = clean(str(c.get("title") or ""))
            author = clean(str(c.get("author") or ""))
            areas = tuple(clean(str(a)) for a in facts.get("areas") or ())
            labels = tuple(clean(str(a)) for a in c.get("pr_labels") or ())
            commits.append(
                CommitRecord(
                    repo=name,
                    sha=str(c["sha"]),
                    title=title,
                    author=author,
                    importance=importance if importance in IMPORTANCES else "low",
                    change_type=str(analysis.get("change_type") or "other"),
                    areas=areas,
                    labels=labels,
                    affects=str(c["sha"]) in affects,
                    anchor=str(c.get("anchor") or ""),
                    terms=commit_terms(
                        str(c["sha"]), title, author, name, _search_text(c), *areas, *labels
                    ),
                )
            )
    return DayRecord(
        twin=rel,
        page=page,
        date=str(twin["date"]),
        lang=str(twin.get("lang") or DEFAULT_LANGUAGE),
        repos=tuple(names),
        failed=tuple(failed),
        commits=tuple(commits),
    )


@dataclass(frozen=True, slots=True)
class RepoDaySummary:
    """The numbers of one repository on one day (home page, history, trends)."""

    name: str
    failed: str
    counts: tuple[int, int, int]
    """Commits that are high, medium, low."""
    affects: int
    types: dict[str, int]
    high_areas: dict[str, int]
    """🔴 commits by their first area ("" when they have none)."""
    areas: tuple[str, ...] = ()
    """Every area and PR label of the day: what the search page's filters offer."""
    labels: tuple[str, ...] = ()

    def to_json(self) -> list[Any]:
        return [
            self.name, self.failed, list(self.counts), self.affects, self.types, self.high_areas,
            list(self.areas), list(self.labels),
        ]  # fmt: skip

    @classmethod
    def from_json(cls, row: list[Any]) -> RepoDaySummary:
        counts = tuple(int(n) for n in row[2])
        return cls(
            row[0], row[1], (counts[0], counts[1], counts[2]), int(row[3]), row[4], row[5],
            tuple(row[6]), tuple(row[7]),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class DaySummary:
    """One twin's page, day, language and the numbers of each of its repositories."""

    twin: str
    page: str
    date: str
    lang: str
    repos: tuple[RepoDaySummary, ...]

    def to_json(self) -> list[Any]:
        return [self.twin, self.page, self.date, self.lang, [r.to_json() for r in self.repos]]

    @classmethod
    def from_json(cls, row: list[Any]) -> DaySummary:
        return cls(
            row[0], row[1], row[2], row[3], tuple(RepoDaySummary.from_json(r) for r in row[4])
        )


def summarize(record: DayRecord) -> DaySummary:
    """The summary of a record."""
    repos = []
    for name in record.repos:
        commits = [c for c in record.commits if c.repo == name]
        types: dict[str, int] = {}
        areas: dict[str, int] = {}
        for c in commits:
            types[c.change_type] = types.get(c.change_type, 0) + 1
            if c.importance == "high":
                area = c.areas[0] if c.areas else ""
                areas[area] = areas.get(area, 0) + 1
        counts = tuple(sum(c.importance == i for c in commits) for i in IMPORTANCES)
        repos.append(
            RepoDaySummary(
                name=name,
                failed=next((e for n, e in record.failed if n == name), ""),
                counts=(counts[0], counts[1], counts[2]),
                affects=sum(c.affects for c in commits),
                types=types,
                high_areas=areas,
                areas=tuple(sorted({a for c in commits for a in c.areas})),
                labels=tuple(sorted({a for c in commits for a in c.labels})),
            )
        )
    return DaySummary(record.twin, record.page, record.date, record.lang, tuple(repos))
