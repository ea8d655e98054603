"""The only place that knows the order of the stages.

config -> source -> window -> facts -> rules -> store -> render -> publish.

Failures are contained to what failed: a repository that cannot be read
becomes a marked section of the report; a commit whose analysis breaks keeps
its place in the report with the error shown. Either makes the run's status
"failed" so a scheduler notices.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from repoherald import __version__
from repoherald.analysis.facts import AreaRules, FactsExtractor, package_names_for
from repoherald.analysis.rules import RuleAnalyser
from repoherald.config import RepoConfig, Settings
from repoherald.errors import RepoheraldError, SourceError, UsageError
from repoherald.llm.analyser import LlmAnalyser, LlmJob
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    DayReport,
    Entry,
    Facts,
    FileChange,
    Importance,
    RepoSection,
)
from repoherald.publish.archive import report_path, safe_component, write_atomic
from repoherald.render.json_twin import render_json
from repoherald.render.markdown import build_view, render_markdown
from repoherald.sources.git import repo as git
from repoherald.store.db import Store

log = logging.getLogger("repoherald")

FACTS_VERSION = "1"
MAX_BLOB_BYTES = 1_000_000


@dataclass(frozen=True)
class Window:
    day: date
    start: datetime
    end: datetime

    @classmethod
    def for_day(cls, day: date, tz: ZoneInfo) -> Window:
        """[00:00, next 00:00) local time; 23 or 25 hours long on DST change days."""
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


@dataclass
class _RepoState:
    """One repository, open for the whole run, with its commits bucketed by day."""

    config: RepoConfig
    name: str
    branch: str
    web_url: str | None
    repo: git.GitRepo | None = None
    by_day: dict[date, list[str]] = field(default_factory=dict)
    error: str | None = None
    extractor: FactsExtractor | None = None
    extractor_id: str = ""
    analysed: int = 0
    cached: int = 0
    failures: list[str] = field(default_factory=list)


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

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def commits(self) -> int:
        return sum(d.commits for d in self.days)


Progress = Callable[[str], None]
LlmProgress = Callable[[int, int], None]


def _say(progress: Progress | None, message: str) -> None:
    if progress is not None:
        progress(message)


def day_of(ts: int, tz: ZoneInfo) -> date:
    return datetime.fromtimestamp(ts, tz=UTC).astimezone(tz).date()


def _area_fingerprint(cfg: RepoConfig, name: str) -> str:
    payload = json.dumps([name, [list(a) for a in cfg.areas]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def _open_repo(
    cfg: RepoConfig, settings: Settings, earliest: int
) -> tuple[git.GitRepo, str, str | None]:
    """Open the source; returns (repo, display name, web URL)."""
    if git.is_remote(cfg.source):
        repo = git.ensure_mirror(cfg.source, settings.mirrors_dir, cfg.branch, earliest)
        ident = git.identity_from_url(cfg.source)
    else:
        repo = git.open_local(cfg.source)
        origin = (
            repo.run("config", "--get", "remote.origin.url", check=False)
            .decode("utf-8", "replace")
            .strip()
        )
        if origin and git.is_remote(origin):
            ident = git.identity_from_url(origin)
        else:
            base = Path(cfg.source).name
            ident = git.RepoIdentity(
                name=base[:-4] if base.endswith(".git") else base, web_url=None
            )
    return repo, cfg.name or ident.name, cfg.web_url or ident.web_url


def _walk(repo: git.GitRepo, tip: str | None) -> list[tuple[str, int]]:
    return list(repo.first_parent(tip)) if tip else []


def _prepare(settings: Settings, cfg: RepoConfig, days: list[date] | None) -> _RepoState:
    """Open one repository and bucket its first-parent commits into the days."""
    tz = settings.tz
    earliest = (
        Window.for_day(min(days), tz).start_ts
        if days
        else int((datetime.now(UTC) - timedelta(days=7)).timestamp())
    )
    repo, name, web_url = _open_repo(cfg, settings, earliest)
    try:
        branch = cfg.branch or repo.default_branch()
        tip = repo.resolve_branch(branch)
        history = _walk(repo, tip)
        if git.is_remote(cfg.source) and tip:
            history = _ensure_depth(repo, cfg, branch, history, earliest)
        state = _RepoState(cfg, name, branch, web_url, repo=repo)
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
        if git.is_remote(cfg.source):
            in_window = {sha for shas in state.by_day.values() for sha in shas}
            if repo.shallow_commits() & in_window:
                git.deepen(repo, cfg.source, branch, by=1)
        state.extractor = FactsExtractor(
            AreaRules(globs=cfg.areas, package_names=package_names_for(name)),
            lambda oid: repo.read_blob(oid, MAX_BLOB_BYTES),
        )
        state.extractor_id = f"facts/{FACTS_VERSION}/{_area_fingerprint(cfg, name)}"
        return state
    except BaseException:
        repo.close()
        raise


def _ensure_depth(
    repo: git.GitRepo,
    cfg: RepoConfig,
    branch: str,
    history: list[tuple[str, int]],
    earliest: int,
) -> list[tuple[str, int]]:
    """Deepen a shallow mirror until its history reaches back past ``earliest``."""
    shallow = repo.shallow_commits()
    if not shallow or not history:
        return history
    oldest_sha, oldest_ts = history[-1]
    if oldest_sha in shallow and oldest_ts >= earliest - 86400:
        git.deepen(repo, cfg.source, branch, since=earliest - 2 * 86400)
        tip = repo.resolve_branch(branch)
        return _walk(repo, tip)
    return history


def _analyse(
    state: _RepoState,
    settings: Settings,
    rules: RuleAnalyser,
    store: Store,
    order: list[str],
    progress: Progress | None,
) -> list[Entry]:
    """Entries for ``order`` (first-parent order): from the cache, or analysed and cached."""
    repo, name, extractor = state.repo, state.name, state.extractor
    assert repo is not None and extractor is not None
    cached = store.load(order, state.extractor_id, rules.name)
    entries = {sha: Entry(*cached[sha]) for sha in order if sha in cached}
    state.cached += len(entries)
    missing = [sha for sha in order if sha not in cached]
    if not missing:
        return [entries[sha] for sha in order]
    _say(progress, f"{name}: analysing {len(missing)} commits ({len(entries)} cached)")
    commits = repo.read_commits(missing)
    # In a shallow local clone the oldest commit's parent is absent: its diff
    # cannot be known, so it is shown, marked, rather than guessed at.
    shallow = repo.shallow_commits()
    cut_off = [sha for sha in missing if sha in shallow and commits[sha].parents]
    for sha in cut_off:
        entries[sha] = _failed_entry(commits[sha], [], settings.lang, ShallowCloneError())
        state.failures.append(
            f"{name} {sha[:7]}: parent not in this shallow clone (run: git fetch --deepen=1)"
        )
    missing = [sha for sha in missing if sha not in cut_off]
    diffs = repo.diff_first_parent(commits[s] for s in missing)
    binary_oids = [f.new_blob or f.old_blob for sha in missing for f in diffs[sha] if f.binary]
    sizes = repo.blob_sizes(binary_oids)
    to_save: list[tuple[Commit, Facts, Analysis]] = []
    for sha in missing:
        commit = commits[sha]
        files = [_with_size(f, sizes) if f.binary else f for f in diffs[sha]]
        try:
            facts = extractor.extract(commit, files)
            analysis = rules.analyse(commit, facts)
        except (RecursionError, ValueError, KeyError, IndexError, TypeError, UnicodeError) as exc:
            # A bug of ours on one strange commit must not cost the others:
            # the commit stays in the report, marked, and the run fails.
            entries[sha] = _failed_entry(commit, files, settings.lang, exc)
            state.failures.append(f"{name} {sha[:7]}: analysis failed: {exc!r}")
            continue
        entries[sha] = Entry(commit, facts, analysis)
        to_save.append((commit, facts, analysis))
    store.save(name, to_save, state.extractor_id)
    state.analysed += len(to_save)
    return [entries[sha] for sha in order]


class ShallowCloneError(Exception):
    """The commit's parent was not fetched, so its changes are unknown."""

    def __str__(self) -> str:
        return "parent commit is not in this shallow clone; run `git fetch --deepen=1` and retry"


