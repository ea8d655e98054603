"""``run``: every configured repository, one report per repository-day, catching up missed days.

This is the scheduled entry point. Each repository is run on its own (its
own time zone and language, its own failure), so one broken repository
never costs the others their reports; the outcome names each failure. What
they share is the run's model pool (:mod:`repoherald.llm.pool`): one
``concurrency`` for every repository's requests, with repositories
overlapping while they wait for it (:mod:`repoherald.pipeline.lanes`); one
circuit breaker, so a dead endpoint is found out once per run, not once per
repository; one token budget and one stage time (``[llm] stage_timeout``),
which bound the run, not each repository. Deliveries go out in the
configuration's order, each once its repository and those before it are done.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from repoherald.config.days import DaySelection
from repoherald.config.repos import RepoConfig
from repoherald.config.settings import Settings
from repoherald.errors import UsageError
from repoherald.llm.pool import ModelPool
from repoherald.pipeline.delivery import archive_of, deliver_repository
from repoherald.pipeline.events import Emitter, EventSink
from repoherald.pipeline.identity import RepoIdentity, identify
from repoherald.pipeline.lanes import Ended, Lanes
from repoherald.pipeline.run import RunResult, run_stepwise
from repoherald.pipeline.workshare import Heartbeat, WorkShare, inputs_of, worker_name
from repoherald.publish.deliver import Batch, Outcome
from repoherald.publish.registry import NamedTarget, build_all
from repoherald.store.base import Store
from repoherald.store.opener import open_store


@dataclass(frozen=True, slots=True)
class Shard:
    """``I/N``: this process takes every N-th repository, starting with the I-th, of the
    repositories sorted by a stable hash of their keys.

    Dealt, not hashed to a slot: hashing each name to ``hash % N`` leaves shards empty
    or doubled on small sets (two repositories, ``1/2`` got none and ``2/2`` both);
    dealing after a stable sort gives every shard ``len // N`` or one more.
    """

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not m or not 1 <= int(m[1]) <= int(m[2]):
            raise UsageError(f"--shard {text!r} must be I/N with 1 <= I <= N, e.g. 2/4")
        return cls(int(m[1]), int(m[2]))

    def deal(self, keys: list[str]) -> set[str]:
        """The keys of this shard; stable across runs and machines (not Python's salted
        hash), given the same set of keys."""
        ordered = sorted(keys, key=lambda k: (_stable_hash(k), k))
        return set(ordered[self.index - 1 :: self.count])


def _stable_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass
class RepoOutcome:
    """What ``run`` did for one repository."""

    repo: RepoIdentity
    days: tuple[date, ...]
    result: RunResult | None = None
    error: str | None = None
    deliveries: list[Outcome] = field(default_factory=list)
    """What each ``[[publish]]`` target did with this repository's days."""

    @property
    def name(self) -> str:
        """The repository's report key: what its failure lines and deliveries are filed under."""
        return self.repo.key

    def named(self, line: str) -> str:
        """``line`` naming the repository once: as it is, when it starts with one of the
        repository's names (sources put the name in their errors), else after ``key: ``."""
        names = (*self.repo.names, *(self.result.names if self.result else ()))
        if any(line.startswith((f"{n}: ", f"{n} ")) for n in names if n):
            return line
        return f"{self.name}: {line}"

    @property
    def ok(self) -> bool:
        delivered = not any(d.failed for d in self.deliveries)
        return delivered and self.error is None and (self.result is None or self.result.ok)


@dataclass
class ServiceResult:
    """The outcome of :func:`run_all`, one entry per repository taken."""

    outcomes: list[RepoOutcome] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    """Workers of ``run --workers`` that stopped before they finished, one line each."""

    @property
    def ok(self) -> bool:
        return not self.stopped and all(o.ok for o in self.outcomes)

    @property
    def repositories(self) -> int:
        """How many repositories the run took (several workers may each have some days of one)."""
        return len({o.name for o in self.outcomes})

    @property
    def failures(self) -> list[str]:
        out: list[str] = []
        for o in self.outcomes:
            if o.error:
                out.append(o.named(o.error))
            elif o.result is not None:
                out.extend(o.named(line) for line in o.result.failures)
            out.extend(d.line(status=False) for d in o.deliveries if d.failed)
        return out + self.stopped


