"""Cached parses of Python blobs: one row per (blob SHA, codec version).

A daily run's first version of each Python file it touches is the version
the run of the day before wrote; keeping the parsed entry
(:mod:`repoherald.analysis.apicodec`) by blob SHA lets today's run derive
from it instead of parsing the file whole again. Rows are content-addressed,
so repositories that share a blob share its row. Blobs that could not be
parsed are kept too (as JSON ``null``): a file too large or broken to parse
is not tried again every day. Rows carry a checksum like every cached row;
a bad one is a miss.

The text is not redacted: it holds what the facts hold (names and
signatures of public definitions), and redaction would change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, timedelta
from typing import Any, TypeVar

from repoherald.store.rows import Misses, Unreadable, decode, encode
from repoherald.store.sql import Conn, upsert

T = TypeVar("T")


def load(conn: Conn, blob: str, codec: str, build: Callable[[Any], T]) -> T | None:
    """The row's JSON value passed through ``build``; None when absent or unreadable.

    ``build`` raising ``TypeError``/``ValueError`` makes the row unreadable too.
    """
    row = conn.execute(
        "SELECT CAST(data AS BLOB), checksum FROM blob_apis WHERE blob = ? AND codec = ?",
        (blob, codec),
    ).fetchone()
    if row is None:
        return None
    try:
        return decode([blob, codec], row[0], row[1], build)
    except Unreadable as exc:
        misses = Misses()
        misses.add("blob_apis", [blob], exc)
        misses.report()
        return None


KEEP_DAYS = 60
"""Rows saved longer ago than this are dropped: a file untouched for two months is
parsed whole once more when it changes again, and the table stays bounded."""


def save(conn: Conn, codec: str, rows: Iterable[tuple[str, Any]], today: date) -> None:
    """Store ``(blob SHA, JSON value)`` pairs and drop rows older than :data:`KEEP_DAYS`.

    The caller holds the transaction.
    """
    conn.executemany(
        upsert("blob_apis", ("blob", "codec", "data", "checksum", "saved_on"), ("blob", "codec")),
        ((blob, codec, *encode([blob, codec], value), today.isoformat()) for blob, value in rows),
    )
    cutoff = today - timedelta(days=KEEP_DAYS)
    conn.execute("DELETE FROM blob_apis WHERE saved_on < ?", (cutoff.isoformat(),))
