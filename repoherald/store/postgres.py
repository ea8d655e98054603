"""PostgreSQL store: the same tables, migrations and rules as the SQLite one, shared by hosts.

Workers on several machines share one cache, one log of reported days and
one publish ledger through it. It runs the SQL of the store's modules
(:mod:`repoherald.store.cache`, :mod:`~repoherald.store.ledger`,
:mod:`~repoherald.store.claims` ...) unchanged, and differs from
:class:`~repoherald.store.db.SqliteStore` where the databases do:

* **Serialising writers.** SQLite has one write lock, which every
  transaction takes (``BEGIN IMMEDIATE``). PostgreSQL lets transactions run
  side by side, so what must not interleave takes a transaction-scoped
  advisory lock: migrating takes one for the schema, and every ledger and
  claim transaction takes one for its (target, repository, day), so two
  processes cannot both read "not sent" and both claim the delivery, nor
  read a claim between its settlement's ledger write and its release.
  Upserts are ``INSERT ... ON CONFLICT``, which PostgreSQL makes atomic.
* **Failures.** There is no file to damage: every database error raises a
  one-line :class:`~repoherald.errors.StoreError` (a lost connection says
  so), and the transaction it interrupted is rolled back by the server, so
  nothing is half-written. A deadlock between two workers' cache writes is
  retried.
* **Round trips.** The server is across a socket or a network, so a write
  that is one statement runs as its own transaction (autocommit) instead of
  paying for ``BEGIN`` and ``COMMIT`` too.
* **Rebuild** empties the cache tables, in one transaction, and keeps what
  is not a cache (reports, the ledger, claims, corrections), as moving an
  SQLite file aside and carrying those over does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, TypeVar

import psycopg

from repoherald.errors import StoreError
from repoherald.models import Analysis, Commit, Correction, Facts, Mention
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
from repoherald.store.etags import StoreEtags
from repoherald.store.ledger import LedgerEntry, LedgerStatus
from repoherald.store.links import Indexed, Known
from repoherald.store.migrations import MIGRATIONS, applied_versions, apply_pending
from repoherald.store.pgconn import PgConn, connect, register_url, shown, use_error

log = logging.getLogger("repoherald")

T = TypeVar("T")

SCHEMA_LOCK = 0x72686572616C64
"""The advisory lock key migrations hold ("rherald"), so two first runs do not both migrate."""

CACHE_TABLES = (
    "file_changes",
    "facts",
    "analyses",
    "repo_commits",
    "commits",
    "github_etags",
    "downstream_indexes",
    "blob_apis",
    "commit_mentions",
    "commit_index",
)
"""What a rebuild empties: everything the runs can compute again."""

_RETRIES = 3
"""Attempts of a transaction that lost a deadlock or a serialisation race to another worker."""


class PostgresStore:
    """The store in a PostgreSQL database (see :class:`repoherald.store.base.Store`);
    open it with :meth:`open`."""

    def __init__(self, conn: PgConn, url: str, use_cache: bool = True) -> None:
        self.conn = conn
        self.url = url
        self.where = shown(url)
        """The URL as messages show it (no password)."""
        self.use_cache = use_cache
        self.problem: str | None = None
        """Always None: a PostgreSQL store is never set aside, its errors raise."""
        self._etags = StoreEtags(lambda: connect(url), self._best_effort)
        self.etags: EtagCache = self._etags
        """GitHub answers for conditional requests, on a connection of their own."""

    @classmethod
    def open(cls, url: str, *, rebuild: bool = False, use_cache: bool = True) -> PostgresStore:
        """Connect to ``url`` (a ``postgresql://`` URL) and migrate its database.

        ``rebuild`` empties the cache tables first (see the module's docstring);
        ``use_cache=False`` makes every cache read a miss while results are still
        written. The URL's password is registered as a secret before anything
        can print it.
        """
        register_url(url)
        conn = connect(url)
        store = cls(conn, url, use_cache)
        try:
            store._required_op(store.migrate)
            store._required_op(store.close_stale_runs)
            if rebuild:
                store._required_op(store.empty_cache)
        except BaseException:
            store.close()
            raise
        return store

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._etags.close()
        self.conn.close()

    @contextmanager
    def _transaction(self, *lock_keys: str) -> Iterator[None]:
        """All or nothing, holding an advisory lock per key (see the module's docstring)."""
        with self.conn.raw.transaction():
            for key in sorted(lock_keys):
                self.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
            yield

    @staticmethod
    def _delivery(target: str, repo: str, day: date) -> str:
        return f"delivery\x1f{target}\x1f{repo}\x1f{day.isoformat()}"

    def migrate(self) -> list[int]:
        """Apply the migrations that have not run yet; return their numbers."""
        done = applied_versions(self.conn, "postgresql")
        self._refuse_newer(done)
        if all(m.number in done for m in MIGRATIONS):
            return []
        with self.conn.raw.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))
            self._refuse_newer(applied_versions(self.conn, "postgresql"))
            return apply_pending(self.conn, run_log.now_text(), "postgresql")

    def _refuse_newer(self, done: set[int]) -> None:
        unknown = done - {m.number for m in MIGRATIONS}
        if unknown:
            raise StoreError(
                redact(
                    f"the PostgreSQL store {self.where} was written by a newer repoherald (schema"
                    f" {max(unknown)}): upgrade repoherald, or point the store's url_env at"
                    " another database"
                )
            )

    def empty_cache(self) -> None:
        """Empty what the runs can compute again; keep reports, the ledger, claims, corrections."""
        with self._transaction():
            self.conn.execute(f"TRUNCATE {', '.join(CACHE_TABLES)}")

    # -- failures -------------------------------------------------------------

    def _required_op(self, op: Callable[[], T]) -> T:
        """Run an operation; a deadlock is retried, any other database error raises one line."""
        for attempt in range(_RETRIES):
            try:
                return op()
            except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
                if attempt == _RETRIES - 1:
                    raise use_error(self.url, exc) from None
                log.debug("%s", redact(f"retrying a store transaction after: {exc}"))
            except psycopg.Error as exc:
                raise use_error(self.url, exc) from None
        raise AssertionError("unreachable")

    def _best_effort(self, op: Callable[[], T], fallback: T) -> T:
        """Cache operations: as :meth:`_required_op` (there is no damaged file to set aside)."""
        return self._required_op(op)

    # -- commits and their analysis -----------------------------------------

    def load(
        self, shas: Sequence[str], extractor: str, analyser: str
    ) -> dict[str, tuple[Commit, Facts, Analysis]]:
        """Everything cached for ``shas`` under these identities (missing ones omitted)."""
        if not self.use_cache:
            return {}
        return self._required_op(lambda: cache.load(self.conn, shas, extractor, analyser))

    def save(
        self, repo: str, items: Iterable[tuple[Commit, Facts, Analysis]], extractor: str
    ) -> int:
        """Store commits, their file changes, facts and analyses in one transaction."""
        items = list(items)

        def op() -> int:
            with self._transaction():
                cache.save(self.conn, repo, items, extractor)
            return len(items)

        return self._required_op(op)

    def load_analyses(self, shas: Sequence[str], analyser: str) -> dict[str, Analysis]:
        """Cached analyses of ``shas`` by one analyser (e.g. an LLM identity)."""
        if not self.use_cache:
            return {}
        return self._required_op(lambda: cache.load_analyses(self.conn, shas, analyser))

    def save_analyses(self, items: Iterable[tuple[str, Analysis]]) -> None:
        """Cache analyses keyed by (commit SHA, analyser identity)."""
        items = sorted(items, key=lambda item: item[0])

        def op() -> None:
            with self._transaction():
                cache.put_analyses(self.conn, items)

        self._required_op(op)

    def save_blob_apis(self, rows: Iterable[tuple[str, Any]], codec: str) -> None:
        """Keep Python blobs' parses (see :mod:`repoherald.store.blobapis`)."""
        rows = sorted(rows, key=lambda row: str(row[0]))

        def op() -> None:
            with self._transaction():
                blobapis.save(self.conn, codec, rows, datetime.now(UTC).date())

        self._required_op(op)

    def load_blob_api(self, blob: str, codec: str, build: Callable[[Any], T]) -> T | None:
        """A Python blob's cached parse, built by ``build``; None on a miss or ``--no-cache``."""
        if not self.use_cache:
            return None
        return self._required_op(lambda: blobapis.load(self.conn, blob, codec, build))

    def load_downstream_index(self, key: str) -> dict[str, Any] | None:
        """The downstream index cached under ``key`` (see :mod:`repoherald.store.indexes`)."""
        if not self.use_cache:
            return None
        return self._required_op(lambda: indexes.load(self.conn, key))

    def save_downstream_index(self, key: str, scope: str, data: dict[str, Any]) -> None:
        """Cache a downstream index, replacing the previous one of the same ``scope``."""

        def op() -> None:
            with self._transaction(f"downstream\x1f{scope}"):
                indexes.save(self.conn, key, scope, data)

        self._required_op(op)

    # -- reports, links, corrections, runs ------------------------------------------

    def record_report(
        self, repo: str, day: date, lang: str, commits: int, high: int, path: str, text: str
    ) -> None:
        """Remember that a repository-day was reported (``run`` catches up from the newest)."""

        self._required_op(
            lambda: reports.record(self.conn, repo, day, lang, commits, high, path, text)
        )

    def reported_days(self, repo: str) -> list[tuple[date, str, str, str]]:
        """``(day, language, report path, content hash)`` of every report recorded for ``repo``."""
        return self._required_op(lambda: reports.days_of(self.conn, repo))

    def latest_report_day(self, repo: str) -> date | None:
        """The newest day reported for ``repo`` in any language, or None."""
        return self._required_op(lambda: reports.latest_day(self.conn, repo))

    def index_commits(self, repo: str, rows: Sequence[Indexed]) -> None:
        """Record what ``repo``'s reported commits are and name (see :mod:`.links`)."""
        rows = sorted(rows, key=lambda row: row.known.sha)

        def op() -> None:
            with self._transaction():
                links.index(self.conn, repo, rows)

        self._required_op(op)

    def commits_by_prefix(self, repo: str, prefix: str) -> list[Known]:
        """``repo``'s known commits whose SHA starts with ``prefix`` (two at most)."""
        return self._required_op(lambda: links.by_prefix(self.conn, repo, prefix))

    def commits_by_pr(self, repo: str, number: int) -> list[Known]:
        """``repo``'s known commits of pull request ``number``, oldest first."""
        return self._required_op(lambda: links.by_pr(self.conn, repo, number))

    def commits_by_title(self, repo: str, keys: Sequence[str]) -> list[Known]:
        """``repo``'s known commits with one of these title keys, oldest first."""
        return self._required_op(lambda: links.by_title(self.conn, repo, keys))

    def mentioning(
        self, repo: str, sha: str, pr_number: int | None, title_keys: Sequence[str]
    ) -> list[tuple[Known, Mention]]:
        """``repo``'s known commits whose messages may name this commit, with the mention."""
        return self._required_op(
            lambda: links.mentioning(self.conn, repo, sha, pr_number, title_keys)
        )

    def find_reported(self, sha: str, repo: str | None = None) -> list[tuple[str, str]]:
        """(repository, full SHA) of the stored commits whose SHA starts with ``sha``."""
        return self._required_op(lambda: corrections.find(self.conn, sha, repo))

    def mark(self, repo: str, sha: str, correction: Correction) -> None:
        """Record a reader's correction of one commit (replacing an earlier one)."""

        self._required_op(lambda: corrections.save(self.conn, repo, sha, correction))

    def corrections_of(self, repo: str, shas: Sequence[str]) -> dict[str, Correction]:
        """The corrections of ``repo``'s ``shas``."""
        return self._required_op(lambda: corrections.load(self.conn, repo, shas))

    def every_correction(self) -> list[corrections.Marked]:
        """Every correction, with its commit, for the benchmarks' labelled rows."""
        return self._required_op(lambda: corrections.every(self.conn))

    def start_run(self, command: str) -> int:
        """Record a run as ``running`` by this process; returns its id."""

        return self._required_op(lambda: run_log.start(self.conn, self.where, command))

    def finish_run(
        self, run_id: int, status: str, commits: int, analysed: int, failures: list[str]
    ) -> None:
        """Record how a run ended; ``failures`` are redacted before they are stored."""

        self._required_op(
            lambda: run_log.finish(
                self.conn, self.where, run_id, status, commits, analysed, failures
            )
        )

    def close_stale_runs(self) -> int:
        """Mark ``running`` rows of this host whose process is gone as ``killed``."""
        found = run_log.stale(self.conn, self.where)
        if found:
            with self._transaction():
                run_log.close(self.conn, found)
        return len(found)

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent runs, newest first."""
        return self._required_op(lambda: run_log.recent(self.conn, limit))

    # -- publish ledger and delivery claims ------------------------------------------

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
        """Record one attempt (content and error are redacted); returns the updated row."""

        def op() -> LedgerEntry:
            with self._transaction(self._delivery(target, repo, day)):
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
        """Decide, holding the delivery's lock, whether this process sends ``repo``'s ``day`` to
        ``target``, and claim it if so (see :func:`repoherald.store.claims.decide`)."""

        def op() -> Verdict:
            with self._transaction(self._delivery(target, repo, day)):
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

        def op() -> Verdict:
            with self._transaction(self._delivery(target, repo, day)):
                return claims.judge(
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
        """Record a claimed delivery's outcome and release its claim, in one transaction."""

        def op() -> None:
            with self._transaction(self._delivery(target, repo, day)):
                ledger.record(self.conn, target, repo, day, status, content, remote_id, error)
                if still_uncertain and status is LedgerStatus.FAILED:
                    claims.set_state(self.conn, target, repo, day, ClaimState.UNCERTAIN)
                else:
                    claims.release(self.conn, target, repo, day)

        self._required_op(op)

    def abandon_delivery(self, target: str, repo: str, day: date) -> None:
        """Mark a claimed delivery interrupted mid-way as "may have been sent"."""

        def op() -> None:
            with self._transaction(self._delivery(target, repo, day)):
                claims.set_state(self.conn, target, repo, day, ClaimState.UNCERTAIN)

        self._required_op(op)

    def claims(self, target: str) -> list[Claim]:
        """Claims on ``target``'s deliveries: in progress, or left uncertain by a killed run."""
        return self._required_op(lambda: claims.for_target(self.conn, target))

    # -- leases on repository-days (workers sharing the day) ------------------------

    @staticmethod
    def _lease_key(repo: str, day: date) -> str:
        return f"lease\x1f{repo}\x1f{day.isoformat()}"

    def _now(self) -> float:
        """The server's clock: workers on several hosts compare leases by one clock."""
        (seconds,) = self.conn.execute(
            "SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8"
        ).fetchall()[0]
        return float(seconds)

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
        """Claim ``repo``'s ``day`` for ``worker`` holding the day's advisory lock (see
        :func:`repoherald.store.leases.claim`): two workers cannot both find it free."""

        def op() -> leases.Verdict:
            # A look without the day's lock first: most looks by a worker find the day
            # held or done by another, and need no transaction.
            seen = leases.judge(
                leases.get(self.conn, repo, day), worker, inputs, self._now(), started, redo
            )
            if not seen.mine:
                return seen
            with self._transaction(self._lease_key(repo, day)):
                return leases.claim(
                    self.conn,
                    worker,
                    repo,
                    day,
                    inputs=inputs,
                    lease_s=lease_s,
                    now=self._now(),
                    started=started,
                    redo=redo,
                )

        return self._required_op(op)

    def renew_repo_days(
        self, worker: str, held: Sequence[tuple[str, date]], lease_s: float
    ) -> list[tuple[str, date]]:
        """Renew ``worker``'s leases on ``held``; return the ones it lost."""

        def op() -> list[tuple[str, date]]:
            with self._transaction(*(self._lease_key(r, d) for r, d in held)):
                return leases.renew(self.conn, worker, held, lease_s=lease_s, now=self._now())

        return self._required_op(op)

    def finish_repo_day(self, worker: str, repo: str, day: date, *, ok: bool) -> bool:
        """Mark the day done (or failed); False if ``worker`` had lost its lease."""

        def op() -> bool:
            with self._transaction(self._lease_key(repo, day)):
                return leases.finish(self.conn, worker, repo, day, ok=ok, now=self._now())

        return self._required_op(op)

    def unfinished_repo_days(self, repo: str) -> list[date]:
        """Days of ``repo`` claimed and not finished: a worker is at them, or was killed."""
        return self._required_op(lambda: leases.unfinished(self.conn, repo))

    def repo_day_leases(self) -> list[leases.Lease]:
        """Every repository-day claimed so far, with its state and holder."""
        return self._required_op(lambda: leases.every(self.conn))

    def integrity(self) -> list[str]:
        """What is inconsistent between reports, ledger and leases (the server checks its
        own pages)."""
        return self._required_op(lambda: integrity.problems(self.conn))
