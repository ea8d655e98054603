"""Render a :class:`DayReport` as Markdown, GitHub-flavoured.

The view model is built here, in document order, so that every heading's id
is computed by the same slugger GitHub uses and every internal link points
at an id that exists. The template only lays things out; all untrusted text
passes through :mod:`repoherald.render.escape` filters.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

import jinja2

from repoherald.i18n import EMOJI, importance_badge, importance_label, t, type_label
from repoherald.models import Analysis, DayReport, Entry, Importance, RepoSection
from repoherald.render import escape
from repoherald.render.slug import Slugger

INSIGHT_KEYS = ("architecture", "performance", "security", "maintainability", "compatibility")
GENERATED_PREFIX = {"zh": "> 生成时间：", "en": "> Generated: "}


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("repoherald", "render/templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    env.filters["inline"] = escape.inline
    env.filters["cell"] = escape.cell
    env.filters["rich"] = escape.rich
    env.filters["rich_cell"] = escape.rich_cell
    env.filters["code"] = escape.code
    return env


@dataclass
class _EntryView:
    a: Analysis
    title: str
    short: str
    url: str | None
    pr: int | None
    pr_url: str | None
    author: str
    co_authors: str
    time: str
    badge: str
    type_label: str
    level: str
    files: str
    areas: str
    reasons: str
    error: str
    notes: str
    llm_notes: list[str] = field(default_factory=list)
    anchor: str = ""


@dataclass
class _GroupView:
    title: str
    entries: list[_EntryView]
    anchor: str = ""


@dataclass
class _StatsView:
    line: str
    lines: str
    types: str
    areas: str


@dataclass
class _SectionView:
    name: str
    branch: str
    error: str | None
    entries: list[_EntryView]
    groups: list[_GroupView] = field(default_factory=list)
    stats: _StatsView | None = None
    anchor: str = ""
    stats_anchor: str = ""


def local_time(ts: int, tz: ZoneInfo) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC).astimezone(tz)


def display_title(entry: Entry, lang: str) -> str:
    title = escape.clean(entry.commit.title)
    return title or t(lang, "empty_message")


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")


def scrub(text: str) -> str:
    """Addresses never reach a report, wherever they hide."""
    return _EMAIL.sub("<email>", text) if "@" in text else text


def _entry_view(e: Entry, section: RepoSection, lang: str, tz: ZoneInfo) -> _EntryView:
    c, f, a = e.commit, e.facts, e.analysis
    web = section.web_url
    notes = []
    if c.decode_errors:
        notes.append(t(lang, "decode_warning"))
    if f.is_merge:
        notes.append(t(lang, "merge_note"))
    sep = "；" if lang == "zh" else "; "
    return _EntryView(
        a=a,
        title=scrub(display_title(e, lang)),
        short=c.sha[:7],
        url=escape.url(f"{web}/commit/{c.sha}") if web else None,
        pr=f.pr_number,
        pr_url=escape.url(f"{web}/pull/{f.pr_number}") if web and f.pr_number is not None else None,
        author=scrub(c.author.name),
        co_authors=scrub(", ".join(f.co_authors)),
        time=local_time(c.author_time, tz).strftime("%Y-%m-%d %H:%M:%S"),
        badge=importance_badge(lang, a.importance),
        type_label=type_label(lang, a.change_type),
        level=a.importance.value,
        files=t(lang, "files_fmt", files=f.files_changed, added=f.added, deleted=f.deleted),
        areas=", ".join(f"`{x}`" for x in f.areas[:5])
        + (f" (+{len(f.areas) - 5})" if len(f.areas) > 5 else ""),
        reasons=scrub(sep.join(a.reasons)),
        error=scrub(a.error),
        notes=" ".join(notes),
        llm_notes=_llm_notes(a, lang),
    )


def _llm_notes(a: Analysis, lang: str) -> list[str]:
    """What a reader must know about the model's part in this commit's analysis."""
    notes = []
    if a.llm_error:
        notes.append("⚠️ " + t(lang, "llm_failed", error=scrub(a.llm_error)))
    if a.rule_verdict:
        notes.append("ℹ️ " + t(lang, "rule_verdict", verdict=a.rule_verdict))
    if a.unverified:
        items = "; ".join(scrub(u) for u in a.unverified[:5])
        more = f" (+{len(a.unverified) - 5})" if len(a.unverified) > 5 else ""
        notes.append("🔎 " + t(lang, "unverified", n=len(a.unverified), items=items + more))
    if a.unseen_files:
        files = ", ".join(scrub(u) for u in a.unseen_files[:6])
        more = f" (+{len(a.unseen_files) - 6})" if len(a.unseen_files) > 6 else ""
        notes.append("👁️ " + t(lang, "unseen", files=files + more))
    return notes


def _stats(section: RepoSection, lang: str) -> _StatsView:
    entries = section.entries
    counts = Counter(e.analysis.importance for e in entries)
    types = Counter(e.analysis.change_type for e in entries)
    areas: Counter[str] = Counter()
    for e in entries:
        areas.update(e.facts.areas)
    sep = "、" if lang == "zh" else ", "
    return _StatsView(
        line=t(
            lang,
            "stats_line",
            n=len(entries),
            h=counts[Importance.HIGH],
            m=counts[Importance.MEDIUM],
            l=counts[Importance.LOW],
        ),
        lines=t(
            lang,
            "stats_lines",
            files=sum(e.facts.files_changed for e in entries),
            added=sum(e.facts.added for e in entries),
            deleted=sum(e.facts.deleted for e in entries),
            authors=len({e.commit.author.name for e in entries}),
        ),
        types=sep.join(
            f"{type_label(lang, ct)} {n}"
            for ct, n in sorted(types.items(), key=lambda kv: (-kv[1], kv[0].value))
        ),
        areas=sep.join(
            f"`{a}` {n}" for a, n in sorted(areas.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        ),
    )


def build_view(report: DayReport) -> dict[str, Any]:
    """The template's input, with heading ids assigned in document order."""
    lang = report.lang
    tz = ZoneInfo(report.tz_name)
    slugger = Slugger()
    slugger.slug(escape.plain_heading_text(t(lang, "title", date=report.day.isoformat())))
    sections: list[_SectionView] = []
    for s in report.sections:
        views = [_entry_view(e, s, lang, tz) for e in s.entries]
        sv = _SectionView(name=s.name, branch=s.branch, error=s.error, entries=views)
        sv.anchor = slugger.slug(escape.plain_heading_text(s.name))
        if views and not s.error:
            sv.stats = _stats(s, lang)
            sv.stats_anchor = slugger.slug(escape.plain_heading_text(t(lang, "stats")))
            for imp in (Importance.HIGH, Importance.MEDIUM, Importance.LOW):
                members = [v for v in views if v.a.importance is imp]
                if not members:
                    continue
                title = t(
                    lang,
                    "group",
                    emoji=EMOJI[imp],
                    label=importance_label(lang, imp),
                    count=len(members),
                )
                g = _GroupView(title=title, entries=members)
                g.anchor = slugger.slug(escape.plain_heading_text(title))
                for v in members:
                    v.anchor = slugger.slug(escape.plain_heading_text(v.title))
                sv.groups.append(g)
        sections.append(sv)
    start = report.start.astimezone(tz)
    end = report.end.astimezone(tz)
    window = (
        f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} ({report.tz_name}, UTC{_offset(start)})"
    )
    analysers = ", ".join(report.analysers) or "rules"
    analysed_by = (
        t(lang, "rules_only", analyser=analysers)
        if all(a.startswith("rules/") for a in report.analysers)
        else t(lang, "llm_by", analysers=analysers)
    )
    by_model = [e.analysis for e in report.entries if e.analysis.analyser.startswith("llm/")]
    spent = [e.analysis.usage for e in report.entries]
    usage_line = (
        t(
            lang,
            "llm_usage",
            n=len(by_model),
            prompt=sum(u[0] for u in spent),
            completion=sum(u[1] for u in spent),
        )
        if any(not a.startswith("rules/") for a in report.analysers)
        else ""
    )
    return {
        "r": report,
        "sections": sections,
        "window": escape.inline(window),
        "analysed_by": escape.inline(analysed_by),
        "generated_line": generated_line(report),
        "usage_line": usage_line,
        "insight_keys": INSIGHT_KEYS,
    }


def _offset(dt: datetime) -> str:
    off = dt.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def generated_line(report: DayReport) -> str:
    """The one line that differs between two runs of the same day."""
    tz = ZoneInfo(report.tz_name)
    local = report.generated_at.astimezone(tz)
    return f"{GENERATED_PREFIX[report.lang]}{local:%Y-%m-%d %H:%M:%S} (UTC{_offset(local)})"


def render_markdown(report: DayReport, view: dict[str, Any] | None = None) -> str:
    """The report as GitHub-flavoured Markdown (UTF-8 text, LF line ends)."""
    view = view if view is not None else build_view(report)
    lang = report.lang

    def tr(key: str, **kw: Any) -> str:
        return t(lang, key, **kw)

    text = _env().get_template("report.md.j2").render(t=tr, **view)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.rstrip("\n") + "\n"
