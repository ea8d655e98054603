"""Append-only, numbered schema migrations.

Never edit or reorder an entry that has shipped: add a new one. The
``schema_migrations`` table records which have run, so a database created by
any earlier version upgrades in place.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "initial",
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
    ),
    (
        2,
        "reports",
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
    ),
]