def select_repos(
    repos: tuple[RepoConfig, ...], only: tuple[str, ...] = (), shard: Shard | None = None
) -> list[RepoIdentity]:
    """The repositories this process runs: those named by ``only``, then its shard's.

    Each is identified here, once; every later stage is handed that identity.
    """
    keyed: dict[str, RepoIdentity] = {}
    for cfg in repos:
        repo = identify(cfg)
        key = repo.key
        if key in keyed:
            raise UsageError(
                f"two repositories would both be filed as {key!r}: give one of them a `name`"
            )
        keyed[key] = repo
    chosen = list(keyed.items())
    if only:
        unknown = [n for n in only if n not in keyed and not _named(n, repos)]
        if unknown:
            raise UsageError(
                f"--only {unknown[0]!r} is not a configured repository: use one of "
                + ", ".join(sorted(keyed))
            )
        chosen = [(k, r) for k, r in chosen if k in only or r.config.name in only]
    if shard is not None:
        mine = shard.deal([k for k, _ in chosen])
        chosen = [(k, c) for k, c in chosen if k in mine]
    return [c for _, c in chosen]


def _named(name: str, repos: tuple[RepoConfig, ...]) -> bool:
    return any(cfg.name == name for cfg in repos)


def catch_up_days(
    last: date | None, today: date, max_days: int
) -> tuple[tuple[date, ...], str | None]:
    """Days after the newest reported one up to yesterday, at most ``max_days`` (newest kept)."""
    yesterday = today - timedelta(days=1)
    if last is None:
        return (yesterday,), None
    if last >= yesterday:
        return (), None
    first = last + timedelta(days=1)
    skipped = None
    if (yesterday - first).days + 1 > max_days:
        new_first = yesterday - timedelta(days=max_days - 1)
        skipped = (
            f"{(new_first - first).days} missed day(s) from {first} are older than"
            f" max_catch_up_days={max_days}: report them with --since {first} --until"
            f" {new_first - timedelta(days=1)}"
        )
        first = new_first
    return tuple(first + timedelta(days=i) for i in range((yesterday - first).days + 1)), skipped


def run_all(
    settings: Settings,
    *,
    catch_up: bool,
    only: tuple[str, ...] = (),
    shard: Shard | None = None,
    events: EventSink | tuple[EventSink, ...] = (),
    use_cache: bool = True,
    rebuild: bool = False,
    force: bool = False,
    worker: str | None = None,
    started: float | None = None,
    spread: tuple[int, int] = (0, 1),
) -> ServiceResult:
    """Run every selected repository; ``catch_up`` means no day was asked for.

    ``rebuild`` moves the store aside once, before the first repository (the
    record of reported days is carried over, so catch-up still knows them).
    The store is opened once and handed to every repository's stages. The
    ``[[publish]]`` targets' publishers are created first, so a bad table or
    a missing secret stops the run before anything is analysed.
    Every repository-day is claimed in the store first
    (:mod:`repoherald.pipeline.workshare`), so any number of ``run`` processes
    on the store share the work: ``worker`` names this one (default: host,
    pid and a nonce), ``started`` is when the shared run started (default: now), and
    ``spread`` (I, N) makes worker I of ``--workers N`` start at its share of the queue.
    """
    targets = build_all(settings.publish)
    sinks = events if isinstance(events, tuple) else (events,)
    emitter = Emitter(sinks)
    chosen = select_repos(settings.repos, only, shard)

    def on_wait(message: str) -> None:
        emitter.say(message, "store")

    with open_store(
        settings.db_path,
        url_env=settings.store_url_env,
        rebuild=rebuild,
        use_cache=use_cache,
        on_wait=on_wait,
    ) as store:
        name = worker or worker_name()
        heartbeat = Heartbeat(
            lambda: open_store(settings.db_path, url_env=settings.store_url_env, on_wait=on_wait),
            name,
            settings.lease_seconds,
            on_lost=emitter.say,
        )
        share = WorkShare(
            store,
            heartbeat,
            name,
            settings.lease_seconds,
            started=time.time() if started is None else started,
            # Days asked for by date are reported again, as by one process alone
            # (cheap from the cache); catch-up takes only days no run reported.
            redo=not use_cache or not catch_up,
            spread=spread,
        )
        with heartbeat:
            return _run_all(settings, store, chosen, catch_up, sinks, force, targets, share)