def _with_size(f: FileChange, sizes: dict[str, int]) -> FileChange:
    return replace(f, size=sizes.get(f.new_blob or f.old_blob))


def _failed_entry(commit: Commit, files: list[FileChange], lang: str, exc: BaseException) -> Entry:
    facts = Facts(
        files=tuple(files),
        added=sum(f.added for f in files),
        deleted=sum(f.deleted for f in files),
        areas=(),
        pr_number=None,
        tags=(),
        conventional_type=None,
        conventional_scope=None,
        breaking_marker=False,
        is_revert=False,
        reverted_sha=None,
        co_authors=(),
        kinds={},
        api_changes=(),
        dependency_changes=(),
        is_merge=len(commit.parents) > 1,
    )
    msg = "分析失败" if lang == "zh" else "analysis failed"
    analysis = Analysis(
        analyser="none",
        change_type=ChangeType.OTHER,
        importance=Importance.MEDIUM,
        reasons=(msg,),
        summary=commit.title,
        error=f"{msg}: {exc}"
        if isinstance(exc, ShallowCloneError)
        else f"{msg}: {type(exc).__name__}: {exc}",
    )
    return Entry(commit, facts, analysis)


def run(
    settings: Settings,
    *,
    progress: Progress | None = None,
    on_llm: LlmProgress | None = None,
    command: str = "report",
) -> RunResult:
    """Produce (and write) the reports asked for by ``settings``.

    ``progress`` receives one-line status messages; ``on_llm`` receives
    (done, total) as LLM analyses complete.
    """
    with Store.open(settings.db_path) as store:
        run_id = store.start_run(command)
        try:
            result = _run(settings, store, progress, on_llm)
        except BaseException as exc:
            # Record why in the run log, then let the CLI report it.
            store.finish_run(run_id, "error", 0, 0, [f"run aborted: {type(exc).__name__}: {exc}"])
            raise
        status = "ok" if result.ok else "failed"
        store.finish_run(run_id, status, result.commits, result.analysed, result.failures)
        return result


