"""Which repository-days were reported: ``repoherald run`` catches up from the newest."""

from __future__ import annotations

from datetime import date

from repoherald.store.ledger import content_hash
from repoherald.store.runs import now_text
from repoherald.store.sql import Conn, split_columns, upsert

COLUMNS = "repo, day, lang, commits, high, path, content_hash, generated_at"


def record(
    conn: Conn,
    repo: str,
    day: date,
    lang: str,
    commits: int,
    high: int,
    path: str,
    text: str,
) -> None:
    conn.execute(
        upsert("reports", split_columns(COLUMNS), ("repo", "day", "lang")),
        (repo, day.isoformat(), lang, commits, high, path, content_hash(text), now_text()),
    )


def latest_day(conn: Conn, repo: str) -> date | None:
    row = conn.execute("SELECT MAX(day) FROM reports WHERE repo = ?", (repo,)).fetchone()
    return date.fromisoformat(row[0]) if row and row[0] else None


def days_of(conn: Conn, repo: str) -> list[tuple[date, str, str, str]]:
    """``(day, language, path, content hash)`` of every report recorded for ``repo``."""
    rows = conn.execute("SELECT day, lang, path, content_hash FROM reports WHERE repo = ?", (repo,))
    return [(date.fromisoformat(d), lang, path, digest or "") for d, lang, path, digest in rows]
