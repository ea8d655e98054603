"""The typed report view: what every renderer shows, built once per report.

:func:`build_view` turns a :class:`~repoherald.models.DayReport` into frozen
dataclasses in the report's language: every message localised, every
address hidden, counts and groups computed, links and anchors assigned. The
Markdown report, its JSON twin and any later renderer (chat, e-mail, HTML)
read this and only this, so they cannot disagree.

Text in the view is plain text, except that backticks mark code (the
convention of the rules' messages); each renderer escapes it its own way.
Anchors are the ids GitHub gives the Markdown report's headings, assigned
in document order by the same slugger, so every link to them resolves.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from repoherald.emails import hide_emails
from repoherald.i18n import (
    CATALOGUES,
    EMOJI,
    importance_badge,
    importance_label,
    localise,
    t,
    type_label,
)
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    Correction,
    DayReport,
    Entry,
    Facts,
    Importance,
    Message,
    Related,
    RepoSection,
    Text,
    representable,
)
from repoherald.render import escape
from repoherald.render.affects import AffectsView, CommitRef, build_affects
from repoherald.render.slug import Slugger


@dataclass(frozen=True, slots=True)
class RiskView:
    risk: str
    detail: str
    mitigation: str


@dataclass(frozen=True, slots=True)
class AnalysisView:
    """An analysis in the report's language: the fields of Analysis, same order, as text."""

    analyser: str
    change_type: ChangeType
    importance: Importance
    reasons: tuple[str, ...]
    summary: str
    impact: tuple[str, ...]
    insights: dict[str, str]
    risks: tuple[RiskView, ...]
    recommendations: tuple[str, ...]
    description: str
    error: str
    llm_error: str
    usage: tuple[int, int]
    unverified: tuple[str, ...]
    unseen_files: tuple[str, ...]
    rule_verdict: str


@dataclass(frozen=True, slots=True)
class CorrectionView:
    """A reader's correction, shown beside the tool's verdict, never instead of it."""

    importance: Importance
    change_type: ChangeType | None
    badge: str
    """``🔴 高``, as the tool's verdict is shown."""
    text: str
    """The whole correction as one phrase: verdict, reason, date."""
    reason: str
    marked_at: str


@dataclass(frozen=True, slots=True)
class RelatedView:
    """Another commit linked to this one (a revert, a re-land, a fix, a follow-up)."""

    kind: str
    """From this commit's side: ``reverts``, ``reverted_by``, ``relands``… (see
    :class:`repoherald.models.Related`)."""
    sha: str
    short_sha: str
    title: str
    """The other commit's title: one clean line, addresses hidden (untrusted text)."""
    day: str
    """Its report day, YYYY-MM-DD."""
    url: str | None
    """Its web page, when the repository's is known."""
    text: str
    """The whole link as plain text, in the report's language."""


@dataclass(frozen=True, slots=True)
class CommitView:
    """One commit as the report shows it."""

    sha: str
    short_sha: str
    title: str
    """The first line of the message (or a placeholder), addresses hidden."""
    author: str
    co_authors: str
    """Co-author names, comma-separated."""
    author_time: datetime
    """In the report's time zone, as is ``commit_time``."""
    commit_time: datetime
    url: str | None
    pr_number: int | None
    pr_url: str | None
    pr_labels: tuple[str, ...]
    """The pull request's labels (untrusted text, one clean line each)."""
    anchor: str
    decode_errors: bool
    patches_withheld: tuple[str, ...]
    """Paths whose patch the source did not send (GitHub withholds large ones)."""
    files_truncated: bool
    """The source listed only part of the commit's files (GitHub stops at 3,000)."""
    change_type: ChangeType
    importance: Importance
    type_label: str
    badge: str
    """``🔴 高``: the importance's emoji and word."""
    files: str
    """Files and lines changed, as a phrase."""
    areas: str
    """The first five areas as code spans, then ``(+n)``."""
    reasons: str
    """Why this type and importance: the reasons as one sentence list."""
    error: str
    """Why this commit could not be analysed (empty when it was)."""
    notes: tuple[str, ...]
    """What a reader must know about the commit itself (undecodable bytes, a merge)."""
    llm_notes: tuple[str, ...]
    """What a reader must know about the model's part in the analysis."""
    analysis: AnalysisView
    facts: Facts
    correction: CorrectionView | None = None
    related: tuple[RelatedView, ...] = ()
    """Commits this one reverts, re-lands, fixes or follows up, and those that did so to it."""

    @property
    def time(self) -> str:
        return self.author_time.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True, slots=True)
