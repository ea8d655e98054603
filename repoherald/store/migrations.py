"""Append-only, numbered schema migrations, one function each.

Each migration is a function ``mNNNN_name(conn)`` registered with
:func:`migration`, in order. Never edit, rename or reorder one that has
shipped: add a new one. The ``schema_migrations`` table records which have
run (version and name), so a database created by any earlier version —
including the ones whose migrations were SQL strings — upgrades in place.

Migrations run inside the caller's write transaction (``BEGIN IMMEDIATE``),
so they must not commit: use ``conn.execute`` per statement, never
``executescript``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

from repoherald.store.rows import checksum


class Migration(NamedTuple):
    number: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


MIGRATIONS: list[Migration] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register ``mNNNN_name``; the number must be the next one."""
    match = re.fullmatch(r"m(\d{4})_(\w+)", fn.__name__)
    if match is None or int(match[1]) != len(MIGRATIONS) + 1:
        raise RuntimeError(f"migration {fn.__name__} is out of order or misnamed")
    MIGRATIONS.append(Migration(int(match[1]), match[2], fn))
    return fn


def _statements(conn: sqlite3.Connection, sql: str) -> None:
    for statement in sql.split(";"):
        if statement.strip():
            conn.execute(statement)


@migration
def m0001_initial(conn: sqlite3.Connection) -> None:
    """The first schema (shipped as an SQL string; the text is unchanged)."""
    _statements(
        conn,
        """
        CREATE TABLE commits (
            sha TEXT PRIMARY KEY,
            data TEXT NOT NULL
        );
        CREATE TABLE repo_commits (
            repo TEXT NOT NULL,
            sha TEXT NOT NULL,
            PRIMARY KEY (repo, sha)
        );
        CREATE TABLE file_changes (
            sha TEXT NOT NULL,
            idx INTEGER NOT NULL,
            path TEXT NOT NULL,
            old_path TEXT,
            status TEXT NOT NULL,
            added INTEGER NOT NULL,
            deleted INTEGER NOT NULL,
            binary INTEGER NOT NULL,
            PRIMARY KEY (sha, idx)
        );
        CREATE TABLE facts (
            sha TEXT NOT NULL,
            extractor TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (sha, extractor)
        );
        CREATE TABLE analyses (
            sha TEXT NOT NULL,
            analyser TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (sha, analyser)
        );
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            command TEXT NOT NULL,
            status TEXT NOT NULL,
            commits INTEGER NOT NULL DEFAULT 0,
            analysed INTEGER NOT NULL DEFAULT 0,
            failures TEXT NOT NULL DEFAULT '[]'
        );
        """,
    )


@migration
def m0002_reports(conn: sqlite3.Connection) -> None:
    """Which repository-days were reported (shipped as an SQL string; text unchanged)."""
    _statements(
        conn,
        """
        CREATE TABLE reports (
            repo TEXT NOT NULL,
            day TEXT NOT NULL,
            lang TEXT NOT NULL,
            commits INTEGER NOT NULL,
            high INTEGER NOT NULL,
            path TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            generated_at TEXT NOT NULL,
            PRIMARY KEY (repo, day, lang)
        );
        """,
    )


CHECKSUMMED: dict[str, tuple[str, ...]] = {
    "commits": ("sha",),
    "facts": ("sha", "extractor"),
    "analyses": ("sha", "analyser"),
}
"""Cached tables whose rows carry a checksum, and the key columns it covers."""


@migration
def m0003_row_checksums(conn: sqlite3.Connection) -> None:
    """A checksum per cached row, so an edited or rotten row is a miss, not a report.

    Rows already in the store are trusted once, here: they get the checksum
    of what they hold now.
    """

    def row_checksum(*parts: Any) -> str:
        return checksum([str(p) for p in parts[:-1]], bytes(parts[-1]))

    conn.create_function("repoherald_checksum", -1, row_checksum, deterministic=True)
    for table, key in CHECKSUMMED.items():
        conn.execute(f"ALTER TABLE {table} ADD COLUMN checksum TEXT")
        conn.execute(
            f"UPDATE {table} SET checksum ="
            f" repoherald_checksum({', '.join(key)}, CAST(data AS BLOB))"
        )


@migration
def m0004_run_owner(conn: sqlite3.Connection) -> None:
    """Which process on which host owns a run, so a killed run can be closed later."""
    conn.execute("ALTER TABLE runs ADD COLUMN pid INTEGER")
    conn.execute("ALTER TABLE runs ADD COLUMN host TEXT")


