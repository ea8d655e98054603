"""SQLite store: the cache that makes a re-run free, the log of runs, the publish ledger.

A commit's facts are keyed by (SHA, extractor identity) and its analysis by
(SHA, analyser identity), so a second run of the same day reads everything
back instead of recomputing it, and changing the rules or the area
configuration invalidates exactly what it should.

The cache is only a cache. A row that fails its checksum or cannot be
decoded is a miss; a store found damaged in the middle of a run is set
aside for the rest of it (with one warning saying how to rebuild it), so a
bad disk block costs time, never the report. What is not a cache — the
publish ledger, the days already reported — raises instead, because guessing
there would post or report twice.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from repoherald.errors import StoreDamagedError, StoreError
from repoherald.models import (
    Analysis,
    Commit,
    Correction,
    Facts,
    Mention,
)
from repoherald.redact import redact
from repoherald.store import (
    blobapis,
    cache,
    claims,
    corrections,
    indexes,
    integrity,
    leases,
    ledger,
    links,
    reports,
)
from repoherald.store import runs as run_log
from repoherald.store.base import EtagCache
from repoherald.store.claims import Claim, ClaimState, Verdict
from repoherald.store.connect import (
    DEFAULT_WAIT_SECONDS,
    Waiter,
    begin_immediate,
    connect,
    is_damage,
    store_error,
)
from repoherald.store.etags import MemoryEtags, StoreEtags
from repoherald.store.files import (
    create_private_file,
    damaged_message,
    ensure_private_dir,
    is_memory,
    move_aside,
    truncation,
)
from repoherald.store.ledger import LedgerEntry, LedgerStatus
from repoherald.store.links import Indexed, Known
from repoherald.store.migrations import MIGRATIONS, applied_versions, apply_pending
from repoherald.store.rebuild import carry_over

log = logging.getLogger("repoherald")

T = TypeVar("T")


class SqliteStore:
    """The store in one SQLite database file (see :class:`repoherald.store.base.Store`);
    open it with :meth:`open`."""

    def __init__(
        self, conn: sqlite3.Connection, path: Path, waiter: Waiter, use_cache: bool = True
    ) -> None:
        self.conn = conn
        self.path = path
        self.use_cache = use_cache
        self.moved_to: Path | None = None
        self.problem: str | None = None
        """Why the store was set aside mid-run (the run goes on without it), else None."""
        self._waiter = waiter
        self.etags: EtagCache = (
            MemoryEtags()
            if is_memory(path)
            else StoreEtags(lambda: connect(path, waiter, threads=True), self._best_effort)
        )
        """GitHub answers for conditional requests, for the HTTP clients of this run."""

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        rebuild: bool = False,
        use_cache: bool = True,
        on_wait: Callable[[str], None] | None = None,
        wait_seconds: float = DEFAULT_WAIT_SECONDS,
    ) -> SqliteStore:
        """Open (creating if needed) and migrate the database at ``path``.

        ``rebuild`` first moves an existing store aside (kept as
        ``<name>.broken-<UTC timestamp>``; see :attr:`moved_to`) and starts an
        empty one, carrying over what is not a cache (the reports and publish
        records, see :mod:`repoherald.store.rebuild`) when it is readable.
        ``use_cache=False`` makes every cache read a miss; results are still
        written, so the run refreshes the cache. ``on_wait`` is told once if
        this run has to wait for another one (default: a log warning);
        after ``wait_seconds`` it gives up with :class:`StoreBusyError`.
        ``Path(":memory:")`` opens a private in-memory store.
        """
        moved = cls._prepare_files(path, rebuild)
        waiter = Waiter(path, on_wait, wait_seconds)
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(path, waiter)
            store = cls(conn, path, waiter, use_cache)
            store.moved_to = moved
            store._check_whole()
            store.migrate()
            store.close_stale_runs()
            if moved is not None:
                carry_over(conn, moved, store._transaction)
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.Error):
                raise store_error(exc, waiter) from None
            raise
        return store

    @staticmethod
    def _prepare_files(path: Path, rebuild: bool) -> Path | None:
        """A private directory and file before SQLite creates anything with the umask."""
        if is_memory(path):
            return None
        try:
            ensure_private_dir(path.parent)
            moved = move_aside(path) if rebuild else None
            create_private_file(path)
        except OSError as exc:
            raise StoreError(
                redact(
                    f"cannot create the store {path}: {exc.strerror}; set REPOHERALD_HOME to a"
                    " writable directory"
                )
            ) from None
        return moved

    def _check_whole(self) -> None:
        """Refuse a truncated file now, rather than on whichever query meets the gap."""
        if is_memory(self.path):
            return
        self.conn.execute("BEGIN")
        try:
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            (pages,) = self.conn.execute("PRAGMA page_count").fetchone()
            (page_size,) = self.conn.execute("PRAGMA page_size").fetchone()
            reason = truncation(self.path, int(pages), int(page_size))
        finally:
            with suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
        if reason:
            raise StoreDamagedError(redact(damaged_message(self.path, reason)))

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if isinstance(self.etags, StoreEtags):
            self.etags.close()
        self.conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """All or nothing: a failure (or Ctrl-C) leaves the store as it was, then re-raises."""
        begin_immediate(self.conn, self._waiter)
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                # The original error is the one to report; a failed rollback adds nothing.
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            raise

    def migrate(self) -> list[int]:
        """Apply the migrations that have not run yet; return their numbers."""
        done = applied_versions(self.conn)
        self._refuse_newer(done)
        if all(m.number in done for m in MIGRATIONS):
            return []
        with self._transaction():
            self._refuse_newer(applied_versions(self.conn))
            return apply_pending(self.conn, run_log.now_text())

    def _refuse_newer(self, done: set[int]) -> None:
        unknown = done - {m.number for m in MIGRATIONS}
        if unknown:
            raise StoreError(
                redact(
                    f"the store {self.path} was written by a newer repoherald (schema"
                    f" {max(unknown)}): upgrade repoherald or set REPOHERALD_HOME elsewhere"
                )
            )

    # -- damage handling ----------------------------------------------------

    def _best_effort(self, op: Callable[[], T], fallback: T) -> T:
        """Run a cache read or write; a damaged store is set aside, never fatal."""
        if self.problem is not None:
            return fallback
        try:
            return op()
        except sqlite3.Error as exc:
            if not is_damage(exc):
                raise store_error(exc, self._waiter) from None
            self.problem = redact(damaged_message(self.path, str(exc)))
            log.warning("%s; this run continues without it", self.problem)
            return fallback

    def _required_op(self, op: Callable[[], T]) -> T:
        """Run an operation whose result matters (the ledger): any failure raises."""
        if self.problem is not None:
            raise StoreDamagedError(self.problem)
        try:
            return op()
        except sqlite3.Error as exc:
            raise store_error(exc, self._waiter) from None

    # -- commits and their analysis -----------------------------------------

    def load(
        self, shas: Sequence[str], extractor: str, analyser: str
    ) -> dict[str, tuple[Commit, Facts, Analysis]]:
        """Everything cached for ``shas`` under these identities (missing ones omitted)."""
        if not self.use_cache:
            return {}
        return self._best_effort(lambda: cache.load(self.conn, shas, extractor, analyser), {})

    def save(
        self,
        repo: str,
        items: Iterable[tuple[Commit, Facts, Analysis]],
        extractor: str,
    ) -> int:
        """Store commits, their file changes, facts and analyses in one transaction."""
        items = list(items)

        def op() -> int:
            with self._transaction():
                cache.save(self.conn, repo, items, extractor)
            return len(items)

        return self._best_effort(op, 0)

    def load_analyses(self, shas: Sequence[str], analyser: str) -> dict[str, Analysis]:
        """Cached analyses of ``shas`` by one analyser (e.g. an LLM identity)."""
        if not self.use_cache:
            return {}
        return self._best_effort(lambda: cache.load_analyses(self.conn, shas, analyser), {})

    def save_analyses(self, items: Iterable[tuple[str, Analysis]]) -> None:
        """Cache analyses keyed by (commit SHA, analyser identity)."""
        items = list(items)

        def put() -> None:
            with self._transaction():
                cache.put_analyses(self.conn, items)

        self._best_effort(put, None)

    # -- parsed Python blobs ------------------------------------------------------

    def save_blob_apis(self, rows: Iterable[tuple[str, Any]], codec: str) -> None:
        """Keep Python blobs' parses, ``(blob SHA, JSON value)`` under ``codec``, in one
        transaction (see :mod:`repoherald.store.blobapis`)."""
        rows = list(rows)

        def op() -> None:
            with self._transaction():
                blobapis.save(self.conn, codec, rows, datetime.now(UTC).date())

        self._best_effort(op, None)

    def load_blob_api(self, blob: str, codec: str, build: Callable[[Any], T]) -> T | None:
        """A Python blob's cached parse, built by ``build``; None on a miss or ``--no-cache``."""
        if not self.use_cache:
            return None
        return self._best_effort(lambda: blobapis.load(self.conn, blob, codec, build), None)

    # -- downstream indexes -----------------------------------------------------

    def load_downstream_index(self, key: str) -> dict[str, Any] | None:
        """The downstream index cached under ``key`` (see :mod:`repoherald.store.indexes`)."""
        if not self.use_cache:
            return None
        return self._best_effort(lambda: indexes.load(self.conn, key), None)

    def save_downstream_index(self, key: str, scope: str, data: dict[str, Any]) -> None:
        """Cache a downstream index, replacing the previous one of the same ``scope``."""

        def op() -> None:
            with self._transaction():
                indexes.save(self.conn, key, scope, data)

        self._best_effort(op, None)

    # -- reports -------------------------------------------------------------

    def record_report(
        self, repo: str, day: date, lang: str, commits: int, high: int, path: str, text: str
    ) -> None:
        """Remember that a repository-day was reported (``run`` catches up from the newest)."""

        def op() -> None:
            with self._transaction():
                reports.record(self.conn, repo, day, lang, commits, high, path, text)

        self._best_effort(op, None)

    def reported_days(self, repo: str) -> list[tuple[date, str, str, str]]:
        """``(day, language, report path, content hash)`` of every report recorded for ``repo``."""
        return self._required_op(lambda: reports.days_of(self.conn, repo))

    def latest_report_day(self, repo: str) -> date | None:
        """The newest day reported for ``repo`` in any language, or None."""
        return self._required_op(lambda: reports.latest_day(self.conn, repo))

    # -- links between commits (reverts, re-lands, fixes, follow-ups) ----------------

    def index_commits(self, repo: str, rows: Sequence[Indexed]) -> None:
        """Record what ``repo``'s reported commits are and name (see :mod:`.links`)."""
        rows = list(rows)

        def op() -> None:
            with self._transaction():
                links.index(self.conn, repo, rows)

        self._best_effort(op, None)

    def commits_by_prefix(self, repo: str, prefix: str) -> list[Known]:
        """``repo``'s known commits whose SHA starts with ``prefix`` (two at most)."""
        return self._best_effort(lambda: links.by_prefix(self.conn, repo, prefix), [])

    def commits_by_pr(self, repo: str, number: int) -> list[Known]:
        """``repo``'s known commits of pull request ``number``, oldest first."""
        return self._best_effort(lambda: links.by_pr(self.conn, repo, number), [])

    def commits_by_title(self, repo: str, keys: Sequence[str]) -> list[Known]:
        """``repo``'s known commits with one of these title keys, oldest first."""
        return self._best_effort(lambda: links.by_title(self.conn, repo, keys), [])

    def mentioning(
        self, repo: str, sha: str, pr_number: int | None, title_keys: Sequence[str]
    ) -> list[tuple[Known, Mention]]:
        """``repo``'s known commits whose messages may name this commit, with the mention."""
        return self._best_effort(
            lambda: links.mentioning(self.conn, repo, sha, pr_number, title_keys), []
        )

    # -- readers' corrections -------------------------------------------------

    def find_reported(self, sha: str, repo: str | None = None) -> list[tuple[str, str]]:
        """(repository, full SHA) of the stored commits whose SHA starts with ``sha``."""
        return self._required_op(lambda: corrections.find(self.conn, sha, repo))

    def mark(self, repo: str, sha: str, correction: Correction) -> None:
        """Record a reader's correction of one commit (replacing an earlier one)."""

        def op() -> None:
            with self._transaction():
                corrections.save(self.conn, repo, sha, correction)

        self._required_op(op)

    def corrections_of(self, repo: str, shas: Sequence[str]) -> dict[str, Correction]:
        """The corrections of ``repo``'s ``shas``; read with or without the cache (they are
        not one)."""
        return self._best_effort(lambda: corrections.load(self.conn, repo, shas), {})

    def every_correction(self) -> list[corrections.Marked]:
        """Every correction, with its commit, for the benchmarks' labelled rows."""
        return self._required_op(lambda: corrections.every(self.conn))

    # -- runs -----------------------------------------------------------------

    def start_run(self, command: str) -> int:
        """Record a run as ``running`` by this process; returns its id (0 if set aside)."""

        def op() -> int:
            with self._transaction():
                return run_log.start(self.conn, str(self.path), command)

        return self._best_effort(op, 0)

    def finish_run(
        self, run_id: int, status: str, commits: int, analysed: int, failures: list[str]
    ) -> None:
        """Record how a run ended; ``failures`` are redacted before they are stored."""

        def op() -> None:
            with self._transaction():
                run_log.finish(
                    self.conn, str(self.path), run_id, status, commits, analysed, failures
                )

        self._best_effort(op, None)

    def close_stale_runs(self) -> int:
        """Mark ``running`` rows whose process is gone as ``killed``; return how many."""
        found = run_log.stale(self.conn, str(self.path))
        if found:
            with self._transaction():
                run_log.close(self.conn, found)
        return len(found)

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent runs, newest first."""
        return self._best_effort(lambda: run_log.recent(self.conn, limit), [])

    # -- publish ledger ---------------------------------------------------------

    def ledger_get(self, target: str, repo: str, day: date) -> LedgerEntry | None:
        """The last attempt to publish ``repo``'s ``day`` to ``target``, if any."""
        return self._required_op(lambda: ledger.get(self.conn, target, repo, day))

    def ledger_entries(
        self, *, target: str | None = None, day: date | None = None
    ) -> list[LedgerEntry]:
        """Ledger rows, optionally for one target and/or one day, oldest day first."""
        return self._required_op(lambda: ledger.entries(self.conn, target, day))

    def ledger_record(
        self,
        target: str,
        repo: str,
        day: date,
        *,
        status: LedgerStatus,
        content: str,
        remote_id: str | None = None,
        error: str = "",
    ) -> LedgerEntry:
        """Record one attempt (content and error are redacted); returns the updated row.

        ``target`` is a stable name of the destination (the publisher's config
        name), never a URL that could carry a credential.
        """

        def op() -> LedgerEntry:
            with self._transaction():
                ledger.record(self.conn, target, repo, day, status, content, remote_id, error)
                entry = ledger.get(self.conn, target, repo, day)
            assert entry is not None
            return entry

        return self._required_op(op)

    def claim_delivery(
        self,
        target: str,
        repo: str,
        day: date,
        content: str,
        *,
        resend_changed: bool,
        send_uncertain: bool,
    ) -> Verdict:
        """Decide, under the write lock, whether this process sends ``repo``'s ``day`` to
        ``target``, and claim it if so (see :func:`repoherald.store.claims.decide`)."""

        def op() -> Verdict:
            with self._transaction():
                return claims.decide(
                    self.conn,
                    target,
                    repo,
                    day,
                    content,
                    resend_changed=resend_changed,
                    send_uncertain=send_uncertain,
                    me=claims.this_owner(),
                )

        return self._required_op(op)

    def peek_delivery(
        self,
        target: str,
        repo: str,
        day: date,
        content: str,
        *,
        resend_changed: bool,
        send_uncertain: bool,
    ) -> Verdict:
        """What :meth:`claim_delivery` would decide, claiming nothing (``--dry-run``)."""
        return self._required_op(
            lambda: claims.judge(
                self.conn,
                target,
                repo,
                day,
                content,
                resend_changed=resend_changed,
                send_uncertain=send_uncertain,
                me=claims.this_owner(),
            )
        )

    def settle_delivery(
        self,
        target: str,
        repo: str,
        day: date,
        *,
        status: LedgerStatus,
        content: str,
        remote_id: str | None = None,
        error: str = "",
        still_uncertain: bool = False,
    ) -> None:
        """Record a claimed delivery's outcome and release its claim, in one transaction.

        ``still_uncertain`` keeps the claim as "may have been sent" after a
        failure: an earlier attempt by a killed process may have arrived.
        """

        def op() -> None:
            with self._transaction():
                ledger.record(self.conn, target, repo, day, status, content, remote_id, error)
                if still_uncertain and status is LedgerStatus.FAILED:
                    claims.set_state(self.conn, target, repo, day, ClaimState.UNCERTAIN)
                else:
                    claims.release(self.conn, target, repo, day)

        self._required_op(op)

    def abandon_delivery(self, target: str, repo: str, day: date) -> None:
        """Mark a claimed delivery interrupted mid-way (Ctrl-C, a bug) as "may have been sent"."""

        def op() -> None:
            with self._transaction():
                claims.set_state(self.conn, target, repo, day, ClaimState.UNCERTAIN)

        self._required_op(op)

    def claims(self, target: str) -> list[Claim]:
        """Claims on ``target``'s deliveries: in progress, or left uncertain by a killed run."""
        return self._required_op(lambda: claims.for_target(self.conn, target))

    # -- leases on repository-days (workers sharing the day) ------------------------

    def claim_repo_day(
        self,
        worker: str,
        repo: str,
        day: date,
        *,
        inputs: str,
        lease_s: float,
        started: float | None = None,
        redo: bool = False,
    ) -> leases.Verdict:
        """Claim ``repo``'s ``day`` for ``worker`` under the write lock (see
        :func:`repoherald.store.leases.claim`)."""

        def op() -> leases.Verdict:
            # A look without the write lock first: in WAL mode it does not wait, and
            # most looks by a worker find the day held or done by another.
            now = time.time()
            seen = leases.judge(
                leases.get(self.conn, repo, day), worker, inputs, now, started, redo
            )
            if not seen.mine:
                return seen
            with self._transaction():
                return leases.claim(
                    self.conn,
                    worker,
                    repo,
                    day,
                    inputs=inputs,
                    lease_s=lease_s,
                    now=time.time(),
                    started=started,
                    redo=redo,
                )

        return self._required_op(op)

    def renew_repo_days(
        self, worker: str, held: Sequence[tuple[str, date]], lease_s: float
    ) -> list[tuple[str, date]]:
        """Renew ``worker``'s leases on ``held``; return the ones it lost."""

        def op() -> list[tuple[str, date]]:
            with self._transaction():
                return leases.renew(self.conn, worker, held, lease_s=lease_s, now=time.time())

        return self._required_op(op)

    def finish_repo_day(self, worker: str, repo: str, day: date, *, ok: bool) -> bool:
        """Mark the day done (or failed); False if ``worker`` had lost its lease."""

        def op() -> bool:
            with self._transaction():
                return leases.finish(self.conn, worker, repo, day, ok=ok, now=time.time())

        return self._required_op(op)

    def unfinished_repo_days(self, repo: str) -> list[date]:
        """Days of ``repo`` claimed and not finished: a worker is at them, or was killed."""
        return self._required_op(lambda: leases.unfinished(self.conn, repo))

    def repo_day_leases(self) -> list[leases.Lease]:
        """Every repository-day claimed so far, with its state and holder."""
        return self._required_op(lambda: leases.every(self.conn))

    def integrity(self) -> list[str]:
        """What is inconsistent in the store: SQLite's own check, then the rules of
        :mod:`repoherald.store.integrity` between reports, ledger and leases."""

        def op() -> list[str]:
            found = [str(r[0]) for r in self.conn.execute("PRAGMA integrity_check").fetchall()]
            out = [] if found == ["ok"] else [f"database: {'; '.join(found[:5])}"]
            return out + integrity.problems(self.conn)

        return self._required_op(op)
