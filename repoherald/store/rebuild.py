"""What survives ``rebuild``: the tables that record what was done, not what was computed.

The cache can be recomputed; the record of which days were reported (the
catch-up of ``repoherald run``), of what was published (so nothing is
posted twice) and the readers' corrections (a team's judgement) cannot. A
rebuild copies them from the store it moved aside when they are still
readable, and says so when they are not.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from repoherald.redact import redact
from repoherald.store import claims, corrections, ledger, reports

log = logging.getLogger("repoherald")

CARRIED = {
    "reports": reports.COLUMNS,
    "publish_ledger": ledger.COLUMNS,
    "corrections": corrections.COLUMNS,
    "publish_claims": claims.COLUMNS,
}


def carry_over(
    conn: sqlite3.Connection, old: Path, transaction: Callable[[], AbstractContextManager[None]]
) -> None:
    """Copy :data:`CARRIED` from the store at ``old`` into ``conn``'s main database."""
    try:
        conn.execute("ATTACH DATABASE ? AS old", (str(old),))
    except sqlite3.Error as exc:
        log.warning("%s", redact(f"the store moved aside to {old} could not be read: {exc}"))
        return
    try:
        with transaction():
            for table, columns in CARRIED.items():
                present = conn.execute(
                    "SELECT 1 FROM old.sqlite_master WHERE type = 'table' AND name = ?", (table,)
                ).fetchone()
                if present:
                    conn.execute(
                        f"INSERT OR IGNORE INTO main.{table} ({columns})"
                        f" SELECT {columns} FROM old.{table}"
                    )
    except sqlite3.Error as exc:
        log.warning(
            "%s",
            redact(
                f"the reports, publish records and corrections of {old} could not be carried"
                f" over ({exc}): `repoherald run` may report, and publishers send, those days"
                " again, and the corrections must be marked again"
            ),
        )
    finally:
        conn.execute("DETACH DATABASE old")
