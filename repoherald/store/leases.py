"""Leases on repository-days: which worker is reporting a repository's day right now.

Any number of ``repoherald run`` processes (``--workers N`` on one machine,
or pods on many) share one store and one day's work. Before a worker
reports a repository-day it claims it here, in one write transaction that
reads the row and takes it, so two workers cannot both decide to do it. A
claim is a lease: it runs out ``lease_s`` seconds after it was taken or
last renewed, so a worker killed with ``-9`` loses its claims without
anyone cleaning up, and the next worker to ask takes them over. A worker
renews its leases while it works (:mod:`repoherald.pipeline.workshare`).

A finished day is kept as ``done`` with the fingerprint of its inputs
(version, repository, language, analysers...): a worker asking again with
the same inputs is told it is done, so a day is reported once however many
workers look at it; a change of inputs (a new model) makes it claimable
again. A day that failed is kept as ``failed``, so the worker's siblings in
the same run (started before it failed) do not all fail it again; a later
run retries it.

The functions take a store connection (:class:`repoherald.store.sql.Conn`)
whose caller holds the write transaction (or the day's lock), and ``now`` in
Unix seconds from one clock for everyone (the database server's, for
PostgreSQL), so the SQL is the same for both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any

from repoherald.store.sql import Conn


class LeaseState(StrEnum):
    WORKING = "working"
    """A worker holds it until ``expires_at`` (and renews it while it works)."""
    DONE = "done"
    """Reported (and delivered) for the inputs recorded with it."""
    FAILED = "failed"
    """Its worker failed it; the worker's siblings in the same run leave it alone."""


class Verdict(StrEnum):
    """What :func:`claim` says about a repository-day."""

    CLAIMED = "claimed"
    """It is this worker's now (it was free, or done for other inputs)."""
    TAKEN_OVER = "taken over"
    """It is this worker's now: the lease of a worker that stopped renewing ran out."""
    HELD = "held"
    """Another worker holds a live lease on it: leave it, look again later."""
    DONE = "done"
    """Reported for the same inputs by another worker of this run: nothing to do."""
    REPORTED = "reported"
    """Reported for the same inputs by an earlier run: nothing to do unless told to redo."""
    FAILED = "failed"
    """Another worker of this run failed it and says so: not tried again in this run."""

    @property
    def mine(self) -> bool:
        return self in (Verdict.CLAIMED, Verdict.TAKEN_OVER)

    @property
    def settled(self) -> bool:
        """Nothing left for anyone in this run."""
        return self in (Verdict.DONE, Verdict.REPORTED, Verdict.FAILED)


@dataclass(frozen=True, slots=True)
class Lease:
    """One row of ``work_leases``."""

    repo: str
    day: date
    state: LeaseState
    worker: str
    inputs: str
    expires_at: float
    takeovers: int
    """How many times the day was taken over from a worker whose lease ran out."""


COLUMNS = "repo, day, state, worker, inputs, expires_at, takeovers"


def _lease(row: Sequence[Any]) -> Lease:
    repo, day, state, worker, inputs, expires, takeovers = row
    return Lease(
        repo=str(repo),
        day=date.fromisoformat(str(day)),
        state=LeaseState(str(state)),
        worker=str(worker),
        inputs=str(inputs),
        expires_at=float(expires),
        takeovers=int(takeovers),
    )


def get(conn: Conn, repo: str, day: date) -> Lease | None:
    row = conn.execute(
        f"SELECT {COLUMNS} FROM work_leases WHERE repo = ? AND day = ?",
        (repo, day.isoformat()),
    ).fetchone()
    return None if row is None else _lease(row)


def every(conn: Conn) -> list[Lease]:
    rows = conn.execute(f"SELECT {COLUMNS} FROM work_leases ORDER BY repo, day")
    return [_lease(row) for row in rows.fetchall()]


