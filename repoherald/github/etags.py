"""ETags and bodies of GitHub answers, in the SQLite store, for conditional requests.

GitHub does not count a ``304 Not Modified`` against the rate limit, so a
re-run that sends ``If-None-Match`` for everything it fetched before costs
almost nothing. The cache keeps the body and the ``Link`` header (a 304 need
not repeat it, and pagination follows it) keyed by URL; URLs never carry a
token. Entries unused for :data:`KEEP_DAYS` are dropped when the cache opens,
so the store does not grow with every day ever reported.

One connection is shared by the client's worker threads, behind a lock.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from repoherald.errors import StoreError
from repoherald.store.db import Store
from repoherald.store.migrations import apply_pending

KEEP_DAYS = 30


@dataclass(frozen=True, slots=True)
class Cached:
    """One stored answer."""

    etag: str
    body: bytes
    link: str


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EtagCache:
    """``url -> (etag, body, link)``; use :meth:`open` for the store file or memory."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | None) -> EtagCache:
        """The cache in the store at ``path`` (migrated first), or in memory when None."""
        target = str(path) if path is not None else ":memory:"
        if path is not None:
            Store.open(path).close()  # created privately and migrated, as for every user
        try:
            conn = sqlite3.connect(
                target, timeout=30, isolation_level=None, check_same_thread=False
            )
            if path is None:
                conn.execute("BEGIN IMMEDIATE")
                apply_pending(conn, _now())
                conn.execute("COMMIT")
            cutoff = (datetime.now(UTC) - timedelta(days=KEEP_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
            conn.execute("DELETE FROM github_etags WHERE used_at < ?", (cutoff,))
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StoreError(
                f"cannot use the store {target} for GitHub ETags: {exc} (set REPOHERALD_HOME to"
                " a writable directory)"
            ) from None
        return cls(conn)

    def get(self, url: str) -> Cached | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT etag, body, link FROM github_etags WHERE url = ?", (url,)
            ).fetchone()
        return Cached(row[0], bytes(row[1]), row[2]) if row else None

    def put(self, url: str, etag: str, body: bytes, link: str) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO github_etags (url, etag, body, link, used_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (url, etag, body, link, _now()),
            )

    def touch(self, url: str) -> None:
        """Mark an entry as still in use (a 304 confirmed it)."""
        with self._lock:
            self._conn.execute("UPDATE github_etags SET used_at = ? WHERE url = ?", (_now(), url))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
