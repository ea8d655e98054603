"""The only place that knows the order of the stages.

config -> source -> window -> facts -> rules -> store -> (LLM) -> render -> publish.

Failures are contained to what failed: a repository that cannot be read
becomes a marked section of the report; a commit whose analysis breaks keeps
its place in the report with the error shown. Either makes the run's status
"failed" so a scheduler notices.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from repoherald._version import __version__
from repoherald.analysers import CommitAnalyser, llm_analyser_class, rules_analyser
from repoherald.breaker import CircuitBreaker
from repoherald.config.settings import Settings
from repoherald.errors import RepoheraldError, SourceError, StageTimeoutError, UsageError
from repoherald.llm.analyser import LlmAnalyser
from repoherald.llm.stage_time import StageTime
from repoherald.models import (
    DayReport,
    DownstreamCheck,
    Entry,
    Importance,
    RepoSection,
    Text,
    representable,
)
from repoherald.pipeline.analyse import RepoRun, analyse_day, deepen_with_llm, keep_parses
from repoherald.pipeline.delivery import archive_publisher
from repoherald.pipeline.events import DayPosition, Emitter, EventSink
from repoherald.pipeline.identity import RepoIdentity, identify
from repoherald.pipeline.related import link_day
from repoherald.publish.base import Publication, join_identities, source_identity
from repoherald.render.json_twin import render_json
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from repoherald.sources import registry
from repoherald.sources.base import SourceContext, fetch_budget
from repoherald.store.base import EtagCache, Store
from repoherald.store.opener import open_store

log = logging.getLogger("repoherald")

STALE_AFTER_DAYS = 2
"""Days between a never-fetched clone's newest commit and a reported day before we say it may be
stale (a weekend is not enough)."""


@dataclass(frozen=True)
class Window:
    """One report day: [00:00, next 00:00) local time."""

    day: date
    start: datetime
    end: datetime

    @classmethod
    def for_day(cls, day: date, tz: ZoneInfo) -> Window:
        """23 or 25 hours long on DST change days."""
        start = datetime(day.year, day.month, day.day, tzinfo=tz)
        nxt = day + timedelta(days=1)
        end = datetime(nxt.year, nxt.month, nxt.day, tzinfo=tz)
        return cls(day, start, end)

    @property
    def start_ts(self) -> int:
        return int(self.start.timestamp())

    @property
    def end_ts(self) -> int:
        return int(self.end.timestamp())


@dataclass(frozen=True)
class DaySummary:
    """What was written for one day (the report itself is not kept: memory stays flat)."""

    day: date
    commits: int
    paths: tuple[Path, ...]


@dataclass
class RunResult:
    """The outcome of :func:`run`: files written and anything that failed."""

    written: list[Path]
    days: list[DaySummary]
    failures: list[str]
    analysed: int
    cached: int
    llm_requests: int = 0
    llm_tokens: tuple[int, int] = (0, 0)
    """Prompt and completion tokens this run spent (cached analyses cost nothing)."""
    llm_fallbacks: int = 0
    """Commits sent to the LLM that kept their rules analysis (failed, unreachable, no budget)."""
    names: tuple[str, ...] = ()
    """The repositories' names as the failure lines spell them."""

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def commits(self) -> int:
        return sum(d.commits for d in self.days)


def day_of(ts: int, tz: ZoneInfo) -> date:
    """The calendar day in ``tz`` of a Unix timestamp."""
    return datetime.fromtimestamp(representable(ts), tz=UTC).astimezone(tz).date()


def run(
    settings: Settings,
    *,
    events: EventSink | tuple[EventSink, ...] = (),
    command: str = "report",
    use_cache: bool = True,
    rebuild: bool = False,
    llm_breaker: CircuitBreaker | None = None,
    llm_time: StageTime | None = None,
    store: Store | None = None,
    identity: RepoIdentity | None = None,
) -> RunResult:
    """Produce (and write) the reports asked for by ``settings``.

    ``events`` receives :class:`~repoherald.pipeline.events.Event` objects:
    stage start/end with timings, LLM progress and one-line messages.
    ``use_cache=False`` analyses everything again (and refreshes the cache);
    ``rebuild`` first moves the store aside (see :func:`~repoherald.store.opener.open_store`).
    ``llm_breaker`` is the LLM endpoint's circuit breaker when the caller runs
    several reports against it (an open one sends the LLM nothing); by
    default the run has its own. ``llm_time`` likewise: the LLM stage's time
    budget, shared by several reports (by default ``[llm] stage_timeout`` for this one).
    ``store`` is the caller's open store when it
    runs several reports (``use_cache`` and ``rebuild`` were its to choose);
    by default the run opens ``settings.db_path`` and closes it when done.
    ``identity`` is the caller's identity of the one repository in ``settings``
    (``run`` resolved it when it chose the repositories); by default each
    repository is identified as it is opened.
    """
    emitter = Emitter(events if isinstance(events, tuple) else (events,))
    for notice in settings.selection.notices:
        emitter.say(notice)
    repos = _identities(settings, identity)
    if store is not None:
        return _logged(settings, repos, store, emitter, command, llm_breaker, llm_time)
    with open_store(
        settings.db_path,
        url_env=settings.store_url_env,
        rebuild=rebuild,
        use_cache=use_cache,
        on_wait=lambda message: emitter.say(message, "store"),
    ) as opened:
        return _logged(settings, repos, opened, emitter, command, llm_breaker, llm_time)


