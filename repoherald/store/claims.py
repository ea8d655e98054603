"""Claims on deliveries: which process is sending a repository-day to a target right now.

A delivery is claimed in the store, in the same write transaction
(``BEGIN IMMEDIATE``) that reads the ledger, before anything is sent. So two
processes sharing a home (two ``publish``, two ``run``, a cron job and a
person) cannot both decide to send the same day: the second sees the
first's claim and leaves the delivery to it.

A claim names its holder: host, pid and the process's start (boot id and
start tick on Linux), so a pid reused by another process does not keep a
dead holder's claim alive. A process killed while it held a claim (``kill
-9`` mid-POST) leaves it behind; whoever finds it next cannot know whether
the message went out, so the claim becomes ``uncertain`` ("may have been
sent") and stays in the store until a delivery settles it. A claim from
another host cannot be checked, so it is trusted for :data:`LEASE` only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from functools import cache
from pathlib import Path

from repoherald.store import ledger
from repoherald.store.ledger import LedgerEntry
from repoherald.store.runs import now_text, process_gone, this_host
from repoherald.store.sql import Conn, split_columns, upsert

LEASE = timedelta(hours=1)
"""How long a claim held on another host counts as alive: no delivery takes this long."""

COLUMNS = "target, repo, day, state, content_hash, host, pid, started, claimed_at"


class ClaimState(StrEnum):
    SENDING = "sending"
    """A process is delivering it now (or was, if it died)."""
    UNCERTAIN = "uncertain"
    """Its holder died mid-delivery: the target may or may not have it."""


@dataclass(frozen=True, slots=True)
class Owner:
    """The process holding a claim."""

    host: str
    pid: int
    started: str
    """The process's start (``<boot id>:<start tick>`` on Linux), empty when unknown."""

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"


@dataclass(frozen=True, slots=True)
class Claim:
    """One row of ``publish_claims``."""

    target: str
    repo: str
    day: date
    state: ClaimState
    content_hash: str
    owner: Owner
    claimed_at: datetime


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""


def process_start(pid: int) -> str:
    """When process ``pid`` started, as ``<boot id>:<start tick>``; empty where unknown.

    The start tick is field 22 of ``/proc/<pid>/stat``, read after the
    command name (which may contain spaces and parentheses).
    """
    stat = _read(f"/proc/{pid}/stat")
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20:
        return ""
    return f"{_boot_id()}:{fields[19]}"


@cache
def _boot_id() -> str:
    return _read("/proc/sys/kernel/random/boot_id").strip()


def this_owner() -> Owner:
    """This process, as a claim records it."""
    pid = os.getpid()
    return Owner(this_host(), pid, process_start(pid))


def alive(claim: Claim, me: Owner) -> bool:
    """Whether the claim's holder may still be delivering."""
    owner = claim.owner
    if owner.host != me.host:
        return datetime.now(UTC) - claim.claimed_at < LEASE
    if owner.pid == me.pid and owner.started == me.started:
        return True  # this process: a claim it holds is released before it moves on
    if process_gone(owner.pid):
        return False
    return not owner.started or process_start(owner.pid) in ("", owner.started)


def _claim(row: tuple[object, ...]) -> Claim:
    target, repo, day, state, digest, host, pid, started, at = row
    return Claim(
        target=str(target),
        repo=str(repo),
        day=date.fromisoformat(str(day)),
        state=ClaimState(str(state)),
        content_hash=str(digest),
        owner=Owner(str(host), int(str(pid)), str(started)),
        claimed_at=datetime.fromisoformat(str(at).replace("Z", "+00:00")),
    )


def get(conn: Conn, target: str, repo: str, day: date) -> Claim | None:
    row = conn.execute(
        f"SELECT {COLUMNS} FROM publish_claims WHERE target = ? AND repo = ? AND day = ?",
        (target, repo, day.isoformat()),
    ).fetchone()
    return None if row is None else _claim(row)


