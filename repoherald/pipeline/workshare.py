"""One day's work shared by every ``run`` process on a store: leases, renewed while held.

Each ``repoherald run`` (one of ``--workers N``, a pod, a cron job) is a
worker. Before it reports a repository-day it claims the day in the store
(:mod:`repoherald.store.leases`); a day another worker holds is looked at
again later, so a worker killed with ``-9`` has its days taken over once
its lease runs out; a day done for the same inputs is not done again. While
it works, a thread with its own store connection renews the worker's leases
every third of the lease, so only a worker that stopped loses them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from types import TracebackType

from repoherald._version import __version__
from repoherald.analysers import rules_analyser
from repoherald.config.settings import Settings
from repoherald.errors import RepoheraldError
from repoherald.pipeline.identity import RepoIdentity
from repoherald.store.base import Store
from repoherald.store.leases import Verdict

log = logging.getLogger("repoherald")

POLL_SECONDS = 1.0
"""The longest a worker waits before looking again at days other workers hold."""


def worker_name() -> str:
    """This process as a lease names it: host, pid and a nonce (a reused pid is someone else)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def inputs_of(settings: Settings, repo: RepoIdentity) -> str:
    """The fingerprint of what a repository-day's report is made from, but the commits.

    A day done for the same fingerprint is not done again; a new version,
    model, prompt, language, zone or place makes it claimable again. Hashed,
    so a source URL's credentials are not stored.
    """
    from repoherald.llm.analyser import PROMPT_VERSION

    parts = {
        "version": __version__,
        "key": repo.key,
        "source": repo.config.source,
        "github": repo.config.github,
        "branch": repo.config.branch,
        "lang": settings.lang,
        "tz": settings.tz_name,
        "rules": rules_analyser().name,
        "llm": None if settings.llm is None else [settings.llm.model, PROMPT_VERSION],
        "out": str(settings.out_dir),
        "path": settings.path_template,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


class Heartbeat:
    """Renews the leases its worker holds, from a thread with a store of its own.

    The worker's own connection is busy with the work (and SQLite's stays in
    its thread), so the renewals cannot wait for it. A lease found lost (the
    worker stalled for longer than the lease and another took the day over)
    is said once through ``on_lost``.
    """

    def __init__(
        self,
        open_store: Callable[[], Store],
        worker: str,
        lease_s: float,
        on_lost: Callable[[str], None],
    ) -> None:
        self._open = open_store
        self._worker = worker
        self._lease_s = lease_s
        self._on_lost = on_lost
        self._held: set[tuple[str, date]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def hold(self, keys: Iterable[tuple[str, date]]) -> None:
        with self._lock:
            self._held.update(keys)

    def drop(self, keys: Iterable[tuple[str, date]]) -> None:
        with self._lock:
            self._held.difference_update(keys)

    def _beat(self) -> None:
        store: Store | None = None
        try:
            while not self._stop.wait(self._lease_s / 3):
                with self._lock:
                    held = sorted(self._held)
                if not held:
                    continue
                try:
                    if store is None:
                        store = self._open()
                    lost = store.renew_repo_days(self._worker, held, self._lease_s)
                except RepoheraldError as exc:
                    # The next beat tries again; the lease lasts three beats.
                    log.warning("could not renew this worker's leases: %s", exc)
                    continue
                self.drop(lost)
                for repo, day in lost:
                    self._on_lost(
                        f"{repo} {day}: this worker's lease ran out and another worker took"
                        " the day over"
                    )
        finally:
            if store is not None:
                store.close()


@dataclass
class Claimed:
    """What one look at a repository's days found."""

    mine: list[date] = field(default_factory=list)
    """This worker's now: report them."""
    held: list[date] = field(default_factory=list)
    """Other workers hold them: look again later (their lease may run out)."""
    taken_over: list[date] = field(default_factory=list)
    """Among ``mine``, the days whose previous worker stopped renewing."""
    reported: list[date] = field(default_factory=list)
    """Reported by an earlier run for the same inputs: left as they are."""


@dataclass
class WorkShare:
    """This worker's side of the shared day: claims, renewals, and marking days finished."""

    store: Store
    heartbeat: Heartbeat
    worker: str
    lease_s: float
    started: float = field(default_factory=time.time)
    """When the run started (with ``--workers``, the parent's start): days done before it
    are done again when ``redo`` is set, and days from today on always."""
    redo: bool = False
    spread: tuple[int, int] = (0, 1)
    """(I, N): worker I of ``--workers N`` starts at its share of the queue."""

    @property
    def poll_s(self) -> float:
        """How long to wait before looking again at held days: a twentieth of the lease, so
        a killed worker's days are taken over within the lease and 5 %."""
        return min(POLL_SECONDS, self.lease_s / 20)

    def claim(self, repo: RepoIdentity, days: Iterable[date], inputs: str, today: date) -> Claimed:
        out = Claimed()
        for day in days:
            redo = self.redo or day >= today
            verdict = self.store.claim_repo_day(
                self.worker,
                repo.key,
                day,
                inputs=inputs,
                lease_s=self.lease_s,
                started=self.started,
                redo=redo,
            )
            if verdict.mine:
                out.mine.append(day)
                if verdict is Verdict.TAKEN_OVER:
                    out.taken_over.append(day)
            elif verdict is Verdict.HELD:
                out.held.append(day)
            elif verdict is Verdict.REPORTED:
                out.reported.append(day)
        self.heartbeat.hold((repo.key, d) for d in out.mine)
        return out

    def finish(
        self, repo: RepoIdentity, days: Iterable[date], *, ok: Callable[[date], bool]
    ) -> None:
        """Mark each day done or failed (a failed one is left to this worker's report for
        one lease, then retried by a later run)."""
        keys = [(repo.key, d) for d in days]
        self.heartbeat.drop(keys)
        for key, day in keys:
            self.store.finish_repo_day(self.worker, key, day, ok=ok(day))