def _identities(settings: Settings, given: RepoIdentity | None) -> list[RepoIdentity]:
    """Each repository of ``settings`` with its identity, resolved once for the whole run."""
    if given is not None:
        if settings.repos != (given.config,):
            raise UsageError("run(identity=...) is for settings of that one repository")
        return [given]
    return [identify(cfg) for cfg in settings.repos]


def _logged(
    settings: Settings,
    repos: list[RepoIdentity],
    store: Store,
    emitter: Emitter,
    command: str,
    llm_breaker: CircuitBreaker | None,
    llm_time: StageTime | None,
) -> RunResult:
    """:func:`_run`, recorded in the store's log of runs however it ends."""
    run_id = store.start_run(command)
    try:
        result = _run(settings, repos, store, emitter, llm_breaker, llm_time)
    except BaseException as exc:
        # Record why in the run log, then let the CLI report it.
        store.finish_run(run_id, "error", 0, 0, [f"run aborted: {type(exc).__name__}: {exc}"])
        raise
    if store.problem:
        result.failures.append(f"store: {store.problem}")
    status = "ok" if result.ok else "failed"
    store.finish_run(run_id, status, result.commits, result.analysed, result.failures)
    return result


def _earliest(settings: Settings, days: list[date] | None) -> int:
    if days:
        return Window.for_day(min(days), settings.tz).start_ts
    return int((datetime.now(UTC) - timedelta(days=7)).timestamp())


def _prepare(
    settings: Settings,
    repo: RepoIdentity,
    days: list[date] | None,
    etags: EtagCache | None = None,
) -> RepoRun:
    """Open one repository and bucket its first-parent commits into the days.

    ``etags``: the run's store's, so HTTP sources ask only for what changed.
    """
    tz = settings.tz
    ctx = SourceContext(
        mirrors_dir=settings.mirrors_dir,
        earliest=_earliest(settings, days),
        github=settings.github,
        etags=etags,
    )
    source = registry.open_source(repo.config, ctx)
    try:
        history = source.history()
        info = source.info
        state = RepoRun(repo, info.name, info.branch, info.web_url, source=source)
        if not info.refreshed and history:
            state.unfetched_newest = day_of(max(ts for _, ts in history), tz)
        state.empty = not history
        state.tip = history[0][0] if history else None
        if days is None:
            # "latest": the newest day with commits here; the run takes the
            # newest across repositories.
            wanted = {day_of(max(ts for _, ts in history), tz)} if history else set()
        else:
            wanted = set(days)
        for sha, ts in history:
            d = day_of(ts, tz)
            if d in wanted:
                state.by_day.setdefault(d, []).append(sha)
                state.times[sha] = ts
        source.prepare(sha for shas in state.by_day.values() for sha in shas)
        state.attach_extractor()
        return state
    except BaseException:
        source.close()
        raise


def _run(
    settings: Settings,
    repos: list[RepoIdentity],
    store: Store,
    events: Emitter,
    llm_breaker: CircuitBreaker | None,
    llm_time: StageTime | None,
) -> RunResult:
    days = list(settings.selection.days) if not settings.selection.latest else None
    states: list[RepoRun] = []
    failures: list[str] = []
    try:
        for repo in repos:
            try:
                with events.stage("source", repo.name):
                    states.append(_prepare(settings, repo, days, store.etags))
                _warn_if_stale(states[-1], days, events)
                _prepare_downstream(states[-1], store, events)
            except UsageError:
                raise
            except RepoheraldError as exc:
                if len(settings.repos) == 1:
                    raise
                failures.append(str(exc))
                states.append(_broken_state(repo, str(exc)))
        if all(st.error for st in states):
            raise SourceError("; ".join(failures))
        if days is None:
            active = [d for st in states for d in st.by_day]
            days = [max(active)] if active else [datetime.now(settings.tz).date() - timedelta(1)]
        return _report_days(settings, store, states, days, failures, events, llm_breaker, llm_time)
    finally:
        for st in states:
            if st.source is not None:
                # Also after a failure: the days analysed before it are saved, and
                # the next run starts from their last versions.
                keep_parses(st, store)
                st.source.close()


