"""Connecting to the store, waiting for other runs, and naming what went wrong.

Several runs may share one home (a cron job and a person, or two cron jobs
started by the same minute). SQLite serialises them with locks; this module
makes every wait bounded, announced once, and explained in one line when it
runs out — and keeps "the store is busy" apart from "the store is damaged",
because the advice for the two is opposite.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from repoherald.errors import StoreBusyError, StoreDamagedError, StoreError
from repoherald.redact import redact
from repoherald.store.files import damaged_message

log = logging.getLogger("repoherald")

DEFAULT_WAIT_SECONDS = 60.0
"""How long a run waits for another run's write lock before giving up."""

QUIET_WAIT_SECONDS = 0.5
"""Waits shorter than this are normal contention and are not announced."""

_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}


class Waiter:
    """Announces, once per store, that this run is waiting for another one."""

    def __init__(
        self, path: Path, on_wait: Callable[[str], None] | None, wait_seconds: float
    ) -> None:
        self.path = path
        self.on_wait = on_wait
        self.wait_seconds = wait_seconds
        self.announced = False

    def announce(self) -> None:
        if self.announced:
            return
        self.announced = True
        message = (
            f"waiting for another repoherald run to release the store {self.path}"
            f" (up to {self.wait_seconds:g} s)"
        )
        if self.on_wait is not None:
            self.on_wait(redact(message))
        else:
            log.warning("%s", redact(message))

    def busy_error(self) -> StoreBusyError:
        return StoreBusyError(
            redact(
                f"the store {self.path} is busy: another repoherald run held it for over"
                f" {self.wait_seconds:g} s; wait for that run to finish, then re-run"
            )
        )


def primary_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of ``exc`` (0 when Python raised it itself)."""
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def is_busy(exc: sqlite3.Error) -> bool:
    return primary_code(exc) in _BUSY


def is_damage(exc: sqlite3.Error) -> bool:
    return primary_code(exc) in _DAMAGED


def store_error(exc: sqlite3.Error, waiter: Waiter) -> StoreError:
    """The one-line :class:`StoreError` for an SQLite failure."""
    path = waiter.path
    if is_busy(exc):
        return waiter.busy_error()
    if is_damage(exc):
        return StoreDamagedError(redact(damaged_message(path, str(exc))))
    return StoreError(
        redact(
            f"cannot use the store {path}: {exc}; check that its directory is writable and"
            " has free space, or set REPOHERALD_HOME elsewhere"
        )
    )


def connect(path: Path, waiter: Waiter, *, threads: bool = False) -> sqlite3.Connection:
    """Open ``path`` in WAL mode with the busy timeout set before anything else runs.

    ``threads``: the connection may be used from any thread (its user serialises the calls).
    """
    conn = sqlite3.connect(
        path, timeout=waiter.wait_seconds, isolation_level=None, check_same_thread=not threads
    )
    try:
        _switch_to_wal(conn, waiter)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _switch_to_wal(conn: sqlite3.Connection, waiter: Waiter) -> None:
    """Retry the switch: it needs an exclusive lock and SQLite will not wait for it.

    On a fresh file, a second process asking for WAL while the first holds
    its lock gets SQLITE_BUSY at once (the busy handler is bypassed to avoid
    a deadlock), so the wait has to happen here.
    """
    started = time.monotonic()
    delay = 0.005
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() in ("wal", "memory"):
                return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        waited = time.monotonic() - started
        if waited > waiter.wait_seconds:
            raise waiter.busy_error()
        if waited > QUIET_WAIT_SECONDS:
            waiter.announce()
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def begin_immediate(conn: sqlite3.Connection, waiter: Waiter) -> None:
    """Take the write lock, waiting quietly at first, then announced, then giving up."""
    quiet_ms = int(min(QUIET_WAIT_SECONDS, waiter.wait_seconds) * 1000)
    conn.execute(f"PRAGMA busy_timeout = {quiet_ms}")
    try:
        conn.execute("BEGIN IMMEDIATE")
        return
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(waiter.wait_seconds * 1000)}")
    waiter.announce()
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise waiter.busy_error() from None
        raise
