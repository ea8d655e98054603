"""ETags and bodies of GitHub answers, kept in the store for conditional requests.

GitHub does not count a ``304 Not Modified`` against the rate limit, so a
re-run that sends ``If-None-Match`` for everything it fetched before costs
almost nothing. The cache keeps the body and the ``Link`` header (a 304 need
not repeat it, and pagination follows it) keyed by URL; URLs never carry a
token. Entries unused for :data:`KEEP_DAYS` are dropped when the store first
serves the cache in a run, so the store does not grow with every day ever
reported.

The GitHub client sees only :class:`~repoherald.store.base.EtagCache`: the
store's :attr:`~repoherald.store.base.Store.etags` in a run, or
:class:`MemoryEtags` where no store is open (a publisher, a unit test).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

from repoherald.store.base import Cached
from repoherald.store.runs import now_text
from repoherald.store.sql import Conn, upsert

KEEP_DAYS = 30

T = TypeVar("T")


class Guard(Protocol):
    """How the store runs a cache operation: a damaged store is a miss, not a failure."""

    def __call__(self, op: Callable[[], T], fallback: T) -> T: ...


class MemoryEtags:
    """The cache for one process only: what a client uses when no store is open."""

    def __init__(self) -> None:
        self._rows: dict[str, Cached] = {}
        self._lock = threading.Lock()

    def get(self, url: str) -> Cached | None:
        with self._lock:
            return self._rows.get(url)

    def put(self, url: str, etag: str, body: bytes, link: str) -> None:
        with self._lock:
            self._rows[url] = Cached(etag, body, link)

    def touch(self, url: str) -> None:
        """Nothing to do: an entry in memory lives as long as the process."""


class StoreEtags:
    """The cache in the store's file, on a connection the store opens when first asked.

    The GitHub client calls it from its worker threads while the run uses the
    store's own connection on the main thread, so it has a connection of its
    own (usable from any thread, one call at a time behind a lock) and writes
    each answer on its own, as before: a rolled-back report never loses them.
    """

    def __init__(self, connect: Callable[[], Conn], guard: Guard) -> None:
        self._connect = connect
        self._guard = guard
        self._conn: Conn | None = None
        self._lock = threading.Lock()

    def _opened(self) -> Conn:
        if self._conn is None:
            conn = self._connect()
            cutoff = datetime.now(UTC) - timedelta(days=KEEP_DAYS)
            conn.execute(
                "DELETE FROM github_etags WHERE used_at < ?",
                (cutoff.strftime("%Y-%m-%dT%H:%M:%SZ"),),
            )
            self._conn = conn
        return self._conn

    def get(self, url: str) -> Cached | None:
        def op() -> Cached | None:
            row = (
                self._opened()
                .execute("SELECT etag, body, link FROM github_etags WHERE url = ?", (url,))
                .fetchone()
            )
            return Cached(row[0], bytes(row[1]), row[2]) if row else None

        with self._lock:
            return self._guard(op, None)

    def put(self, url: str, etag: str, body: bytes, link: str) -> None:
        def op() -> None:
            self._opened().execute(
                upsert("github_etags", ("url", "etag", "body", "link", "used_at"), ("url",)),
                (url, etag, body, link, now_text()),
            )

        with self._lock:
            self._guard(op, None)

    def touch(self, url: str) -> None:
        """Mark an entry as still in use (a 304 confirmed it)."""

        def op() -> None:
            self._opened().execute(
                "UPDATE github_etags SET used_at = ? WHERE url = ?", (now_text(), url)
            )

        with self._lock:
            self._guard(op, None)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