def _run(
    settings: Settings, store: Store, progress: Progress | None, on_llm: LlmProgress | None
) -> RunResult:
    days = list(settings.selection.days) if not settings.selection.latest else None
    states: list[_RepoState] = []
    failures: list[str] = []
    try:
        for cfg in settings.repos:
            try:
                states.append(_prepare(settings, cfg, days))
            except UsageError:
                raise
            except RepoheraldError as exc:
                if len(settings.repos) == 1:
                    raise
                failures.append(str(exc))
                states.append(_broken_state(cfg, str(exc)))
        if all(st.error for st in states):
            raise SourceError("; ".join(failures))
        if days is None:
            active = [d for st in states for d in st.by_day]
            days = [max(active)] if active else [datetime.now(settings.tz).date() - timedelta(1)]
        return _report_days(settings, store, states, days, failures, progress, on_llm)
    finally:
        for st in states:
            if st.repo is not None:
                st.repo.close()


def _broken_state(cfg: RepoConfig, error: str) -> _RepoState:
    ident = git.identity_from_url(cfg.source) if git.is_remote(cfg.source) else None
    name = cfg.name or (ident.name if ident else Path(cfg.source).name)
    return _RepoState(cfg, name, cfg.branch or "?", None, error=error)


def _report_name(settings: Settings, states: list[_RepoState]) -> str:
    if settings.report_name:
        return settings.report_name
    shorts = [safe_component(st.name.rsplit("/", 1)[-1]) for st in states]
    return shorts[0] if len(shorts) == 1 else "-".join(shorts)[:80]