def _prepare_downstream(st: RepoRun, store: Store, events: Emitter) -> None:
    """Index the repository's downstream checkouts once for the whole run (if it has any)."""
    if st.source is None or not (st.config.downstream or st.config.watch):
        return
    from repoherald.pipeline import downstream  # its parsers are not loaded by other runs

    st.downstream = downstream.prepare(st.config, st.name, st.source, st.tip, store, events)


def _with_corrections(
    store: Store, states: list[RepoRun], per_repo: list[list[Entry]]
) -> list[list[Entry]]:
    """Each entry with its readers' correction, if one was marked; after the analyses, which
    never see it."""
    out = []
    for st, entries in zip(states, per_repo, strict=True):
        found = store.corrections_of(st.name, [e.commit.sha for e in entries]) if entries else {}
        out.append([replace(e, correction=found.get(e.commit.sha)) for e in entries])
    return out


def _check_downstream(
    states: list[RepoRun], per_repo: list[list[Entry]]
) -> tuple[list[list[Entry]], list[DownstreamCheck | None]]:
    """Each repository's entries with what they break or change downstream, and the checks."""
    entries_out: list[list[Entry]] = []
    checks: list[DownstreamCheck | None] = []
    for st, entries in zip(states, per_repo, strict=True):
        if st.downstream is None or st.error is not None:
            entries_out.append(entries)
            checks.append(None)
            continue
        checked, check = st.downstream.check_day(entries)
        entries_out.append(checked)
        checks.append(check)
    return entries_out, checks


def _downstream_floor(states: list[RepoRun], per_repo: list[list[Entry]]) -> list[list[Entry]]:
    """🔴 again for model answers about commits that break or touch the reader's code."""
    return [
        entries if st.downstream is None else [st.downstream.keep_floor(e) for e in entries]
        for st, entries in zip(states, per_repo, strict=True)
    ]


def _stale_since(st: RepoRun, day: date) -> date | None:
    newest = st.unfetched_newest
    return newest if newest is not None and (day - newest).days > STALE_AFTER_DAYS else None


def _warn_if_stale(st: RepoRun, days: list[date] | None, events: Emitter) -> None:
    """Say once, on stderr, that "no commits" may only mean the local clone is behind."""
    if st.empty:
        events.say(f"{st.name}: {st.branch} has no commits at all yet", repo=st.name)
        return
    newest = _stale_since(st, max(days)) if days else None
    if newest is not None:
        events.say(
            f"{st.name}: the newest commit on {st.branch} is from {newest}; this local clone is"
            " never fetched and may be out of date (run git pull in it, or give its clone URL)",
            repo=st.name,
        )


def _notes(st: RepoRun, day: date) -> tuple[Text, ...]:
    if st.empty:
        return (Text("empty_repo", {"branch": st.branch}),)
    notes = []
    newest = _stale_since(st, day)
    if newest is not None:
        notes.append(Text("stale_clone", {"branch": st.branch, "date": newest.isoformat()}))
    # A GitHub repository read without its pull requests is said so, not left silent.
    on_github = bool(st.web_url) and urlsplit(st.web_url or "").hostname == "github.com"
    if on_github and st.source is not None and not st.source.info.pr_context:
        notes.append(Text("no_pr_context"))
    return tuple(notes)


def _broken_state(repo: RepoIdentity, error: str) -> RepoRun:
    return RepoRun(repo, repo.name, repo.config.branch or "?", None, error=error)


def _identity(st: RepoRun) -> str:
    """What this repository is, for the archive's same-name check (never credentials)."""
    return source_identity(st.source.info.identity if st.source is not None else st.config.source)


def _report_name(settings: Settings, states: list[RepoRun]) -> str:
    if settings.report_name:
        return settings.report_name
    shorts = [st.identity.key for st in states]
    return shorts[0] if len(shorts) == 1 else "-".join(shorts)[:80]


def _analysers(
    rules: CommitAnalyser, llm: LlmAnalyser | None, per_repo: list[list[Entry]]
) -> tuple[str, ...]:
    """What the header says analysed this report: the model only if it analysed a commit."""
    if llm is not None and any(e.analysis.analyser == llm.name for x in per_repo for e in x):
        return (rules.name, llm.name)
    return (rules.name,)


