"""SQLite store: the cache that makes a re-run free, and the log of runs.

A commit's facts are keyed by (SHA, extractor identity) and its analysis by
(SHA, analyser identity), so a second run of the same day reads everything
back instead of recomputing it, and changing the rules or the area
configuration invalidates exactly what it should.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from repoherald.errors import StoreError
from repoherald.models import (
    Analysis,
    Commit,
    Facts,
    analysis_from_dict,
    commit_from_dict,
    facts_from_dict,
    to_jsonable,
)
from repoherald.store.migrations import MIGRATIONS


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _dumps(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), ensure_ascii=False, separators=(",", ":"))


class Store:
    """One SQLite database file; open it with :meth:`open`."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (creating if needed) and migrate the database at ``path``."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            store = cls(conn, path)
            store.migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot use the store {path}: {exc} (move the file away or set REPOHERALD_HOME)"
            ) from None
        except OSError as exc:
            raise StoreError(
                f"cannot create the store {path}: {exc.strerror} (set REPOHERALD_HOME to a"
                " writable directory)"
            ) from None
        return store

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """All or nothing: a failure (or Ctrl-C) leaves the store as it was, then re-raises."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def migrate(self) -> list[int]:
        """Apply the migrations that have not run yet; return their numbers."""
        c = self.conn
        c.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in c.execute("SELECT version FROM schema_migrations")}
        known = {n for n, _, _ in MIGRATIONS}
        if done - known:
            raise StoreError(
                f"the store {self.path} was written by a newer repoherald (schema"
                f" {max(done)}): upgrade repoherald or set REPOHERALD_HOME elsewhere"
            )
        applied = []
        for number, name, sql in MIGRATIONS:
            if number in done:
                continue
            with self._transaction():
                for statement in sql.split(";"):
                    if statement.strip():
                        c.execute(statement)
                c.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (number, name, _now()),
                )
            applied.append(number)
        return applied

    # -- commits and their analysis --------------------------------------

    def load(
        self, shas: Sequence[str], extractor: str, analyser: str
    ) -> dict[str, tuple[Commit, Facts, Analysis]]:
        """Everything cached for ``shas`` under these identities (missing ones omitted)."""
        out: dict[str, tuple[Commit, Facts, Analysis]] = {}
        for start in range(0, len(shas), 500):
            chunk = list(shas[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT c.sha, c.data, f.data, a.data FROM commits c"
                f" JOIN facts f ON f.sha = c.sha AND f.extractor = ?"
                f" JOIN analyses a ON a.sha = c.sha AND a.analyser = ?"
                f" WHERE c.sha IN ({marks})",
                (extractor, analyser, *chunk),
            )
            for sha, c_json, f_json, a_json in rows:
                out[sha] = (
                    commit_from_dict(json.loads(c_json)),
                    facts_from_dict(json.loads(f_json)),
                    analysis_from_dict(json.loads(a_json)),
                )
        return out

    def save(
        self,
        repo: str,
        items: Iterable[tuple[Commit, Facts, Analysis]],
        extractor: str,
    ) -> int:
        """Store commits, their file changes, facts and analyses in one transaction."""
        c = self.conn
        n = 0
        with self._transaction():
            for commit, facts, analysis in items:
                c.execute(
                    "INSERT OR REPLACE INTO commits (sha, data) VALUES (?, ?)",
                    (commit.sha, _dumps(commit)),
                )
                c.execute(
                    "INSERT OR IGNORE INTO repo_commits (repo, sha) VALUES (?, ?)",
                    (repo, commit.sha),
                )
                c.execute("DELETE FROM file_changes WHERE sha = ?", (commit.sha,))
                c.executemany(
                    "INSERT INTO file_changes"
                    " (sha, idx, path, old_path, status, added, deleted, binary)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            commit.sha,
                            i,
                            f.path,
                            f.old_path,
                            f.status.value,
                            f.added,
                            f.deleted,
                            int(f.binary),
                        )
                        for i, f in enumerate(facts.files)
                    ],
                )
                c.execute(
                    "INSERT OR REPLACE INTO facts (sha, extractor, data) VALUES (?, ?, ?)",
                    (commit.sha, extractor, _dumps(facts)),
                )
                c.execute(
                    "INSERT OR REPLACE INTO analyses (sha, analyser, data, created_at)"
                    " VALUES (?, ?, ?, ?)",
                    (commit.sha, analysis.analyser, _dumps(analysis), _now()),
                )
                n += 1
        return n

    def load_analyses(self, shas: Sequence[str], analyser: str) -> dict[str, Analysis]:
        """Cached analyses of ``shas`` by one analyser (e.g. an LLM identity)."""
        out: dict[str, Analysis] = {}
        for start in range(0, len(shas), 500):
            chunk = list(shas[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT sha, data FROM analyses WHERE analyser = ? AND sha IN ({marks})",
                (analyser, *chunk),
            )
            for sha, data in rows:
                out[sha] = analysis_from_dict(json.loads(data))
        return out

    def save_analyses(self, items: Iterable[tuple[str, Analysis]]) -> None:
        """Cache analyses keyed by (commit SHA, analyser identity)."""
        with self._transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO analyses (sha, analyser, data, created_at)"
                " VALUES (?, ?, ?, ?)",
                [(sha, a.analyser, _dumps(a), _now()) for sha, a in items],
            )

    # -- reports ----------------------------------------------------------

    def record_report(
        self, repo: str, day: date, lang: str, commits: int, high: int, path: str, text: str
    ) -> None:
        """Remember that a repository-day was reported (``run`` catches up from the newest)."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO reports"
                " (repo, day, lang, commits, high, path, content_hash, generated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (repo, day.isoformat(), lang, commits, high, path, digest, _now()),
            )

    def latest_report_day(self, repo: str) -> date | None:
        """The newest day reported for ``repo`` in any language, or None."""
        row = self.conn.execute("SELECT MAX(day) FROM reports WHERE repo = ?", (repo,)).fetchone()
        return date.fromisoformat(row[0]) if row and row[0] else None

    # -- runs -------------------------------------------------------------

    def start_run(self, command: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (started_at, command, status) VALUES (?, ?, 'running')",
            (_now(), command),
        )
        return int(cur.lastrowid or 0)

    def finish_run(
        self, run_id: int, status: str, commits: int, analysed: int, failures: list[str]
    ) -> None:
        self.conn.execute(
            "UPDATE runs SET finished_at = ?, status = ?, commits = ?, analysed = ?, failures = ?"
            " WHERE id = ?",
            (_now(), status, commits, analysed, json.dumps(failures, ensure_ascii=False), run_id),
        )

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent runs, newest first."""
        cur = self.conn.execute(
            "SELECT id, started_at, finished_at, command, status, commits, analysed, failures"
            " FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur]
