"""The one exception tree of repoherald.

Library code raises these; only :mod:`repoherald.cli` turns them into an exit
status and a one-line message. Every message says what went wrong *and* what
the user can do about it, because it is usually all they will read. Messages
never name CLI flags (a setting may come from a flag or from the config file);
the CLI adds flag hints where it knows them. Errors of libraries underneath
(httpx, subprocess, sqlite3) are translated at the backend that called them.

::

    RepoheraldError                 exit 1: something could not be done
    ├── UsageError                  exit 2: the request is malformed; retrying will not help
    │   └── ConfigError             the configuration file cannot be read or does not validate
    ├── SourceError                 a repository cannot be opened, cloned, fetched or read
    │   ├── CommitError             one commit's answer is unusable (contained to that commit)
    │   └── StageTimeoutError       fetching a repository-day took longer than its time budget
    ├── StoreError                  the store (SQLite or PostgreSQL) cannot be opened or used
    │   ├── StoreDamagedError       the file is not a usable database (a cache: move it aside)
    │   └── StoreBusyError          another run held the store for too long (wait, retry)
    ├── PublishError                a report could not be written or delivered
    │   └── MaybeSentError          it went out, but whether it arrived is unknown
    ├── UnavailableError            a remote service is unreachable (its circuit breaker is open)
    └── llm.client.LlmError         a model request failed (contained per commit)
"""

from __future__ import annotations


class RepoheraldError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class UsageError(RepoheraldError):
    """The user asked for something malformed (bad flag, date, zone, config)."""

    exit_code = 2


class ConfigError(UsageError):
    """The configuration file cannot be read or does not validate."""


class SourceError(RepoheraldError):
    """A repository cannot be opened, cloned, fetched or read."""


class CommitError(SourceError):
    """One commit cannot be read (its answer is malformed); the other commits can.

    The pipeline marks that commit as failed and reports the rest of the day,
    where any other :class:`SourceError` means the source as a whole failed.
    """

    def __init__(self, message: str, sha: str) -> None:
        super().__init__(message)
        self.sha = sha


class StageTimeoutError(SourceError):
    """Fetching one stage (a repository-day, a history) took longer than its time budget.

    Each request has its own deadline, but a day is many requests and waits:
    the budget bounds their sum. The day fails; the next day, and the other
    repositories, get their own budget.
    """


class StoreError(RepoheraldError):
    """The store (an SQLite file or a PostgreSQL database) cannot be opened, migrated or used."""


class StoreDamagedError(StoreError):
    """The store file is not a usable database; it is a cache, so it can be rebuilt."""


class StoreBusyError(StoreError):
    """Another run held the store for longer than this one was willing to wait."""


class PublishError(RepoheraldError):
    """A report could not be written or delivered."""


class MaybeSentError(PublishError):
    """A message went out but no answer says whether it arrived (no answer before the
    timeout, a connection cut before the answer).

    Sending it again could deliver it twice, so it is not retried: the ledger
    records the delivery as "may have been sent" until the user forces it.
    """


class UnavailableError(RepoheraldError):
    """A remote service cannot be reached (its circuit breaker is open); callers fall back."""