class GroupView:
    """The commits of one importance, in first-parent order."""

    importance: Importance
    title: str
    anchor: str
    commits: tuple[CommitView, ...]


@dataclass(frozen=True, slots=True)
class StatsView:
    """A repository's numbers for the day, and the same as sentences."""

    commits: int
    importance: dict[Importance, int]
    """Commits per importance, high first (every level present)."""
    files_changed: int
    added: int
    deleted: int
    authors: int
    line: str
    lines: str
    types: str
    areas: str


@dataclass(frozen=True, slots=True)
class SectionView:
    """One repository's part of the report."""

    name: str
    branch: str
    web_url: str | None
    error: str | None
    notes: tuple[str, ...]
    """Remarks on how the repository was read (a stale local clone)."""
    anchor: str
    stats: StatsView
    stats_anchor: str
    """Empty when the section has no statistics heading (no commits, or an error)."""
    commits: tuple[CommitView, ...]
    """First-parent order, newest first."""
    groups: tuple[GroupView, ...]
    """Non-empty importance groups, high first."""
    identity: str = ""
    """What was read (``source_id`` in the JSON twin; see :class:`RepoSection`)."""
    affects: AffectsView | None = None
    """"Affects your code", when the repository has downstream checkouts or watch globs."""
    stale_since: str | None = None
    """The date of the newest commit when the local clone looks stale (the digest says so)."""


@dataclass(frozen=True, slots=True)
class UsageView:
    commits: int
    """Commits whose analysis is the model's."""
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class JudgementView:
    """Who judged the importance of the report's commits: the rules alone, or a model too.

    A reader must not take a rules-only 🔴 for a model's; a model configured
    but down, or out of budget, leaves a report judged by rules alone.
    """

    commits: int
    by_model: int
    """Commits whose shown analysis is a model's."""
    models: tuple[str, ...]
    """The models that judged them (one, unless cached analyses of another are read)."""

    @property
    def rules_only(self) -> bool:
        return self.by_model == 0


@dataclass(frozen=True, slots=True)
class ReportView:
    """A day's report in one language: everything any renderer needs."""

    lang: str
    day: date
    tz_name: str
    start: datetime
    end: datetime
    title: str
    window: str
    """The window as a phrase: local start and end, the zone and its UTC offset."""
    analysers: tuple[str, ...]
    analysed_by: str
    """The header's phrase: rules alone, or how many commits which model judged."""
    judged: JudgementView
    version: str
    generated_at: datetime
    """In the report's time zone."""
    generated: str
    """The one phrase that differs between two runs of the same day."""
    sections: tuple[SectionView, ...]
    usage: UsageView
    usage_line: str
    """The LLM usage sentence; empty when no model took part."""
    as_of: datetime | None = None
    """Set when the day is still running: the report covers commits up to this time."""
    partial: str = ""
    """The sentence that says so; empty for a finished day."""

    @property
    def commits(self) -> list[CommitView]:
        return [c for s in self.sections for c in s.commits]


def generated_text(lang: str, generated_at: datetime) -> str:
    """When a report was made, as its page says it (``generated_at`` in the report's zone).

    The content hash finds this text from the twin's ``generated_at`` to leave it out.
    """
    time = f"{generated_at:%Y-%m-%d %H:%M:%S} (UTC{utc_offset(generated_at)})"
    return t(lang, "generated_at", time=time)


