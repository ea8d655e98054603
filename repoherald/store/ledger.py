"""The publish ledger: what each target was sent, for each repository and day.

Publishing to an issue tracker or a chat must not post the same day twice
when a run is repeated, and must retry what failed. The ledger keeps one row
per (target, repository, day) describing the last attempt: its status, the
content and its hash, the remote id of what exists on the other side (an
issue number, a message id), how many attempts were made and the last
error. A failed attempt keeps the remote id and ``sent_at`` of an earlier
success, so a publisher can still edit what it posted before.

Typical use by a publisher::

    entry = store.ledger_get(target, repo, day)
    if entry and entry.status is LedgerStatus.SENT and entry.content_hash == content_hash(text):
        return  # already sent, unchanged
    ... send (or edit entry.remote_id) ...
    store.ledger_record(target, repo, day, status=..., content=text, remote_id=..., error=...)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from repoherald.redact import redact
from repoherald.store.runs import now_text
from repoherald.store.sql import Conn


class LedgerStatus(StrEnum):
    SENT = "sent"
    FAILED = "failed"
    SKIPPED = "skipped"
    """Not sent on purpose (a day without commits, for a target without ``send_empty``):
    not retried, and sent after all if the day's report changes."""


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One (target, repository, day) row of the ledger; times are UTC."""

    target: str
    repo: str
    day: date
    status: LedgerStatus
    content: str
    content_hash: str
    remote_id: str | None
    attempts: int
    last_error: str
    first_attempt_at: datetime
    last_attempt_at: datetime
    sent_at: datetime | None


def content_hash(content: str) -> str:
    """The hash the ledger records for ``content`` (compare before sending again)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


COLUMNS = (
    "target, repo, day, status, content, content_hash, remote_id, attempts, last_error,"
    " first_attempt_at, last_attempt_at, sent_at"
)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _entry(row: tuple[object, ...]) -> LedgerEntry:
    target, repo, day, status, content, digest, remote, attempts, error, first, last, sent = row
    return LedgerEntry(
        target=str(target),
        repo=str(repo),
        day=date.fromisoformat(str(day)),
        status=LedgerStatus(str(status)),
        content=str(content),
        content_hash=str(digest),
        remote_id=None if remote is None else str(remote),
        attempts=int(str(attempts)),
        last_error=str(error),
        first_attempt_at=_time(str(first)),
        last_attempt_at=_time(str(last)),
        sent_at=None if sent is None else _time(str(sent)),
    )


def get(conn: Conn, target: str, repo: str, day: date) -> LedgerEntry | None:
    row = conn.execute(
        f"SELECT {COLUMNS} FROM publish_ledger WHERE target = ? AND repo = ? AND day = ?",
        (target, repo, day.isoformat()),
    ).fetchone()
    return None if row is None else _entry(row)


def entries(conn: Conn, target: str | None = None, day: date | None = None) -> list[LedgerEntry]:
    where, params = ["1 = 1"], []
    if target is not None:
        where.append("target = ?")
        params.append(target)
    if day is not None:
        where.append("day = ?")
        params.append(day.isoformat())
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM publish_ledger WHERE {' AND '.join(where)}"
        " ORDER BY day, target, repo",
        params,
    )
    return [_entry(row) for row in rows]


def record(
    conn: Conn,
    target: str,
    repo: str,
    day: date,
    status: LedgerStatus,
    content: str,
    remote_id: str | None,
    error: str,
) -> None:
    """Upsert the row for one attempt; the caller holds the write transaction."""
    now = now_text()
    conn.execute(
        f"INSERT INTO publish_ledger ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)"
        " ON CONFLICT (target, repo, day) DO UPDATE SET"
        " status = excluded.status, content = excluded.content,"
        " content_hash = excluded.content_hash,"
        " remote_id = COALESCE(excluded.remote_id, publish_ledger.remote_id),"
        " attempts = publish_ledger.attempts + 1, last_error = excluded.last_error,"
        " last_attempt_at = excluded.last_attempt_at,"
        " sent_at = COALESCE(excluded.sent_at, publish_ledger.sent_at)",
        (
            target,
            repo,
            day.isoformat(),
            status.value,
            redact(content),
            content_hash(content),
            None if remote_id is None else redact(remote_id),
            redact(error) if status is LedgerStatus.FAILED else "",
            now,
            now,
            now if status is LedgerStatus.SENT else None,
        ),
    )
