"""The one exception tree of repoherald.

Library code raises these; only :mod:`repoherald.cli` turns them into an exit
status and a one-line message. Every message says what went wrong *and* what
the user can do about it, because it is usually all they will read.
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


class StoreError(RepoheraldError):
    """The SQLite store cannot be opened or migrated."""


class PublishError(RepoheraldError):
    """A report could not be written or delivered."""


class UnavailableError(RepoheraldError):
    """A remote service cannot be reached (its circuit breaker is open); callers fall back."""
