"""The PostgreSQL store's pure parts: how shared SQL is respelled, how a URL is shown."""

from __future__ import annotations

import pytest

from repoherald.store.pgconn import shown, to_postgres
from repoherald.store.sql import insert_new, upsert


def test_placeholders_blob_casts_and_percent_signs_are_respelled() -> None:
    sql = "SELECT CAST(c.data AS BLOB), checksum FROM t WHERE a = ? AND b LIKE '50%' AND c IN (?,?)"
    assert to_postgres(sql) == (
        "SELECT convert_to(c.data, 'UTF8'), checksum FROM t"
        " WHERE a = %s AND b LIKE '50%%' AND c IN (%s,%s)"
    )


def test_upserts_are_spelled_once_for_both_databases() -> None:
    assert upsert("t", ("k", "a", "b"), ("k",)) == (
        "INSERT INTO t (k, a, b) VALUES (?, ?, ?)"
        " ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b"
    )
    assert upsert("t", ("k", "j"), ("k", "j")).endswith("ON CONFLICT (k, j) DO NOTHING")
    assert insert_new("t", ("a", "b")) == (
        "INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://herald:pw-1234@db.internal:5433/reports", "db.internal:5433/reports"),
        ("postgresql://herald:p%40ss%2Fw0rd@[::1]/reports", "[::1]/reports"),
        ("postgres://db.internal/reports", "postgres://db.internal/reports"),
        (
            "postgresql://herald:pw-1234@/reports?host=%2Ftmp%2Fsock",
            "/reports (socket in /tmp/sock)",
        ),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, expected: str) -> None:
    text = shown(url)
    assert text.endswith(expected)
    assert "pw-1234" not in text and "p%40ss" not in text and "p@ss/w0rd" not in text
