"""Cached downstream indexes: one row per checkout and upstream packages, keyed by content.

Building the index of a large downstream project takes seconds; its key
(:func:`repoherald.sources.checkout.index_key`) changes whenever the checkout
may have changed, so a hit is always current and a run re-indexes only what
moved. Rows carry a checksum like every cached row; a bad one is a miss.
"""

from __future__ import annotations

from typing import Any

from repoherald.redact import redact
from repoherald.store.rows import Misses, Unreadable, checksum, decode, encode
from repoherald.store.runs import now_text
from repoherald.store.sql import Conn, upsert


def load(conn: Conn, key: str) -> dict[str, Any] | None:
    """The index stored under ``key`` as a plain dict, or None (absent or unreadable)."""
    row = conn.execute(
        "SELECT CAST(data AS BLOB), checksum FROM downstream_indexes WHERE key = ?", (key,)
    ).fetchone()
    if row is None:
        return None
    misses = Misses()
    try:
        data: dict[str, Any] = decode([key], row[0], row[1], _as_dict)
    except Unreadable as exc:
        misses.add("downstream_indexes", [key], exc)
        misses.report()
        return None
    return data


def save(conn: Conn, key: str, scope: str, data: dict[str, Any]) -> None:
    """Store an index, replacing any earlier one of the same checkout and packages.

    The text is redacted like everything the store keeps: string literals of
    the reader's code (environment variable names, flags) are in it.
    """
    text = redact(encode([key], data)[0])
    digest = checksum([key], text.encode("utf-8"))
    conn.execute("DELETE FROM downstream_indexes WHERE scope = ? AND key != ?", (scope, key))
    conn.execute(
        upsert("downstream_indexes", ("key", "scope", "data", "checksum", "created_at"), ("key",)),
        (key, scope, text, digest, now_text()),
    )


def _as_dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError("not an index")
    return value
