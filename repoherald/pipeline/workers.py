"""``run --workers N``: N processes on this machine share one run through the store.

Each worker is a whole ``run`` (:func:`repoherald.pipeline.service.run_all`)
with its own store connection; the store's leases deal the repository-days
between them (:mod:`repoherald.pipeline.workshare`), exactly as between
pods on different machines. The parent starts them, waits, and combines
their outcomes into one, so the summary and the exit status are those of
one run. A worker that dies (``kill -9``, out of memory) is a failure line of
its own; its days are taken over by the others when its leases run out.

Workers are spawned, not forked: the parent may hold threads and open
connections, which a fork would copy half-way. Settings hold live publishers
and are rebuilt in each worker from ``make_settings``, which must pickle
(a :func:`functools.partial` of a module-level function).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from repoherald.config.settings import Settings
from repoherald.errors import RepoheraldError
from repoherald.pipeline.events import Event
from repoherald.pipeline.service import (
    RepoOutcome,
    ServiceResult,
    Shard,
    run_all,
    select_repos,
)
from repoherald.pipeline.workshare import worker_name
from repoherald.store.opener import open_store


@dataclass(frozen=True)
class WorkerRun:
    """What every worker is asked to do (picklable: plain data and module functions)."""

    make_settings: Callable[[], Settings]
    catch_up: bool
    only: tuple[str, ...]
    shard: Shard | None
    use_cache: bool
    force: bool
    say: Callable[[str], None]
    """Prints one message line (the CLI's redacting, printable ``say``)."""
    started: float
    count: int


class _Messages:
    """The worker's event sink: its one-line messages, prefixed with the worker's number."""

    def __init__(self, number: int, say: Callable[[str], None]) -> None:
        self.number = number
        self.say = say

    def __call__(self, event: Event) -> None:
        if event.kind == "message":
            self.say(f"[worker {self.number}] {event.message}")


def _work(number: int, job: WorkerRun, pipe: Connection) -> None:
    """One worker process: run, then send the outcome (or the error) to the parent."""
    try:
        result: Any = run_all(
            job.make_settings(),
            catch_up=job.catch_up,
            only=job.only,
            shard=job.shard,
            events=_Messages(number, job.say),
            use_cache=job.use_cache,
            force=job.force,
            worker=f"{worker_name()}:w{number}",
            started=job.started,
            spread=(number - 1, job.count),
        )
    except BaseException as exc:  # the parent re-raises it, as one process would
        result = exc if isinstance(exc, RepoheraldError) else RepoheraldError(repr(exc))
    pipe.send(result)
    pipe.close()


def run_workers(
    make_settings: Callable[[], Settings],
    count: int,
    *,
    catch_up: bool,
    only: tuple[str, ...] = (),
    shard: Shard | None = None,
    use_cache: bool = True,
    rebuild: bool = False,
    force: bool = False,
    say: Callable[[str], None],
) -> ServiceResult:
    """Run ``count`` workers on this machine and combine what they did.

    The choice of repositories is checked here first (a usage error is one
    line, not ``count``); ``rebuild`` and the migrations happen once, here,
    before any worker opens the store.
    """
    settings = make_settings()
    order = [repo.key for repo in select_repos(settings.repos, only, shard)]
    open_store(settings.db_path, rebuild=rebuild, use_cache=use_cache).close()
    job = WorkerRun(make_settings, catch_up, only, shard, use_cache, force, say, time.time(), count)
    context = multiprocessing.get_context("spawn")
    started: list[tuple[BaseProcess, Connection]] = []
    try:
        for number in range(1, count + 1):
            receiver, sender = context.Pipe(duplex=False)
            process: BaseProcess = context.Process(
                target=_work, args=(number, job, sender), name=f"repoherald-worker-{number}"
            )
            process.start()
            sender.close()
            started.append((process, receiver))
        combined = _combine(started)
        place = {key: n for n, key in enumerate(order)}
        combined.outcomes.sort(key=lambda o: place.get(o.name, len(place)))
        return combined
    finally:
        for process, _ in started:
            if process.is_alive():
                process.terminate()
            process.join()


def _combine(started: list[tuple[BaseProcess, Connection]]) -> ServiceResult:
    combined = ServiceResult()
    errors: list[RepoheraldError] = []
    for number, (process, pipe) in enumerate(started, 1):
        try:
            got = pipe.recv()
        except EOFError:
            got = None
        process.join()
        if isinstance(got, ServiceResult):
            combined.outcomes.extend(got.outcomes)
        elif isinstance(got, RepoheraldError):
            errors.append(got)
        else:
            combined.stopped.append(
                f"worker {number} (pid {process.pid}) stopped before it finished"
                f" ({_how(process.exitcode)}): the days it held are taken over by the other"
                " workers once its leases run out, or by the next run"
            )
    if errors and not combined.outcomes:
        raise errors[0]
    combined.stopped.extend(str(e) for e in errors)
    combined.outcomes = _without_repeats(combined.outcomes)
    return combined


def _without_repeats(outcomes: list[RepoOutcome]) -> list[RepoOutcome]:
    """Every worker finds an up-to-date repository up to date: one of them says so."""
    busy = {o.name for o in outcomes if not _idle(o)}
    seen: set[str] = set()
    kept = []
    for o in outcomes:
        if _idle(o) and (o.name in busy or o.name in seen):
            continue
        seen.add(o.name)
        kept.append(o)
    return kept


def _idle(o: RepoOutcome) -> bool:
    return o.result is None and o.error is None and not o.deliveries


def _how(code: int | None) -> str:
    if code is not None and code < 0:
        return f"killed by signal {-code}"
    return f"exit status {code}"