@migration
def m0005_publish_ledger(conn: sqlite3.Connection) -> None:
    """What each publishing target was sent for each repository and day.

    It makes publishing idempotent: a re-run sends nothing already sent with
    the same content, edits what it sent before (``remote_id``) when the
    content changed, and retries what failed.
    """
    _statements(
        conn,
        """
        CREATE TABLE publish_ledger (
            target TEXT NOT NULL,
            repo TEXT NOT NULL,
            day TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('sent', 'failed')),
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            remote_id TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            first_attempt_at TEXT NOT NULL,
            last_attempt_at TEXT NOT NULL,
            sent_at TEXT,
            PRIMARY KEY (target, repo, day)
        );
        CREATE INDEX publish_ledger_day ON publish_ledger (day)
        """,
    )


@migration
def m0006_github_etags(conn: sqlite3.Connection) -> None:
    """The GitHub client's conditional-request cache (:mod:`repoherald.store.etags`).

    The body and ``Link`` header of each answer that carried an ETag, keyed by
    URL (never a token), so a re-run can send ``If-None-Match`` and read a
    ``304`` from here.
    """
    _statements(
        conn,
        """
        CREATE TABLE github_etags (
            url TEXT PRIMARY KEY,
            etag TEXT NOT NULL,
            body BLOB NOT NULL,
            link TEXT NOT NULL DEFAULT '',
            used_at TEXT NOT NULL
        );
        CREATE INDEX github_etags_used ON github_etags (used_at)
        """,
    )


@migration
def m0007_downstream_indexes(conn: sqlite3.Connection) -> None:
    """Indexes of the reader's downstream checkouts, keyed by their content.

    ``key`` changes whenever the checkout may have changed (its HEAD, its
    dirty files, the index version, the upstream packages), so a row is
    never stale; ``scope`` (checkout and packages) lets a new row replace
    the previous one of the same checkout instead of piling up.
    """
    _statements(
        conn,
        """
        CREATE TABLE downstream_indexes (
            key TEXT PRIMARY KEY,
            scope TEXT NOT NULL,
            data TEXT NOT NULL,
            checksum TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX downstream_indexes_scope ON downstream_indexes (scope)
        """,
    )


@migration
def m0008_blob_apis(conn: sqlite3.Connection) -> None:
    """Parsed public APIs and outlines of Python blobs (:mod:`repoherald.store.blobapis`).

    Keyed by blob SHA and codec version, so they are shared by every
    repository that holds the blob, and a run of another codec or Python
    simply does not find the rows of the others. ``saved_on`` (YYYY-MM-DD)
    lets old rows be dropped, so the table holds about the last two months of
    blobs instead of growing with every blob ever seen.
    """
    conn.execute(
        "CREATE TABLE blob_apis ("
        " blob TEXT NOT NULL,"
        " codec TEXT NOT NULL,"
        " data TEXT NOT NULL,"
        " checksum TEXT NOT NULL,"
        " saved_on TEXT NOT NULL,"
        " PRIMARY KEY (blob, codec)"
        ") WITHOUT ROWID"
    )
    conn.execute("CREATE INDEX blob_apis_saved ON blob_apis (saved_on)")


@migration
def m0009_corrections(conn: sqlite3.Connection) -> None:
    """Readers' corrections of a commit's verdict (:mod:`repoherald.store.corrections`).

    Not a cache: a team's judgement cannot be recomputed, so a rebuild
    carries the table over. One row per repository and commit; a new mark
    replaces the last.
    """
    conn.execute(
        "CREATE TABLE corrections ("
        " repo TEXT NOT NULL,"
        " sha TEXT NOT NULL,"
        " importance TEXT NOT NULL,"
        " change_type TEXT,"
        " reason TEXT NOT NULL,"
        " marked_at TEXT NOT NULL,"
        " PRIMARY KEY (repo, sha)"
        ")"
    )


@migration
def m0010_publish_claims(conn: sqlite3.Connection) -> None:
    """Claims on deliveries in progress (:mod:`repoherald.store.claims`).

    A delivery is claimed before it is sent, so two processes sharing a home
    do not both send it, and a process killed mid-send leaves a trace that
    says the target may have it ("uncertain") instead of being sent again
    silently.
    """
    conn.execute(
        "CREATE TABLE publish_claims ("
        " target TEXT NOT NULL,"
        " repo TEXT NOT NULL,"
        " day TEXT NOT NULL,"
        " state TEXT NOT NULL CHECK (state IN ('sending', 'uncertain')),"
        " content_hash TEXT NOT NULL,"
        " host TEXT NOT NULL,"
        " pid INTEGER NOT NULL,"
        " started TEXT NOT NULL,"
        " claimed_at TEXT NOT NULL,"
        " PRIMARY KEY (target, repo, day)"
        ")"
    )