@dataclass
class _Pending:
    """A repository with days still to report (by this worker, or by whoever holds them)."""

    repo: RepoIdentity
    settings: Settings
    selection: DaySelection


def _run_all(
    settings: Settings,
    store: Store,
    chosen: list[RepoIdentity],
    catch_up: bool,
    sinks: tuple[EventSink, ...],
    force: bool,
    targets: tuple[NamedTarget, ...],
    share: WorkShare,
) -> ServiceResult:
    emitter = Emitter(sinks)
    result = ServiceResult()
    # One model pool for the whole run: every repository's requests share its
    # concurrency, pace, breaker, token budget and stage time, and repositories
    # overlap while they wait for it (the run is bounded by the model, not by
    # how many repositories there are).
    pool = ModelPool(settings.llm) if settings.llm else None
    batch = Batch(force=force)  # digest targets: one message once every repository is done
    unsent: deque[RepoOutcome] = deque()  # delivered in the order their runs started
    ended: set[int] = set()
    claimed: dict[int, tuple[date, ...]] = {}  # the days each started run holds leases on
    finished: list[tuple[RepoOutcome, tuple[date, ...]]] = []

    def deliver_ended() -> None:
        while unsent and id(unsent[0]) in ended:
            outcome = unsent.popleft()
            if targets:
                repo_settings = _settings_for(settings, outcome.repo)
                outcome.deliveries = _deliver(
                    repo_settings, targets, store, outcome, force, batch, emitter
                )
            days = claimed.pop(id(outcome), None)
            if days is None:
                continue
            if batch.pending:
                finished.append((outcome, days))  # finished once the digest is sent
            else:
                _finish(share, outcome, days)

    def on_end(outcome: RepoOutcome) -> Ended[RunResult]:
        def ended_with(run_result: RunResult | None, error: str | None) -> None:
            outcome.result, outcome.error = run_result, error
            ended.add(id(outcome))
            deliver_ended()

        return ended_with

    queue: list[_Pending] = []
    for repo in chosen:
        key = repo.key
        repo_settings = _settings_for(settings, repo)
        if catch_up:
            selection, note = _catch_up(repo_settings, key, store)
            if note:
                emitter.say(f"{key}: {note}")
        else:
            selection = replace(settings.selection, notices=())
        if not selection.days and not selection.latest:
            emitter.say(f"{key}: up to date")
            outcome = RepoOutcome(repo, ())
            result.outcomes.append(outcome)
            unsent.append(outcome)
            on_end(outcome)(None, None)
            continue
        queue.append(_Pending(repo, repo_settings, selection))
    # Days other workers hold are looked at again, between this worker's own
    # repositories and then every poll, until they are done or their worker's
    # lease runs out (then this worker takes them over). The runs this worker
    # starts overlap while they wait for the one model pool.
    fresh = deque(_rotated(queue, share.spread))
    waiting: list[_Pending] = []
    looked = time.monotonic()
    with pool.running() if pool is not None else nullcontext(), Lanes[RunResult](pool) as lanes:
        while fresh or waiting:
            if waiting and (not fresh or time.monotonic() - looked >= share.poll_s):
                fresh.extendleft(reversed(waiting))
                waiting = []
                looked = time.monotonic()
            item = fresh.popleft()
            days, held = _claim(item, share, emitter)
            if held:
                waiting.append(replace(item, selection=replace(item.selection, days=held)))
            if days is None:
                if not fresh and waiting:
                    # Only days others hold are left: finish this worker's own runs, then
                    # look again once a poll has passed (not in a loop of claims).
                    lanes.drain()
                    time.sleep(max(0.0, share.poll_s - (time.monotonic() - looked)))
                continue
            selection = (
                item.selection if item.selection.latest else replace(item.selection, days=days)
            )
            outcome = RepoOutcome(item.repo, selection.days)
            result.outcomes.append(outcome)
            unsent.append(outcome)
            claimed[id(outcome)] = days
            steps = run_stepwise(
                replace(item.settings, selection=selection),
                events=sinks,
                llm_pool=pool,
                store=store,
                identity=item.repo,
            )
            lanes.start(steps, on_end(outcome))
        lanes.drain()
    place = {repo.key: n for n, repo in enumerate(chosen)}
    if batch.pending:
        # One digest in the configuration's order, whichever repository this worker began with.
        for _, items in batch.pending.values():
            items.sort(key=lambda item: (place.get(item.name, len(place)), item.day))
        held_back = batch.flush(store)
        by_name = {o.name: o for o in result.outcomes}
        for delivery in held_back:
            by_name[delivery.repo].deliveries.append(delivery)
    for outcome, days in finished:
        _finish(share, outcome, days)
    # Said in the configuration's order, whichever this worker started with.
    result.outcomes.sort(key=lambda o: place.get(o.name, len(place)))
    return result