def for_target(conn: Conn, target: str) -> list[Claim]:
    rows = conn.execute(f"SELECT {COLUMNS} FROM publish_claims WHERE target = ?", (target,))
    return [_claim(row) for row in rows]


def take(conn: Conn, target: str, repo: str, day: date, content_hash: str, me: Owner) -> None:
    """Hold the claim (replacing a dead holder's); the caller holds the write transaction."""
    conn.execute(
        upsert("publish_claims", split_columns(COLUMNS), ("target", "repo", "day")),
        (
            target,
            repo,
            day.isoformat(),
            ClaimState.SENDING.value,
            content_hash,
            me.host,
            me.pid,
            me.started,
            now_text(),
        ),
    )


def set_state(conn: Conn, target: str, repo: str, day: date, state: ClaimState) -> None:
    conn.execute(
        "UPDATE publish_claims SET state = ? WHERE target = ? AND repo = ? AND day = ?",
        (state.value, target, repo, day.isoformat()),
    )


def release(conn: Conn, target: str, repo: str, day: date) -> None:
    conn.execute(
        "DELETE FROM publish_claims WHERE target = ? AND repo = ? AND day = ?",
        (target, repo, day.isoformat()),
    )


class Decision(StrEnum):
    """What :func:`decide` says about a delivery."""

    SEND = "send"
    """The claim is this process's: send."""
    UNCHANGED = "unchanged"
    CHANGED = "changed"
    BUSY = "busy"
    """Another live process holds the claim: leave the delivery to it."""
    UNCERTAIN = "uncertain"
    """A dead holder may have sent it: not sent again without being told to."""


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    entry: LedgerEntry | None
    """The ledger's row before this delivery."""
    claim: Claim | None = None
    """The claim found: the live holder's (BUSY), or a dead holder's (UNCERTAIN, or SEND
    when told to send again)."""


def judge(
    conn: Conn,
    target: str,
    repo: str,
    day: date,
    content: str,
    *,
    resend_changed: bool,
    send_uncertain: bool,
    me: Owner,
) -> Verdict:
    """What :func:`decide` would say, without writing anything (for ``--dry-run``)."""
    entry = ledger.get(conn, target, repo, day)
    found = get(conn, target, repo, day)
    if found is not None and found.state is ClaimState.SENDING and alive(found, me):
        return Verdict(Decision.BUSY, entry, found)
    if found is None and entry is not None and entry.status is ledger.LedgerStatus.SENT:
        if entry.content_hash == ledger.content_hash(content):
            return Verdict(Decision.UNCHANGED, entry)
        if not resend_changed:
            return Verdict(Decision.CHANGED, entry)
    if found is not None and not send_uncertain:
        return Verdict(Decision.UNCERTAIN, entry, found)
    return Verdict(Decision.SEND, entry, found)


def decide(
    conn: Conn,
    target: str,
    repo: str,
    day: date,
    content: str,
    *,
    resend_changed: bool,
    send_uncertain: bool,
    me: Owner,
) -> Verdict:
    """Read the ledger and the claim, and take the claim when this process is to send.

    The caller holds the write transaction, so reading and claiming are one
    step: two processes cannot both find the day unsent and both claim it.
    ``content`` is the publication's content hash; ``resend_changed`` sends a
    day whose report changed since it was sent (``--force``, or a target that
    edits in place); ``send_uncertain`` sends a day a dead holder may have sent
    (``--force``, or a target that finds what it sent before sending again).
    A dead holder's claim is marked uncertain either way, so it is not
    forgotten if this delivery fails too.
    """
    verdict = judge(
        conn,
        target,
        repo,
        day,
        content,
        resend_changed=resend_changed,
        send_uncertain=send_uncertain,
        me=me,
    )
    if verdict.decision in (Decision.UNCERTAIN, Decision.SEND) and verdict.claim is not None:
        set_state(conn, target, repo, day, ClaimState.UNCERTAIN)
    if verdict.decision is Decision.SEND:
        take(conn, target, repo, day, content, me)
    return verdict