def build_view(report: DayReport) -> ReportView:
    """The view of ``report`` in ``report.lang``, with heading ids in document order."""
    lang = report.lang
    tz = ZoneInfo(report.tz_name)
    slugger = Slugger()
    title = t(lang, "title", date=report.day.isoformat())
    slugger.slug(escape.plain_heading_text(title))
    sections = tuple(_section(s, lang, tz, slugger) for s in report.sections)
    start = report.start.astimezone(tz)
    end = report.end.astimezone(tz)
    generated_at = report.generated_at.astimezone(tz)
    analysers = ", ".join(report.analysers) or "rules"
    uses_llm = any(not a.startswith("rules/") for a in report.analysers)
    entries = report.entries
    judged = _judgement(entries)
    analysed_by = (
        t(
            lang, "llm_by", analysers=analysers, n=judged.by_model, total=judged.commits,
            model=", ".join(judged.models),
        )
        if judged.by_model
        else t(lang, "rules_only", analyser=analysers)
    )  # fmt: skip
    fell_back = sum(1 for e in entries if e.analysis.llm_error)
    if fell_back:
        analysed_by += t(lang, "llm.fell_back", n=fell_back)
    usage = UsageView(
        commits=sum(1 for e in entries if e.analysis.analyser.startswith("llm/")),
        prompt_tokens=sum(e.analysis.usage[0] for e in entries),
        completion_tokens=sum(e.analysis.usage[1] for e in entries),
    )
    return ReportView(
        lang=lang,
        day=report.day,
        tz_name=report.tz_name,
        start=report.start,
        end=report.end,
        title=title,
        window=f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M}"
        f" ({report.tz_name}, UTC{utc_offset(start)})",
        analysers=report.analysers,
        analysed_by=analysed_by,
        judged=judged,
        version=report.version,
        generated_at=generated_at,
        generated=generated_text(lang, generated_at),
        sections=sections,
        usage=usage,
        usage_line=t(
            lang,
            "llm_usage",
            n=usage.commits,
            prompt=usage.prompt_tokens,
            completion=usage.completion_tokens,
        )
        if uses_llm
        else "",
        as_of=report.as_of.astimezone(tz) if report.as_of else None,
        partial=t(lang, "partial_day", time=f"{report.as_of.astimezone(tz):%H:%M}")
        if report.as_of
        else "",
    )


def _judgement(entries: list[Entry]) -> JudgementView:
    models = [_model_of(e.analysis.analyser) for e in entries]
    named = tuple(dict.fromkeys(m for m in models if m))
    return JudgementView(len(entries), sum(1 for m in models if m), named)


def _model_of(analyser: str) -> str:
    """``llm/<model>/<prompt version>/<lang>`` -> the model (which may contain ``/``); else ""."""
    if not analyser.startswith("llm/"):
        return ""
    return analyser.removeprefix("llm/").rsplit("/", 2)[0]


def utc_offset(dt: datetime) -> str:
    """``+08:00``: the UTC offset of an aware datetime."""
    off = dt.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def local_time(ts: int, tz: ZoneInfo) -> datetime:
    """Seconds since the epoch as an aware datetime in the report's zone."""
    return datetime.fromtimestamp(representable(ts), tz=UTC).astimezone(tz)


def display_title(commit: Commit, lang: str) -> str:
    """The title as shown: one clean line, addresses hidden, never empty."""
    return hide_emails(escape.clean(commit.title) or t(lang, "empty_message"))


# -- sections --------------------------------------------------------------------


def _section(s: RepoSection, lang: str, tz: ZoneInfo, slugger: Slugger) -> SectionView:
    anchor = slugger.slug(escape.plain_heading_text(s.name))
    check = s.downstream if s.error is None else None
    affects_anchor = slugger.slug(escape.plain_heading_text(t(lang, "ds.title"))) if check else ""
    titles = [display_title(e.commit, lang) for e in s.entries]
    anchors = [""] * len(s.entries)
    stats_anchor = ""
    plan: list[tuple[Importance, str, str, list[int]]] = []
    if s.entries and not s.error:
        stats_anchor = slugger.slug(escape.plain_heading_text(t(lang, "stats")))
        for imp in Importance:
            members = [i for i, e in enumerate(s.entries) if e.analysis.importance is imp]
            if not members:
                continue
            title = t(
                lang,
                "group",
                emoji=EMOJI[imp],
                label=importance_label(lang, imp),
                count=len(members),
            )
            group_anchor = slugger.slug(escape.plain_heading_text(title))
            for i in members:
                anchors[i] = slugger.slug(escape.plain_heading_text(titles[i]))
            plan.append((imp, title, group_anchor, members))
    commits = tuple(
        _commit(e, s.web_url, lang, tz, titles[i], anchors[i]) for i, e in enumerate(s.entries)
    )
    affects = None
    if check is not None:
        refs = [CommitRef(c.sha, c.short_sha, c.title, c.anchor) for c in commits]
        affects = build_affects(check, s.entries, refs, lang, affects_anchor)
    return SectionView(
        name=s.name,
        branch=s.branch,
        web_url=escape.url(s.web_url) if s.web_url else None,
        error=s.error,
        notes=tuple(localise(lang, n) for n in s.notes),
        identity=s.identity,
        anchor=anchor,
        stats=_stats(s.entries, lang),
        stats_anchor=stats_anchor,
        commits=commits,
        groups=tuple(
            GroupView(imp, title, group_anchor, tuple(commits[i] for i in members))
            for imp, title, group_anchor, members in plan
        ),
        affects=affects,
        stale_since=_stale_since(s.notes),
    )