@migration
def m0011_commit_links(conn: sqlite3.Connection) -> None:
    """What each reported commit is and what it names (:mod:`repoherald.store.links`).

    ``commit_index`` finds a commit of a repository by SHA prefix, by pull
    request number or by title, whatever day it was reported on;
    ``commit_mentions`` keeps the references a commit's message makes
    (reverts, re-lands, fixes, follow-ups) unresolved, so a commit reported
    later still finds the ones that named it. Both are derived from commits:
    a rebuild starts them empty, and the next runs fill them again.
    """
    conn.execute(
        "CREATE TABLE commit_index ("
        " repo TEXT NOT NULL,"
        " sha TEXT NOT NULL,"
        " time INTEGER NOT NULL,"
        " pr_number INTEGER,"
        " title TEXT NOT NULL,"
        " title_key TEXT NOT NULL,"
        " PRIMARY KEY (repo, sha)"
        ")"
    )
    conn.execute("CREATE INDEX commit_index_pr ON commit_index (repo, pr_number)")
    conn.execute("CREATE INDEX commit_index_title ON commit_index (repo, title_key)")
    conn.execute(
        "CREATE TABLE commit_mentions ("
        " repo TEXT NOT NULL,"
        " sha TEXT NOT NULL,"
        " kind TEXT NOT NULL,"
        " ref TEXT NOT NULL CHECK (ref IN ('sha', 'pr', 'title')),"
        " target TEXT NOT NULL,"
        " PRIMARY KEY (repo, sha, kind, ref, target)"
        ")"
    )
    conn.execute("CREATE INDEX commit_mentions_target ON commit_mentions (repo, ref, target)")


@migration
def m0012_ledger_skipped(conn: sqlite3.Connection) -> None:
    """The ledger may say a day was skipped: a quiet day a target does not want.

    A repository-day without commits is not sent unless the target sets
    ``send_empty``; it is filed as ``skipped``, which is neither retried
    (as ``failed`` is) nor taken for a delivery (as ``sent`` is). SQLite
    cannot change a CHECK, so the table is copied into a new one.
    """
    _statements(
        conn,
        """
        CREATE TABLE publish_ledger_new (
            target TEXT NOT NULL,
            repo TEXT NOT NULL,
            day TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('sent', 'failed', 'skipped')),
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            remote_id TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            first_attempt_at TEXT NOT NULL,
            last_attempt_at TEXT NOT NULL,
            sent_at TEXT,
            PRIMARY KEY (target, repo, day)
        );
        INSERT INTO publish_ledger_new SELECT
            target, repo, day, status, content, content_hash, remote_id, attempts,
            last_error, first_attempt_at, last_attempt_at, sent_at
        FROM publish_ledger;
        DROP TABLE publish_ledger;
        ALTER TABLE publish_ledger_new RENAME TO publish_ledger;
        CREATE INDEX publish_ledger_day ON publish_ledger (day)
        """,
    )


@migration
def m0013_work_leases(conn: sqlite3.Connection) -> None:
    """Leases on repository-days (:mod:`repoherald.store.leases`).

    Workers sharing a store claim each repository-day before reporting it; a
    lease that is not renewed runs out (``expires_at``, Unix seconds), so a
    killed worker's days are taken over. A finished day stays as ``done`` with
    the fingerprint of its inputs, so it is not reported twice.
    """
    conn.execute(
        "CREATE TABLE work_leases ("
        " repo TEXT NOT NULL,"
        " day TEXT NOT NULL,"
        " state TEXT NOT NULL CHECK (state IN ('working', 'done', 'failed')),"
        " worker TEXT NOT NULL,"
        " inputs TEXT NOT NULL,"
        " expires_at REAL NOT NULL,"
        " takeovers INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY (repo, day)"
        ")"
    )


def applied_versions(conn: sqlite3.Connection) -> set[int]:
    """Versions recorded in ``schema_migrations`` (none for a fresh database)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return set()
    return {int(row[0]) for row in conn.execute("SELECT version FROM schema_migrations")}


def apply_pending(conn: sqlite3.Connection, now: str) -> list[int]:
    """Apply what has not run yet; the caller holds the write transaction.

    The check happens here, under the same lock as the changes, so two
    first runs on a fresh home cannot both decide to create the tables.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = applied_versions(conn)
    applied = []
    for m in MIGRATIONS:
        if m.number in done:
            continue
        m.apply(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (m.number, m.name, now),
        )
        applied.append(m.number)
    return applied
