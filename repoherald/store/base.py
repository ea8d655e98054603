"""What the rest of the tree may know about the store: interfaces, not a database.

Code outside :mod:`repoherald.store` is handed a :class:`Store` (or the
smaller :class:`EtagCache`) and never opens a database itself: the pipeline
and the CLI get one from :func:`repoherald.store.opener.open_store`. A second
backend (PostgreSQL) is a new module whose class satisfies :class:`Store`,
plus one branch in the opener; the JSON codec (:mod:`repoherald.store.codec`)
and the row types (ledger entries, claims, corrections) are shared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from types import TracebackType
from typing import Any, Protocol, TypeVar

from repoherald.models import Analysis, Commit, Correction, Facts, Mention
from repoherald.store import leases
from repoherald.store.claims import Claim, Verdict
from repoherald.store.corrections import Marked
from repoherald.store.ledger import LedgerEntry, LedgerStatus
from repoherald.store.links import Indexed, Known

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Cached:
    """One stored answer of an HTTP API: its ETag, body and ``Link`` header."""

    etag: str
    body: bytes
    link: str


class EtagCache(Protocol):
    """``url -> (etag, body, link)`` for conditional requests; safe to call from threads."""

    def get(self, url: str) -> Cached | None:
        """The answer stored for ``url``, or None."""
        ...

    def put(self, url: str, etag: str, body: bytes, link: str) -> None:
        """Keep (or replace) the answer for ``url``."""
        ...

    def touch(self, url: str) -> None:
        """Mark ``url``'s answer as still in use (a ``304`` confirmed it)."""
        ...


class Store(Protocol):
    """What the pipeline, the publishers and the CLI ask of a store.

    A backend is one module whose class satisfies this and that
    :func:`repoherald.store.opener.open_store` returns for the locations it
    serves; today :class:`repoherald.store.db.SqliteStore`. Cache operations
    (``load*``/``save*``, ``etags``) treat a damaged store as a miss and say
    so once in :attr:`problem`; what is not a cache (reported days, the ledger,
    claims, corrections) raises :class:`~repoherald.errors.StoreError`.
    """

    problem: str | None
    """Why the store was set aside mid-run (the run goes on without it), else None."""
    etags: EtagCache
    """GitHub answers for conditional requests, shared by the run's HTTP clients."""

    def __enter__(self) -> Store: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def close(self) -> None: ...

    # -- the cache that makes a re-run free --------------------------------------

    def load(
        self, shas: Sequence[str], extractor: str, analyser: str
    ) -> dict[str, tuple[Commit, Facts, Analysis]]:
        """Everything cached for ``shas`` under these identities (missing ones omitted)."""
        ...

    def save(
        self, repo: str, items: Iterable[tuple[Commit, Facts, Analysis]], extractor: str
    ) -> int:
        """Store commits with their facts and analyses, all or nothing; returns how many."""
        ...

    def load_analyses(self, shas: Sequence[str], analyser: str) -> dict[str, Analysis]: ...

    def save_analyses(self, items: Iterable[tuple[str, Analysis]]) -> None: ...

    def save_blob_apis(self, rows: Iterable[tuple[str, Any]], codec: str) -> None: ...

    def load_blob_api(self, blob: str, codec: str, build: Callable[[Any], T]) -> T | None: ...

    def load_downstream_index(self, key: str) -> dict[str, Any] | None: ...

    def save_downstream_index(self, key: str, scope: str, data: dict[str, Any]) -> None: ...

    # -- reports, corrections, runs ----------------------------------------------

    def record_report(
        self, repo: str, day: date, lang: str, commits: int, high: int, path: str, text: str
    ) -> None: ...

    def reported_days(self, repo: str) -> list[tuple[date, str, str, str]]: ...

    def latest_report_day(self, repo: str) -> date | None: ...

    def find_reported(self, sha: str, repo: str | None = None) -> list[tuple[str, str]]: ...

    def mark(self, repo: str, sha: str, correction: Correction) -> None: ...

    def corrections_of(self, repo: str, shas: Sequence[str]) -> dict[str, Correction]: ...

    def every_correction(self) -> list[Marked]: ...

    def start_run(self, command: str) -> int: ...

    def finish_run(
        self, run_id: int, status: str, commits: int, analysed: int, failures: list[str]
    ) -> None: ...

    def runs(self, limit: int = 20) -> list[dict[str, Any]]: ...

    # -- links between commits (reverts, re-lands, fixes, follow-ups) ---------------

    def index_commits(self, repo: str, rows: Sequence[Indexed]) -> None: ...

    def commits_by_prefix(self, repo: str, prefix: str) -> list[Known]: ...

    def commits_by_pr(self, repo: str, number: int) -> list[Known]: ...

    def commits_by_title(self, repo: str, keys: Sequence[str]) -> list[Known]: ...

    def mentioning(
        self, repo: str, sha: str, pr_number: int | None, title_keys: Sequence[str]
    ) -> list[tuple[Known, Mention]]: ...

    # -- the publish ledger and delivery claims ------------------------------------

    def ledger_get(self, target: str, repo: str, day: date) -> LedgerEntry | None: ...

    def ledger_entries(
        self, *, target: str | None = None, day: date | None = None
    ) -> list[LedgerEntry]: ...

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
    ) -> LedgerEntry: ...

    def claim_delivery(
        self,
        target: str,
        repo: str,
        day: date,
        content: str,
        *,
        resend_changed: bool,
        send_uncertain: bool,
    ) -> Verdict: ...

    def peek_delivery(
        self,
        target: str,
        repo: str,
        day: date,
        content: str,
        *,
        resend_changed: bool,
        send_uncertain: bool,
    ) -> Verdict: ...

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
    ) -> None: ...

    def abandon_delivery(self, target: str, repo: str, day: date) -> None: ...

    def claims(self, target: str) -> list[Claim]: ...

    # -- leases on repository-days: workers sharing one day's work --------------------

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
        """Claim ``repo``'s ``day`` for ``worker`` for ``lease_s`` seconds, in one step
        with reading who holds it (:func:`repoherald.store.leases.claim`); ``inputs`` is
        the fingerprint a finished day is kept with, ``started`` when this run started
        (a day done before it is REPORTED, and taken again when ``redo``)."""
        ...

    def renew_repo_days(
        self, worker: str, held: Sequence[tuple[str, date]], lease_s: float
    ) -> list[tuple[str, date]]:
        """Push ``worker``'s leases on ``held`` ``lease_s`` further; return those it lost."""
        ...

    def finish_repo_day(self, worker: str, repo: str, day: date, *, ok: bool) -> bool:
        """Mark the day done, or failed (left to its worker's report by the siblings of its
        run, retried by later runs); False if ``worker`` had lost the lease."""
        ...

    def unfinished_repo_days(self, repo: str) -> list[date]:
        """Days of ``repo`` claimed and never finished (catch-up takes them too: a worker
        killed after its report landed but before delivering it left one)."""
        ...

    def repo_day_leases(self) -> list[leases.Lease]: ...

    def integrity(self) -> list[str]:
        """One line per inconsistency between reports, ledger and leases (none: [])."""
        ...
