"""The page of one report: a twin turned into what ``day.html.j2`` shows.

Same content as the Markdown report, read from the twin: each repository's
commits table, statistics, "Affects your code", and one block per commit by
importance with its analysis. Every link passes :func:`~repoherald.site.links.safe_link`;
every text is escaped by the template (autoescape) after
:func:`~repoherald.site.text.line` cleaned it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from repoherald.i18n import CATALOGUES, CONSOLE_LANGUAGE, EMOJI, t
from repoherald.models import Importance
from repoherald.site.links import host_of, safe_link
from repoherald.site.records import IMPORTANCES, affected_shas
from repoherald.site.text import line

INSIGHT_KEYS = ("architecture", "performance", "security", "maintainability", "compatibility")


def catalogue_lang(lang: str) -> str:
    """``lang`` when the report catalogues know it, else the console's language."""
    return lang if lang in CATALOGUES else CONSOLE_LANGUAGE


def badge(lang: str, importance: str) -> str:
    """``🔴 High`` in ``lang``."""
    imp = Importance(importance) if importance in IMPORTANCES else Importance.LOW
    return f"{EMOJI[imp]} {t(catalogue_lang(lang), 'importance.' + imp.value)}"


def type_name(lang: str, change_type: str) -> str:
    """The change type's name in ``lang`` (the value itself when unknown)."""
    return CATALOGUES[catalogue_lang(lang)].get("type." + change_type, change_type)


@dataclass
class Facets:
    """The values a filter form offers: those present on the page."""

    importance: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    areas: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, commits: list[dict[str, Any]]) -> Facets:
        return cls(
            importance=[i for i in IMPORTANCES if any(c["importance"] == i for c in commits)],
            types=sorted({c["type"] for c in commits}),
            areas=sorted({a for c in commits for a in c["areas"]}),
            labels=sorted({a for c in commits for a in c["labels"]}),
        )


def _strings(value: Any) -> list[str]:
    return [line(v) for v in value or [] if line(v)]


def _commit(c: dict[str, Any], hosts: frozenset[str], affects: set[str]) -> dict[str, Any]:
    analysis = c.get("analysis") or {}
    facts = c.get("facts") or {}
    correction = c.get("correction") or None
    importance = str(analysis.get("importance") or "low")
    files = facts.get("files") or []
    return {
        "sha": line(c.get("sha")),
        "short_sha": line(c.get("short_sha") or str(c.get("sha") or "")[:7]),
        "title": line(c.get("title")),
        "author": line(c.get("author")),
        "co_authors": _strings(facts.get("co_authors")),
        "time": line(str(c.get("author_time") or "")[:19].replace("T", " ")),
        "url": safe_link(c.get("url"), hosts),
        "pr_number": c.get("pr_number") if isinstance(c.get("pr_number"), int) else None,
        "pr_url": safe_link(c.get("pr_url"), hosts),
        "labels": _strings(c.get("pr_labels")),
        "anchor": line(c.get("anchor")),
        "importance": importance if importance in IMPORTANCES else "low",
        "type": line(analysis.get("change_type") or "other"),
        "areas": _strings(facts.get("areas")),
        "files": len(files),
        "added": int(facts.get("added") or 0),
        "deleted": int(facts.get("deleted") or 0),
        "affects": line(c.get("sha")) in affects,
        "reasons": _strings(analysis.get("reasons")),
        "summary": line(analysis.get("summary")),
        "description": line(analysis.get("description")),
        "impact": _strings(analysis.get("impact")),
        "insights": {
            k: line(v) for k, v in (analysis.get("insights") or {}).items() if k in INSIGHT_KEYS
        },
        "risks": [
            {
                "risk": line(r.get("risk")),
                "detail": line(r.get("detail")),
                "mitigation": line(r.get("mitigation")),
            }
            for r in analysis.get("risks") or []
        ],
        "recommendations": _strings(analysis.get("recommendations")),
        "error": line(analysis.get("error")),
        "llm_error": line(analysis.get("llm_error")),
        "correction": (
            {"badge": line(correction.get("importance")), "reason": line(correction.get("reason"))}
            if isinstance(correction, dict)
            else None
        ),
        "related": [
            {
                "kind": line(r.get("kind")),
                "sha": line(r.get("sha"))[:7],
                "title": line(r.get("title")),
                "day": line(r.get("day")),
                "url": safe_link(r.get("url"), hosts),
            }
            for r in c.get("related") or []
        ],
    }


def _downstream(repo: dict[str, Any], hosts: frozenset[str]) -> list[dict[str, Any]]:
    downstream = repo.get("downstream") or {}
    items: list[dict[str, Any]] = []
    for p in downstream.get("projects") or []:
        for i in p.get("impacts") or []:
            items.append(
                {
                    "project": line(p.get("name")),
                    "kind": line(i.get("kind")),
                    "reason": line(i.get("reason")),
                    "upstream": line(i.get("upstream")),
                    "where": line(f"{i.get('path') or ''}:{i.get('line') or ''}"),
                    "url": safe_link(i.get("url"), hosts),
                    "commit_anchor": line(i.get("commit_anchor")),
                    "sha": line(i.get("sha"))[:7],
                }
            )
    for w in downstream.get("watch_hits") or []:
        items.append(
            {
                "project": line(w.get("glob")),
                "kind": "watch",
                "reason": ", ".join(_strings(w.get("paths"))),
                "upstream": "",
                "where": "",
                "url": None,
                "commit_anchor": line(w.get("commit_anchor")),
                "sha": line(w.get("sha"))[:7],
            }
        )
    return items


def day_context(twin: dict[str, Any]) -> dict[str, Any]:
    """What the day template needs (raises KeyError/TypeError/ValueError when damaged)."""
    sections = []
    every: list[dict[str, Any]] = []
    for repo in twin["repos"]:
        own = host_of(repo.get("web_url"))
        hosts = frozenset({own} if own else set())
        affects = affected_shas(repo)
        commits = [_commit(c, hosts, affects) for c in repo.get("commits") or []]
        every += commits
        stats = repo.get("stats") or {}
        sections.append(
            {
                "name": line(repo["name"]),
                "anchor": line(repo.get("anchor")),
                "branch": line(repo.get("branch")),
                "web_url": safe_link(repo.get("web_url"), hosts),
                "error": line(repo.get("error")),
                "notes": _strings(repo.get("notes")),
                "commits": commits,
                "groups": [
                    (imp, [c for c in commits if c["importance"] == imp]) for imp in IMPORTANCES
                ],
                "downstream": _downstream(repo, hosts),
                "stats": {
                    "commits": int(stats.get("commits") or len(commits)),
                    "files": int(stats.get("files_changed") or 0),
                    "added": int(stats.get("added") or 0),
                    "deleted": int(stats.get("deleted") or 0),
                },
            }
        )
    window = twin.get("window") or {}
    return {
        "date": line(twin["date"]),
        "tz": line(twin.get("tz")),
        "window": f"{line(window.get('start'))} – {line(window.get('end'))}",
        "analysers": ", ".join(_strings(twin.get("analysers"))),
        "tool_version": line(twin.get("tool_version")),
        "as_of": line(twin.get("as_of")),
        "sections": sections,
        "facets": Facets.of(every),
        "total": len(every),
    }