def _deepen_with_llm(
    llm: LlmAnalyser,
    states: list[_RepoState],
    per_repo: list[list[Entry]],
    store: Store,
    failures: list[str],
    progress: Progress | None,
    on_llm: LlmProgress | None,
) -> list[list[Entry]]:
    """Replace rule analyses by LLM analyses: cached ones first, the rest concurrently.

    Only successful LLM analyses are cached, so a failure is retried by the
    next run; the failed commit keeps its rule analysis, marked.
    """
    shas = [e.commit.sha for entries in per_repo for e in entries]
    cached = store.load_analyses(shas, llm.name)
    jobs: list[LlmJob] = []
    slots: list[tuple[int, int]] = []
    for r, (st, entries) in enumerate(zip(states, per_repo, strict=True)):
        for i, e in enumerate(entries):
            if e.commit.sha in cached or e.analysis.error or st.repo is None:
                continue
            patch, cut = st.repo.patch(e.commit)
            jobs.append(LlmJob(e.commit, e.facts, e.analysis, patch, cut, st.name))
            slots.append((r, i))
    if jobs:
        _say(progress, f"LLM: analysing {len(jobs)} commits ({len(cached)} cached)")
    results = llm.analyse_all(jobs, on_llm)
    out = [
        [
            replace(e, analysis=cached[e.commit.sha]) if e.commit.sha in cached else e
            for e in entries
        ]
        for entries in per_repo
    ]
    to_cache = []
    for (r, i), job, analysis in zip(slots, jobs, results, strict=True):
        out[r][i] = replace(out[r][i], analysis=analysis)
        if analysis.llm_error:
            failures.append(f"{job.repo} {job.commit.sha[:7]}: {analysis.llm_error}")
        else:
            to_cache.append((job.commit.sha, analysis))
    store.save_analyses(to_cache)
    return out


def _report_days(
    settings: Settings,
    store: Store,
    states: list[_RepoState],
    report_days: list[date],
    failures: list[str],
    progress: Progress | None,
    on_llm: LlmProgress | None = None,
) -> RunResult:
    """Analyse, render and write one day at a time, so memory does not grow with days."""
    rules = RuleAnalyser(settings.lang)
    llm = LlmAnalyser(settings.llm, settings.lang) if settings.llm else None
    analysers = (rules.name, llm.name) if llm else (rules.name,)
    now = datetime.now(UTC)
    name = _report_name(settings, states)
    written: list[Path] = []
    summaries: list[DaySummary] = []
    for d in report_days:
        window = Window.for_day(d, settings.tz)
        per_repo: list[list[Entry]] = []
        for st in states:
            entries: list[Entry] = []
            if st.error is None:
                entries = _analyse(st, settings, rules, store, st.by_day.get(d, []), progress)
            per_repo.append(entries)
        if llm is not None:
            per_repo = _deepen_with_llm(llm, states, per_repo, store, failures, progress, on_llm)
        sections = [
            RepoSection(st.name, st.branch, st.web_url, tuple(entries), error=st.error)
            for st, entries in zip(states, per_repo, strict=True)
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
        )
        md_path = report_path(settings.out_dir, settings.path_template, name, d, "md")
        json_path = report_path(settings.out_dir, settings.path_template, name, d, "json")
        view = build_view(report)
        write_atomic(md_path, render_markdown(report, view))
        write_atomic(json_path, render_json(report, view))
        written.extend([md_path, json_path])
        summaries.append(DaySummary(d, len(report.entries), (md_path, json_path)))
    for st in states:
        failures.extend(st.failures)
    return RunResult(
        written=written,
        days=summaries,
        failures=failures,
        analysed=sum(st.analysed for st in states),
        cached=sum(st.cached for st in states),
        llm_requests=llm.meter.requests if llm else 0,
        llm_tokens=(llm.meter.prompt_tokens, llm.meter.completion_tokens) if llm else (0, 0),
    )
