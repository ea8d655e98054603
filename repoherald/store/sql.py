"""The SQL the store's modules share between SQLite and PostgreSQL, and how it is spoken.

The store's queries are written once, in the spelling both databases accept
(``INSERT ... ON CONFLICT``, ``RETURNING``, standard joins), against the
small :class:`Conn` protocol that an ``sqlite3.Connection`` satisfies as it
is. Two things SQLite and PostgreSQL spell differently are written in
SQLite's form and translated for PostgreSQL in one place,
:func:`repoherald.store.pgconn.to_postgres`: the ``?``
placeholder and ``CAST(column AS BLOB)`` (the bytes of a text column, which
the row checksums cover).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, Protocol

Dialect = Literal["sqlite", "postgresql"]
"""Which database a connection speaks; migrations branch on it where the DDL differs."""


class Rows(Protocol):
    """What a query returns: an ``sqlite3.Cursor`` or a psycopg cursor."""

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """A connection the store's modules run their SQL on (``?`` placeholders)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Rows: ...

    def close(self) -> None: ...

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Rows: ...


def upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """``INSERT`` one row, replacing the non-key columns of the row with the same ``key``.

    What SQLite's ``INSERT OR REPLACE`` did, in the form PostgreSQL speaks too.
    """
    marks = ", ".join("?" * len(columns))
    updates = [c for c in columns if c not in key]
    action = (
        "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in updates)
        if updates
        else "DO NOTHING"
    )
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        f" ON CONFLICT ({', '.join(key)}) {action}"
    )


def insert_new(table: str, columns: Sequence[str]) -> str:
    """``INSERT`` one row unless a row with the same key exists (SQLite's ``INSERT OR IGNORE``)."""
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING"


def split_columns(columns: str) -> list[str]:
    """``"a, b, c"`` (a module's ``COLUMNS``) as a list."""
    return [c.strip() for c in columns.split(",")]
