"""What must hold between the reports, the publish ledger and the leases, checked.

Workers killed at any point must leave the store consistent: nothing
delivered that was not reported, nothing marked done that was not reported,
nothing recorded as sent without when. These checks read only; each broken
rule is one line naming the rows, so a test or an operator sees what is
wrong rather than a count. The same SQL serves every backend.
"""

from __future__ import annotations

from repoherald.store.sql import Conn

_RULES: tuple[tuple[str, str], ...] = (
    (
        "delivered but never reported",
        "SELECT l.target, l.repo, l.day FROM publish_ledger l"
        " WHERE l.status = 'sent' AND NOT EXISTS"
        " (SELECT 1 FROM reports r WHERE r.repo = l.repo AND r.day = l.day)",
    ),
    (
        "sent without a time or an attempt",
        "SELECT target, repo, day FROM publish_ledger"
        " WHERE status = 'sent' AND (sent_at IS NULL OR attempts < 1)",
    ),
    (
        "a repository-day done but never reported",
        "SELECT w.repo, w.day, w.worker FROM work_leases w"
        " WHERE w.state = 'done' AND NOT EXISTS"
        " (SELECT 1 FROM reports r WHERE r.repo = w.repo AND r.day = w.day)",
    ),
)


def problems(conn: Conn) -> list[str]:
    """One line per broken rule (empty when the store is consistent)."""
    out = []
    for what, sql in _RULES:
        rows = conn.execute(sql).fetchall()
        if rows:
            shown = "; ".join(" ".join(str(v) for v in row) for row in rows[:5])
            more = f" (and {len(rows) - 5} more)" if len(rows) > 5 else ""
            out.append(f"{what}: {shown}{more}")
    return out
