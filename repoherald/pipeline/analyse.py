"""Cache-or-compute for one repository-day, and the entries kept for commits that failed.

A commit is analysed once: facts are keyed by (SHA, extractor identity), the
rules verdict by (SHA, analyser identity), and a re-run of the same day reads
both from the store. A commit that cannot be analysed keeps its place in the
report, marked, and is named in the run's failures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, TypeVar

from repoherald.analysers import CommitAnalyser, DeepAnalyser
from repoherald.analysis.facts.commit import AreaRules, FactsExtractor, package_names_for
from repoherald.analysis.facts.hostpins import host_names_for, normalise_host
from repoherald.analysis.pyapi import codec as apicodec
from repoherald.config.repos import RepoConfig
from repoherald.errors import CommitError, SourceError, StageTimeoutError
from repoherald.i18n import t
from repoherald.llm.analyser import LlmResult
from repoherald.llm.budget import day_allowance
from repoherald.llm.job import LlmJob
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    Entry,
    Facts,
    FileChange,
    Importance,
    Person,
    PullRequest,
)
from repoherald.pipeline.events import DayPosition, Emitter, Event
from repoherald.pipeline.identity import RepoIdentity
from repoherald.pipeline.waits import Waits
from repoherald.sources.base import BatchedPullSource, Source
from repoherald.store.base import Store

if TYPE_CHECKING:  # imported only by runs that check downstream code
    from repoherald.pipeline.downstream import DownstreamRun

FACTS_VERSION = "5"
API_CODEC = f"{apicodec.CODEC_VERSION}/facts{FACTS_VERSION}"
"""Under which the store keeps parsed Python blobs: a change of the facts
(which may be a change of what a parse finds) leaves the old rows behind."""
MAX_BLOB_BYTES = 1_000_000

# A bug of ours on one strange commit must not cost the others.
CONTAINED_ERRORS = (RecursionError, ValueError, KeyError, IndexError, TypeError, UnicodeError)
ONE_COMMIT = (CommitError, *CONTAINED_ERRORS)
"""What a source may raise about one commit: that commit fails, the day is still reported
(any other :class:`SourceError` is the source failing as a whole)."""

T = TypeVar("T")


class ShallowCloneError(Exception):
    """The commit's parent was not fetched, so its changes are unknown."""

    def __str__(self) -> str:
        return "parent commit is not in this shallow clone; run `git fetch --deepen=1` and retry"


@dataclass
class RepoRun:
    """One repository, open for the whole run, with its commits bucketed by day."""

    identity: RepoIdentity
    name: str
    """The name its source gives it once opened (the report's section heading)."""
    branch: str
    web_url: str | None
    source: Source | None = None
    by_day: dict[date, list[str]] = field(default_factory=dict)
    error: str | None = None
    unfetched_newest: date | None = None
    """Day of the newest commit of a source that is never brought up to date (a local clone)."""
    empty: bool = False
    """The branch has no commits at all (not just none in the window)."""
    tip: str | None = None
    """The newest commit of the branch (where the downstream check reads the upstream's tree)."""
    downstream: DownstreamRun | None = None
    """Set when the repository has ``downstream`` checkouts or ``watch`` globs."""
    extractor: FactsExtractor | None = None
    extractor_id: str = ""
    analysed: int = 0
    cached: int = 0
    failures: list[str] = field(default_factory=list)
    times: dict[str, int] = field(default_factory=dict)
    """Committer time of each bucketed commit (what a commit that cannot be read is shown at)."""

    @property
    def config(self) -> RepoConfig:
        return self.identity.config

    def attach_extractor(self) -> None:
        """Facts read blobs through the source, so the API facts work for any backend."""
        source = self.source
        assert source is not None
        configured = frozenset(normalise_host(h) for h in self.config.hosts)
        hosts = configured or host_names_for(self.identity.own_name)
        self.extractor = FactsExtractor(
            AreaRules(globs=self.config.areas, package_names=package_names_for(self.name)),
            lambda oid: source.read_blob(oid, MAX_BLOB_BYTES),
            hosts=hosts,
        )
        fingerprint = _area_fingerprint(self.config, self.name, hosts)
        self.extractor_id = f"facts/{FACTS_VERSION}/{fingerprint}"