def _landed(
    store: Store,
    name: str,
    lang: str,
    summary: DaySummary,
    high: int,
    markdown: str,
    summaries: list[DaySummary],
) -> None:
    """A day's pair is in place: the store records it (``run`` catches up after the newest
    recorded day, so a pair that failed to land must not be), and the run counts it."""
    md_path = summary.paths[0]
    store.record_report(name, summary.day, lang, summary.commits, high, str(md_path), markdown)
    summaries.append(summary)


def _report_days(
    settings: Settings,
    store: Store,
    states: list[RepoRun],
    report_days: list[date],
    failures: list[str],
    events: Emitter,
    llm_breaker: CircuitBreaker | None,
    llm_time: StageTime | None,
) -> RunResult:
    """Analyse, render and write one day at a time, so memory does not grow with days."""
    rules = rules_analyser()
    llm = None
    if settings.llm is not None:
        llm = llm_analyser_class()(
            settings.llm, settings.lang, breaker=llm_breaker, stage_time=llm_time
        )
    now = datetime.now(UTC)
    name = _report_name(settings, states)
    archive = archive_publisher(settings)
    summaries: list[DaySummary] = []
    # The index is rebuilt once, after the last day (or the failure).
    with archive.batch():
        for number, d in enumerate(report_days, 1):
            at = DayPosition(d, number, len(report_days))
            window = Window.for_day(d, settings.tz)
            per_repo: list[list[Entry]] = []
            day_errors: list[str | None] = []
            for st in states:
                entries: list[Entry] = []
                day_error = None
                if st.error is None and st.source is not None:
                    order = st.by_day.get(d, [])
                    try:
                        with fetch_budget(st.source, f"{st.name} {d}"):
                            entries = analyse_day(
                                st, settings.lang, rules, store, order, events, at
                            )
                    except StageTimeoutError as exc:
                        # This day only: the next day gets a budget of its own.
                        if len(states) == 1:
                            raise
                        day_error = str(exc)
                        failures.append(day_error)
                    except SourceError as exc:
                        # A source can fail half-way (a used-up GitHub rate limit): as when
                        # opening, a lone repository fails the run, one of several is marked.
                        if len(states) == 1:
                            raise
                        st.error = str(exc)
                        failures.append(str(exc))
                per_repo.append(entries)
                day_errors.append(day_error)
            # Downstream first: the model is told what the commit breaks in the reader's
            # code, and the 🔴 that such a hit earns is applied again to its answer.
            per_repo, checks = _check_downstream(states, per_repo)
            if llm is not None:
                per_repo = deepen_with_llm(llm, states, per_repo, store, failures, events, at)
                per_repo = _downstream_floor(states, per_repo)
            per_repo = _with_corrections(store, states, per_repo)
            per_repo = [
                link_day(store, st.name, entries, settings.tz) if entries else entries
                for st, entries in zip(states, per_repo, strict=True)
            ]
            analysers = _analysers(rules, llm, per_repo)
            sections = [
                RepoSection(
                    st.name,
                    st.branch,
                    st.web_url,
                    tuple(entries),
                    st.error or day_error,
                    _notes(st, d),
                    identity=_identity(st),
                    downstream=check,
                )
                for st, entries, check, day_error in zip(
                    states, per_repo, checks, day_errors, strict=True
                )
            ]
            report = DayReport(
                day=d,
                tz_name=settings.tz_name,
                start=window.start,
                end=window.end,
                lang=settings.lang,
                sections=tuple(sections),
                analysers=analysers,
                generated_at=now,
                version=__version__,
                as_of=now.astimezone(settings.tz) if d == settings.selection.today else None,
            )
            with events.stage("render", day=d):
                view = build_view(report)
                markdown, twin = render_markdown(view), render_json(view)
            identity = join_identities([s.identity for s in sections])
            item = Publication(name, identity, d, settings.lang, markdown, twin, report)
            summary = DaySummary(d, len(report.entries), archive.paths(item))
            high = sum(e.analysis.importance is Importance.HIGH for e in report.entries)
            landed = partial(
                _landed, store, name, settings.lang, summary, high, markdown, summaries
            )
            with events.stage("publish", day=d):
                archive.publish(item, landed)
    for st in states:
        failures.extend(st.failures)
        if st.downstream is not None:
            failures.extend(st.downstream.failures)
    if llm is not None and llm.unavailable:
        failures.append(llm.unavailable_line())
    return RunResult(
        written=[path for summary in summaries for path in summary.paths],
        days=summaries,
        failures=failures,
        analysed=sum(st.analysed for st in states),
        cached=sum(st.cached for st in states),
        llm_requests=llm.meter.requests if llm else 0,
        llm_tokens=(llm.meter.prompt_tokens, llm.meter.completion_tokens) if llm else (0, 0),
        llm_fallbacks=llm.fallbacks if llm else 0,
        names=tuple(st.name for st in states),
    )