def _rotated(queue: list[_Pending], spread: tuple[int, int]) -> list[_Pending]:
    """The queue started at worker I's share of N (``--workers``), so workers started together
    do not all contend for the same first repository; a lone run keeps the configured order."""
    index, count = spread
    start = len(queue) * index // count
    return queue[start:] + queue[:start]


def _claim(
    item: _Pending, share: WorkShare, emitter: Emitter
) -> tuple[tuple[date, ...] | None, tuple[date, ...]]:
    """The days of ``item`` this worker reports now (None: none), and those others hold.

    ``latest`` (the newest day with commits) is not known before the
    repository is read, so it is reported without a lease.
    """
    selection = item.selection
    if selection.latest:
        return (), ()
    today = selection.today or datetime.now(ZoneInfo(item.settings.tz_name)).date()
    claimed = share.claim(item.repo, selection.days, inputs_of(item.settings, item.repo), today)
    for day in claimed.taken_over:
        emitter.say(f"{item.repo.key} {day}: taken over from a worker that stopped", "store")
    if claimed.reported:
        days = ", ".join(str(d) for d in claimed.reported)
        emitter.say(
            f"{item.repo.key}: {days} already reported for the same inputs"
            " (--date reports a day again)",
            "store",
        )
    return (tuple(claimed.mine) if claimed.mine else None), tuple(claimed.held)


def _finish(share: WorkShare, outcome: RepoOutcome, days: tuple[date, ...]) -> None:
    """Each claimed day done when its report landed and nothing of the repository failed."""
    landed = {d.day for d in outcome.result.days} if outcome.result is not None else set()
    share.finish(outcome.repo, days, ok=lambda day: outcome.ok and day in landed)


def _deliver(
    settings: Settings,
    targets: tuple[NamedTarget, ...],
    store: Store,
    outcome: RepoOutcome,
    force: bool,
    batch: Batch,
    events: Emitter,
) -> list[Outcome]:
    """Publish the days just reported, and retry the days whose delivery failed before."""
    key = outcome.repo.key
    return deliver_repository(
        store,
        targets,
        outcome.repo,
        (d.day for d in outcome.result.days) if outcome.result else (),
        settings.lang,
        archive_of(settings),
        say=lambda note: events.say(note, "publish", key),
        retry_failed=True,
        force=force,
        batch=batch,
    ).outcomes


def _settings_for(settings: Settings, repo: RepoIdentity) -> Settings:
    cfg = repo.config
    return replace(
        settings,
        repos=(cfg,),
        tz_name=cfg.tz or settings.tz_name,
        lang=cfg.lang or settings.lang,
        report_name=repo.key,
    )


def _catch_up(settings: Settings, key: str, store: Store) -> tuple[DaySelection, str | None]:
    today = datetime.now(ZoneInfo(settings.tz_name)).date()
    last = store.latest_report_day(key)
    days, note = catch_up_days(last, today, settings.max_catch_up_days)
    # A worker killed between landing a day's report and finishing it (delivering it)
    # left the day claimed: it is taken over too, though reported days are otherwise done.
    left = [d for d in store.unfinished_repo_days(key) if d < today]
    return DaySelection(days=tuple(sorted({*days, *left})), today=today), note