def _area_fingerprint(cfg: RepoConfig, name: str, hosts: frozenset[str] = frozenset()) -> str:
    payload = json.dumps([name, [list(a) for a in cfg.areas], sorted(hosts)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def analyse_day(
    state: RepoRun,
    lang: str,
    rules: CommitAnalyser,
    store: Store,
    order: list[str],
    events: Emitter,
    at: DayPosition | None = None,
) -> list[Entry]:
    """Entries for ``order`` (first-parent order): from the cache, or analysed and cached.

    ``at`` names the day in the progress line ("vllm 2026-08-14 (3/7): analysing …").
    """
    source, name, extractor = state.source, state.name, state.extractor
    assert source is not None and extractor is not None
    with events.stage("store", name):
        cached = store.load(order, state.extractor_id, rules.name)
    extractor.apis.shelf = lambda oid: store.load_blob_api(oid, API_CODEC, apicodec.decode)
    entries = {sha: Entry(*cached[sha]) for sha in order if sha in cached}
    state.cached += len(entries)
    missing = [sha for sha in order if sha not in cached]
    if not missing:
        return [entries[sha] for sha in order]
    where = f"{name} {at}" if at is not None else name
    events.say(
        f"{where}: analysing {_commits(len(missing))} ({len(entries)} cached)",
        "facts",
        name,
        at.day if at is not None else None,
    )
    with events.stage("source", name):
        commits, unread = each_commit(source.read_commits, missing)
        for sha, exc in unread.items():
            _contain(state, lang, stand_in(sha, state.times.get(sha, 0)), [], exc, entries)
        missing = [sha for sha in missing if sha in commits]
        # A commit whose parent is absent (shallow local clone): its diff cannot
        # be known, so it is shown, marked, rather than guessed at.
        cut_off = [s for s in source.missing_parents(missing) if commits[s].parents]
        for sha in cut_off:
            entries[sha] = failed_entry(commits[sha], [], lang, ShallowCloneError())
            state.failures.append(
                f"{name} {sha[:7]}: parent not in this shallow clone (run: git fetch --deepen=1)"
            )
        missing = [sha for sha in missing if sha not in set(cut_off)]
        diffs, undiffed = each_commit(
            lambda shas: source.file_changes(commits[s] for s in shas), missing
        )
        for sha, exc in undiffed.items():
            _contain(state, lang, commits[sha], [], exc, entries)
        missing = [sha for sha in missing if sha in diffs]
        pulls, unasked = _pull_requests(state, missing)
    to_save = _compute(state, lang, rules, commits, diffs, missing, entries, events, pulls)
    with events.stage("store", name):
        # Commits whose pull request could not be asked for are not cached: the next
        # run asks again instead of keeping them without their PR for good.
        store.save(name, [x for x in to_save if x[0].sha not in unasked], state.extractor_id)
    state.analysed += len(to_save)
    return [entries[sha] for sha in order]


def each_commit(
    read: Callable[[list[str]], dict[str, T]], shas: list[str]
) -> tuple[dict[str, T], dict[str, Exception]]:
    """``read(shas)``, and when one commit's answer breaks it, each commit on its own.

    Sources read a day's commits together (concurrently, for GitHub); a
    malformed answer for one of them must cost only that one. Returns what
    was read, by SHA, and why each of the others could not be. An error
    about the source as a whole (a used-up rate limit) still propagates.
    """
    try:
        return read(shas), {}
    except ONE_COMMIT as exc:
        if len(shas) == 1:
            return {}, {shas[0]: exc}
    got: dict[str, T] = {}
    broken: dict[str, Exception] = {}
    for sha in shas:
        try:
            got.update(read([sha]))
        except ONE_COMMIT as exc:
            broken[sha] = exc
    return got, broken


def stand_in(sha: str, when: int) -> Commit:
    """What is shown for a commit whose metadata could not be read: its SHA and its time."""
    nobody = Person(name="?", email="")
    return Commit(sha, (), nobody, when, 0, nobody, when, 0, "")


def keep_parses(state: RepoRun, store: Store) -> None:
    """Store the parsed Python blobs that the next run will ask for, once, as the run ends.

    Tomorrow's first version of each file is the last one this run wrote, so
    that is what is kept (:meth:`~repoherald.analysis.pyapi.blobs.BlobApis.take_fresh`);
    a version a later day of the run replaced would never be read.
    """
    if state.extractor is None:
        return
    fresh = state.extractor.apis.take_fresh()
    if fresh:
        store.save_blob_apis([(oid, apicodec.encode(e)) for oid, e in fresh], API_CODEC)


def _pull_requests(state: RepoRun, shas: list[str]) -> tuple[dict[str, PullRequest], set[str]]:
    """The pull request of each commit, when the source can know it, and the SHAs not asked.

    A failure (GitHub down, rate limit used up) costs only the context: those
    commits are analysed without their PR, and the run names the failure once,
    with the count, rather than once per commit.
    """
    source = state.source
    assert source is not None
    found: dict[str, PullRequest] = {}
    if not source.info.pr_context:
        return found, set()
    if isinstance(source, BatchedPullSource):
        source.pull_requests_ahead(shas)
    unasked: set[str] = set()
    for i, sha in enumerate(shas):
        try:
            pr = source.pull_request(sha)
        except ONE_COMMIT as exc:
            # One malformed answer: this commit goes without its PR (and is asked again
            # next run); the others still get theirs.
            unasked.add(sha)
            state.failures.append(f"{state.name} {sha[:7]}: pull request context missing: {exc}")
            continue
        except StageTimeoutError:
            raise  # the day's time is up: the day fails, not just its context
        except SourceError as exc:
            unasked |= set(shas[i:])
            state.failures.append(
                f"{state.name}: pull request context missing for {len(shas) - i} commits: {exc}"
            )
            return found, unasked
        if pr is not None:
            found[sha] = pr
    return found, unasked


def _compute(
    state: RepoRun,
    lang: str,
    rules: CommitAnalyser,
    commits: dict[str, Commit],
    diffs: dict[str, list[FileChange]],
    missing: list[str],
    entries: dict[str, Entry],
    events: Emitter,
    pulls: dict[str, PullRequest],
) -> list[tuple[Commit, Facts, Analysis]]:
    """Facts, then the rules verdict, for each missing commit; failures are contained."""
    extractor = state.extractor
    assert extractor is not None
    facts: dict[str, Facts] = {}
    failed: dict[str, Exception] = {}
    with events.stage("facts", state.name, total=len(missing)):
        # Oldest first, as the days are run: the blob a commit writes is what the
        # next commit to touch the file reads, so that one finds its parsed API
        # at hand, also across days. Newest first parsed a file whole again on
        # every day it was touched.
        for sha in reversed(missing):
            try:
                facts[sha] = with_pull(extractor.extract(commits[sha], diffs[sha]), pulls.get(sha))
            except ONE_COMMIT as exc:
                failed[sha] = exc
    for sha in missing:
        if sha in failed:
            _contain(state, lang, commits[sha], diffs[sha], failed[sha], entries)
    to_save: list[tuple[Commit, Facts, Analysis]] = []
    with events.stage("rules", state.name, total=len(facts)):
        for sha in missing:
            if sha not in facts:
                continue
            try:
                analysis = rules.analyse(commits[sha], facts[sha])
            except CONTAINED_ERRORS as exc:
                _contain(state, lang, commits[sha], diffs[sha], exc, entries)
                continue
            entries[sha] = Entry(commits[sha], facts[sha], analysis)
            to_save.append((commits[sha], facts[sha], analysis))
    return to_save


def with_pull(facts: Facts, pr: PullRequest | None) -> Facts:
    """The facts with the commit's pull request; its number wins over one read from the title."""
    if pr is None:
        return facts
    return replace(facts, pull_request=pr, pr_number=pr.number)


def _contain(
    state: RepoRun,
    lang: str,
    commit: Commit,
    files: list[FileChange],
    exc: BaseException,
    entries: dict[str, Entry],
) -> None:
    entries[commit.sha] = failed_entry(commit, files, lang, exc)
    if isinstance(exc, CommitError) and exc.sha == commit.sha:  # names repository and commit
        state.failures.append(str(exc))
    else:
        state.failures.append(f"{state.name} {commit.sha[:7]}: analysis failed: {exc!r}")


def failed_entry(commit: Commit, files: list[FileChange], lang: str, exc: BaseException) -> Entry:
    """The entry shown for a commit that could not be analysed: its files, and why."""
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
    msg = t(lang, "error.analysis_failed")
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


def deepen_with_llm(
    llm: DeepAnalyser,
    states: list[RepoRun],
    per_repo: list[list[Entry]],
    store: Store,
    failures: list[str],
    events: Emitter,
    at: DayPosition | None = None,
) -> Waits[list[list[Entry]]]:
    """Replace rule analyses by LLM analyses: cached ones first, the rest concurrently.

    ``at`` names the day in the progress line, as for :func:`analyse_day`.
    The jobs are handed to the run's model pool, and this step waits for the
    answers by yielding (see :mod:`repoherald.pipeline.waits`): the run goes
    on with other repositories meanwhile.

    Only successful LLM analyses are cached, so a failure is retried by the
    next run; the failed commit keeps its rule analysis, marked. Commits the
    endpoint could not be reached for are not named one by one: the run adds
    one line for them (:meth:`LlmAnalyser.unavailable_line`).
    """
    shas = [e.commit.sha for entries in per_repo for e in entries]
    cached = store.load_analyses(shas, llm.name)
    jobs: list[LlmJob] = []
    slots: list[tuple[int, int]] = []
    out_of_llm: dict[tuple[int, int], Analysis] = {}
    for r, (st, entries) in enumerate(zip(states, per_repo, strict=True)):
        for i, e in enumerate(entries):
            if e.commit.sha in cached or e.analysis.error or st.source is None:
                continue
            try:
                patch = st.source.patches(e.commit)
            except ONE_COMMIT as exc:
                # The diff of one commit cannot be read: it keeps its rules analysis, marked.
                message = f"{type(exc).__name__}: {exc}"
                out_of_llm[(r, i)] = replace(e.analysis, llm_error=message)
                failures.append(f"{st.name} {e.commit.sha[:7]}: not sent to the LLM: {message}")
                continue
            jobs.append(LlmJob(e.commit, e.facts, e.analysis, patch, st.name, _downstream_lines(e)))
            slots.append((r, i))
    if jobs:
        where = f"LLM {at}" if at is not None else "LLM"
        day = at.day if at is not None else None
        events.say(
            f"{where}: analysing {_commits(len(jobs))} ({len(cached)} cached)", "llm", None, day
        )

    def progress(done: int, total: int) -> None:
        events.emit(Event("progress", "llm", done=done, total=total))

    with events.stage("llm", total=len(jobs)):
        results = yield from _analyse_jobs(llm, jobs, [r for r, _ in slots], progress)
    out = [
        [
            replace(e, analysis=cached[e.commit.sha]) if e.commit.sha in cached else e
            for e in entries
        ]
        for entries in per_repo
    ]
    for (r, i), analysis in out_of_llm.items():
        out[r][i] = replace(out[r][i], analysis=analysis)
    to_cache = []
    for (r, i), job, result in zip(slots, jobs, results, strict=True):
        analysis = result.analysis
        out[r][i] = replace(out[r][i], analysis=analysis)
        if result.unavailable:
            continue
        if analysis.llm_error:
            failures.append(f"{job.repo} {job.commit.sha[:7]}: {analysis.llm_error}")
        else:
            to_cache.append((job.commit.sha, analysis))
    store.save_analyses(to_cache)
    fell_back = sum(1 for r in results if r.analysis.llm_error)
    if fell_back:
        events.say(
            f"LLM: {len(jobs) - fell_back} of {len(jobs)} commits analysed by the model;"
            f" {fell_back} keep their rules analysis",
            "llm",
        )
    return out


def _commits(n: int) -> str:
    """``1 commit``, ``2 commits``: progress lines are English, like the CLI's other output."""
    return f"{n} commit" if n == 1 else f"{n} commits"


def _downstream_lines(entry: Entry) -> tuple[str, ...]:
    """What the downstream check found for the commit, one line each, for the model's prompt."""
    lines = [f"{i.kind} {i.project}: {i.path}:{i.line} ({i.upstream})" for i in entry.impacts]
    lines += [f"touches watched path {h.path} ({h.glob})" for h in entry.watched]
    return tuple(lines)


def _analyse_jobs(
    llm: DeepAnalyser,
    jobs: list[LlmJob],
    repos: list[int],
    progress: Callable[[int, int], None],
) -> Waits[list[LlmResult]]:
    """All jobs at once; with a budget per repository-day, one batch per repository, each
    against its own allowance (the day is this call's). The batches go to the pool together."""
    if not jobs:
        return []
    allowance = day_allowance(llm)
    if allowance is None:
        batches = [llm.submit(jobs, progress)]
    else:
        batches = [
            llm.submit(
                [job for job, rr in zip(jobs, repos, strict=True) if rr == r],
                progress,
                budget=allowance,
            )
            for r in dict.fromkeys(repos)
        ]
    results: list[LlmResult] = []
    for batch in batches:
        yield batch
        results.extend(batch.result())
    return results
