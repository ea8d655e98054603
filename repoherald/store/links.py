"""Which commits a repository's reports have shown, and what their messages name.

Rows are keyed by the repository's report name and the full commit SHA (as
``repo_commits`` is), so a link never crosses repositories. Mentions are kept
as written (a SHA prefix, a PR number, a title key) and resolved when a
report is built: a commit reported next week still finds this week's
commits that named it, and a prefix that becomes ambiguous stops linking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from repoherald.models import Mention
from repoherald.store.sql import Conn, insert_new, upsert

_COLUMNS = "sha, time, pr_number, title"
REFS = ("sha", "pr", "title")
"""What a mention names, in the order :func:`mentioning` returns them."""
MIN_PREFIX = 7


@dataclass(frozen=True, slots=True)
class Known:
    """A commit of the repository the store has seen in a report."""

    sha: str
    time: int
    """Committer time (what its report day was bucketed by), seconds since the epoch."""
    pr_number: int | None
    title: str


@dataclass(frozen=True, slots=True)
class Indexed:
    """What :func:`index` records about one commit."""

    known: Known
    title_key: str
    mentions: tuple[Mention, ...]


def index(conn: Conn, repo: str, rows: Sequence[Indexed]) -> None:
    """Record (or refresh) ``rows``; a commit's mentions are replaced, never piled up.

    Three batched statements whatever the number of rows, so a database
    across a network pays three round trips, not three per commit.
    """
    last = {row.known.sha: row for row in rows}  # a commit given twice: its last row counts
    conn.executemany(
        upsert(
            "commit_index",
            ("repo", "sha", "time", "pr_number", "title", "title_key"),
            ("repo", "sha"),
        ),
        [
            (repo, r.known.sha, r.known.time, r.known.pr_number, r.known.title, r.title_key)
            for r in last.values()
        ],
    )
    conn.executemany(
        "DELETE FROM commit_mentions WHERE repo = ? AND sha = ?", [(repo, sha) for sha in last]
    )
    conn.executemany(
        insert_new("commit_mentions", ("repo", "sha", "kind", "ref", "target")),
        [(repo, sha, m.kind, m.ref, m.target) for sha, r in last.items() for m in r.mentions],
    )


def _known(rows: list[tuple[str, int, int | None, str]]) -> list[Known]:
    return [Known(str(s), int(t), None if p is None else int(p), str(x)) for s, t, p, x in rows]


def by_prefix(conn: Conn, repo: str, prefix: str) -> list[Known]:
    """The known commits whose SHA starts with ``prefix`` (at most two: one means unique)."""
    prefix = prefix.lower()
    if len(prefix) < MIN_PREFIX or not all(c in "0123456789abcdef" for c in prefix):
        return []
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM commit_index WHERE repo = ? AND sha >= ? AND sha < ?"
        " ORDER BY sha LIMIT 2",
        (repo, prefix, prefix + "g"),
    ).fetchall()
    return _known(rows)


def by_pr(conn: Conn, repo: str, number: int) -> list[Known]:
    """The known commits of pull request ``number``, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM commit_index WHERE repo = ? AND pr_number = ? ORDER BY time, sha",
        (repo, number),
    ).fetchall()
    return _known(rows)


def by_title(conn: Conn, repo: str, keys: Sequence[str]) -> list[Known]:
    """The known commits whose title key is one of ``keys``, oldest first."""
    marks = ",".join("?" * len(keys))
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM commit_index WHERE repo = ? AND title_key IN ({marks})"
        " ORDER BY time, sha",
        (repo, *keys),
    ).fetchall()
    return _known(rows)


def mentioning(
    conn: Conn, repo: str, sha: str, pr_number: int | None, title_keys: Sequence[str]
) -> list[tuple[Known, Mention]]:
    """Known commits whose mentions may name this commit (its SHA prefixes, its PR, its
    title), with the mention; the caller resolves each to be sure it means this one."""
    wanted = [("sha", sha[:n]) for n in range(MIN_PREFIX, len(sha) + 1)]
    if pr_number is not None:
        wanted.append(("pr", str(pr_number)))
    wanted += [("title", key) for key in title_keys]
    clauses: list[str] = []
    params: list[str] = []
    for ref in REFS:
        targets = [target for r, target in wanted if r == ref]
        if targets:
            clauses.append(f"(m.ref = ? AND m.target IN ({','.join('?' * len(targets))}))")
            params += [ref, *targets]
    if not clauses:
        return []
    rows = conn.execute(
        "SELECT i.sha, i.time, i.pr_number, i.title, m.kind, m.ref, m.target"
        " FROM commit_mentions m JOIN commit_index i ON i.repo = m.repo AND i.sha = m.sha"
        f" WHERE m.repo = ? AND m.sha != ? AND ({' OR '.join(clauses)})"
        " ORDER BY CASE m.ref WHEN 'sha' THEN 0 WHEN 'pr' THEN 1 ELSE 2 END,"
        " i.time, i.sha, m.kind, m.target",
        (repo, sha, *params),
    ).fetchall()
    return [
        (_known([(s, t, p, x)])[0], Mention(str(kind), str(ref), str(target)))
        for s, t, p, x, kind, ref, target in rows
    ]