def unfinished(conn: Conn, repo: str) -> list[date]:
    """Days of ``repo`` a worker claimed and never finished (it may still be at work)."""
    rows = conn.execute(
        "SELECT day FROM work_leases WHERE repo = ? AND state = ? ORDER BY day",
        (repo, LeaseState.WORKING.value),
    )
    return [date.fromisoformat(str(row[0])) for row in rows.fetchall()]


def judge(
    found: Lease | None, worker: str, inputs: str, now: float, started: float | None, redo: bool
) -> Verdict:
    """What a claim by ``worker`` finds, given the row it read under the write lock."""
    if found is None:
        return Verdict.CLAIMED
    live = found.expires_at > now and found.worker != worker
    if found.state is LeaseState.WORKING:
        if live:
            return Verdict.HELD
        return Verdict.CLAIMED if found.worker == worker else Verdict.TAKEN_OVER
    # A finished row's expires_at is when it was finished.
    since_start = started is not None and found.expires_at >= started
    if found.state is LeaseState.FAILED and since_start and found.worker != worker:
        return Verdict.FAILED
    if found.state is LeaseState.DONE and found.inputs == inputs:
        if started is None or since_start:
            return Verdict.DONE
        if not redo:
            return Verdict.REPORTED
    return Verdict.CLAIMED


def claim(
    conn: Conn,
    worker: str,
    repo: str,
    day: date,
    *,
    inputs: str,
    lease_s: float,
    now: float,
    started: float | None = None,
    redo: bool = False,
) -> Verdict:
    """Read the day's row and take it when :func:`judge` says it is this worker's.

    The caller holds the write transaction (or, for PostgreSQL, the row's lock),
    so reading and taking are one step. ``started`` is when this run started:
    a day done for the same inputs before it is :attr:`Verdict.REPORTED`, and
    taken again when ``redo`` is set (``--no-cache``); a day done since (by a
    sibling worker) is :attr:`Verdict.DONE` either way.
    """
    found = get(conn, repo, day)
    verdict = judge(found, worker, inputs, now, started, redo)
    if not verdict.mine:
        return verdict
    takeovers = (found.takeovers if found else 0) + (verdict is Verdict.TAKEN_OVER)
    params = (LeaseState.WORKING.value, worker, inputs, now + lease_s, takeovers)
    if found is None:
        conn.execute(
            f"INSERT INTO work_leases ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (repo, day.isoformat(), *params),
        )
    else:
        conn.execute(
            "UPDATE work_leases SET state = ?, worker = ?, inputs = ?, expires_at = ?,"
            " takeovers = ? WHERE repo = ? AND day = ?",
            (*params, repo, day.isoformat()),
        )
    return verdict


def renew(
    conn: Conn,
    worker: str,
    held: Sequence[tuple[str, date]],
    *,
    lease_s: float,
    now: float,
) -> list[tuple[str, date]]:
    """Push the leases ``worker`` still holds ``lease_s`` further; return those it lost."""
    lost = []
    for repo, day in held:
        kept = conn.execute(
            "UPDATE work_leases SET expires_at = ? WHERE repo = ? AND day = ?"
            " AND worker = ? AND state = ? RETURNING repo",
            (now + lease_s, repo, day.isoformat(), worker, LeaseState.WORKING.value),
        ).fetchall()
        if not kept:
            lost.append((repo, day))
    return lost


def finish(
    conn: Conn,
    worker: str,
    repo: str,
    day: date,
    *,
    ok: bool,
    now: float,
) -> bool:
    """Mark the day done or failed at ``now``; False when ``worker`` no longer held it (its
    lease ran out and another worker took it)."""
    state = LeaseState.DONE if ok else LeaseState.FAILED
    kept = conn.execute(
        "UPDATE work_leases SET state = ?, expires_at = ? WHERE repo = ? AND day = ?"
        " AND worker = ? AND state = ? RETURNING repo",
        (
            state.value,
            now,
            repo,
            day.isoformat(),
            worker,
            LeaseState.WORKING.value,
        ),
    ).fetchall()
    return bool(kept)