def _stale_since(notes: tuple[Message, ...]) -> str | None:
    """The newest commit's date of a stale-clone note, if the section has one."""
    for n in notes:
        if isinstance(n, Text) and n.code == "stale_clone":
            return str(n.args.get("date", ""))
    return None


def _stats(entries: tuple[Entry, ...], lang: str) -> StatsView:
    counts = Counter(e.analysis.importance for e in entries)
    types = Counter(e.analysis.change_type for e in entries)
    areas: Counter[str] = Counter()
    for e in entries:
        areas.update(e.facts.areas)
    sep = t(lang, "join.list")
    files = sum(e.facts.files_changed for e in entries)
    added = sum(e.facts.added for e in entries)
    deleted = sum(e.facts.deleted for e in entries)
    authors = len({e.commit.author.name for e in entries})
    return StatsView(
        commits=len(entries),
        importance={imp: counts[imp] for imp in Importance},
        files_changed=files,
        added=added,
        deleted=deleted,
        authors=authors,
        line=t(
            lang,
            "stats_line",
            n=len(entries),
            h=counts[Importance.HIGH],
            m=counts[Importance.MEDIUM],
            l=counts[Importance.LOW],
        ),
        lines=t(lang, "stats_lines", files=files, added=added, deleted=deleted, authors=authors),
        types=sep.join(
            f"{type_label(lang, ct)} {n}"
            for ct, n in sorted(types.items(), key=lambda kv: (-kv[1], kv[0].value))
        ),
        areas=sep.join(
            f"`{a}` {n}" for a, n in sorted(areas.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        ),
    )


# -- commits ---------------------------------------------------------------------


def _commit(
    e: Entry, web: str | None, lang: str, tz: ZoneInfo, title: str, anchor: str
) -> CommitView:
    c, f = e.commit, e.facts
    a = _analysis(e.analysis, lang)
    notes = []
    if c.decode_errors:
        notes.append(t(lang, "decode_warning"))
    if f.is_merge:
        notes.append(t(lang, "merge_note"))
    withheld = tuple(x.path for x in f.files if x.patch_withheld)
    if withheld:
        more = f" (+{len(withheld) - 6})" if len(withheld) > 6 else ""
        shown = ", ".join(escape.clean(p) for p in withheld[:6]) + more
        notes.append(t(lang, "patches_withheld", n=len(withheld), files=shown))
    if c.files_truncated:
        notes.append(t(lang, "files_truncated"))
    pr_url = _pr_url(f, web)
    return CommitView(
        sha=c.sha,
        short_sha=c.sha[:7],
        title=title,
        author=hide_emails(c.author.name),
        co_authors=hide_emails(", ".join(f.co_authors)),
        author_time=local_time(c.author_time, tz),
        commit_time=local_time(c.commit_time, tz),
        url=escape.url(f"{web}/commit/{c.sha}") if web else None,
        pr_number=f.pr_number,
        pr_url=pr_url,
        pr_labels=tuple(escape.clean(x) for x in f.pull_request.labels) if f.pull_request else (),
        anchor=anchor,
        decode_errors=c.decode_errors,
        patches_withheld=withheld,
        files_truncated=c.files_truncated,
        change_type=a.change_type,
        importance=a.importance,
        type_label=type_label(lang, a.change_type),
        badge=importance_badge(lang, a.importance),
        files=t(lang, "files_fmt", files=f.files_changed, added=f.added, deleted=f.deleted),
        areas=", ".join(f"`{x}`" for x in f.areas[:5])
        + (f" (+{len(f.areas) - 5})" if len(f.areas) > 5 else ""),
        reasons=hide_emails(t(lang, "join.sentences").join(a.reasons)),
        error=hide_emails(a.error),
        notes=tuple(notes),
        llm_notes=_llm_notes(a, lang),
        analysis=a,
        facts=f,
        correction=_correction(e.correction, lang) if e.correction else None,
        related=tuple(_related(r, web, lang) for r in e.related),
    )


def _related(r: Related, web: str | None, lang: str) -> RelatedView:
    title = hide_emails(escape.clean(r.title) or t(lang, "empty_message"))
    return RelatedView(
        kind=r.kind,
        sha=r.sha,
        short_sha=r.sha[:7],
        title=title,
        day=r.day,
        url=escape.url(f"{web}/commit/{r.sha}") if web else None,
        text=t(lang, "related." + r.kind, sha=r.sha[:7], title=title, date=r.day),
    )


def _correction(c: Correction, lang: str) -> CorrectionView:
    badge = importance_badge(lang, c.importance)
    verdict = f"{badge} · {type_label(lang, c.change_type)}" if c.change_type else badge
    reason = hide_emails(escape.clean(c.reason))
    day = c.marked_at[:10]
    return CorrectionView(
        importance=c.importance,
        change_type=c.change_type,
        badge=badge,
        text=t(lang, "correction", verdict=verdict, reason=reason, date=day),
        reason=reason,
        marked_at=c.marked_at,
    )


def _pr_url(f: Facts, web: str | None) -> str | None:
    """The pull request's own page when the source gave one and it is safe, else one built."""
    own = escape.url(f.pull_request.url) if f.pull_request is not None else None
    if own is not None:
        return own
    if web and f.pr_number is not None:
        return escape.url(f"{web}/pull/{f.pr_number}")
    return None


def _item(lang: str, message: Message) -> str:
    """One list item or field in ``lang``: English ones start with a capital letter.

    The catalogue's fragments are written to be joined mid-sentence
    ("…; regression-test X"), and shown alone they read as lower-case
    sentences. A code span or path at the start stays as written.
    """
    text = localise(lang, message)
    if CATALOGUES[lang]["style.item_start"] == "capital" and text[:1].islower():
        return text[0].upper() + text[1:]
    return text


def _analysis(a: Analysis, lang: str) -> AnalysisView:
    return AnalysisView(
        analyser=a.analyser,
        change_type=a.change_type,
        importance=a.importance,
        reasons=tuple(localise(lang, r) for r in a.reasons),
        summary=localise(lang, a.summary),
        impact=tuple(_item(lang, x) for x in a.impact),
        insights={k: _item(lang, v) for k, v in a.insights.items()},
        risks=tuple(
            RiskView(_item(lang, r.risk), _item(lang, r.detail), _item(lang, r.mitigation))
            for r in a.risks
        ),
        recommendations=tuple(_item(lang, x) for x in a.recommendations),
        description=a.description,
        error=localise(lang, a.error),
        llm_error=localise(lang, a.llm_error),
        usage=a.usage,
        unverified=a.unverified,
        unseen_files=a.unseen_files,
        rule_verdict=a.rule_verdict,
    )


def _llm_notes(a: AnalysisView, lang: str) -> tuple[str, ...]:
    """What a reader must know about the model's part in this commit's analysis."""
    notes = []
    if a.llm_error:
        notes.append("⚠️ " + t(lang, "llm_failed", error=hide_emails(a.llm_error)))
    if a.rule_verdict:
        notes.append("ℹ️ " + t(lang, "rule_verdict", verdict=a.rule_verdict))
    if a.unverified:
        items = "; ".join(hide_emails(u) for u in a.unverified[:5])
        more = f" (+{len(a.unverified) - 5})" if len(a.unverified) > 5 else ""
        notes.append("🔎 " + t(lang, "unverified", n=len(a.unverified), items=items + more))
    if a.unseen_files:
        files = ", ".join(hide_emails(u) for u in a.unseen_files[:6])
        more = f" (+{len(a.unseen_files) - 6})" if len(a.unseen_files) > 6 else ""
        notes.append("👁️ " + t(lang, "unseen", files=files + more))
    return tuple(notes)
