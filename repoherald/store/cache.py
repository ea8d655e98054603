"""The cache that makes a re-run free: commits, their facts and their analyses.

A commit's facts are keyed by (SHA, extractor identity) and its analysis by
(SHA, analyser identity). Every row carries a checksum
(:mod:`repoherald.store.rows`); one that fails it or does not decode is a
miss. Shared by both backends: the caller holds the transaction for writes.
"""

from __future__ import annotations

from collections.abc import Sequence

from repoherald.models import Analysis, Commit, Facts
from repoherald.store.codec import (
    analysis_from_dict,
    commit_from_dict,
    facts_from_dict,
    to_jsonable,
)
from repoherald.store.rows import Misses, Unreadable, decode, encode
from repoherald.store.runs import now_text
from repoherald.store.sql import Conn, insert_new, upsert

CHUNK = 500
"""SHAs per ``IN (...)`` query: well under either database's limit on parameters."""


def load(
    conn: Conn, shas: Sequence[str], extractor: str, analyser: str
) -> dict[str, tuple[Commit, Facts, Analysis]]:
    """Everything cached for ``shas`` under these identities (missing ones omitted)."""
    out: dict[str, tuple[Commit, Facts, Analysis]] = {}
    misses = Misses()
    for start in range(0, len(shas), CHUNK):
        chunk = list(shas[start : start + CHUNK])
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT c.sha, CAST(c.data AS BLOB), c.checksum,"
            " CAST(f.data AS BLOB), f.checksum, CAST(a.data AS BLOB), a.checksum"
            " FROM commits c"
            " JOIN facts f ON f.sha = c.sha AND f.extractor = ?"
            " JOIN analyses a ON a.sha = c.sha AND a.analyser = ?"
            f" WHERE c.sha IN ({marks})",
            (extractor, analyser, *chunk),
        ).fetchall()
        for sha, c_data, c_sum, f_data, f_sum, a_data, a_sum in rows:
            table = "commits"
            try:
                commit = decode([sha], c_data, c_sum, commit_from_dict)
                table = "facts"
                facts = decode([sha, extractor], f_data, f_sum, facts_from_dict)
                table = "analyses"
                analysis = decode([sha, analyser], a_data, a_sum, analysis_from_dict)
            except Unreadable as exc:
                misses.add(table, [sha], exc)
                continue
            out[sha] = (commit, facts, analysis)
    misses.report()
    return out


def save(
    conn: Conn, repo: str, items: Sequence[tuple[Commit, Facts, Analysis]], extractor: str
) -> None:
    """Write commits, their file changes, facts and analyses; the caller holds the transaction.

    One batched statement per table whatever the number of commits (a server
    across a network pays a round trip per statement), rows in SHA order so
    two processes saving overlapping commits (forks of one project) take
    their row locks in the same order. A commit given twice: its last item counts.
    """
    last = {item[0].sha: item for item in items}
    ordered = [last[sha] for sha in sorted(last)]
    conn.executemany(
        upsert("commits", ("sha", "data", "checksum"), ("sha",)),
        [(c.sha, *encode([c.sha], to_jsonable(c))) for c, _, _ in ordered],
    )
    conn.executemany(
        insert_new("repo_commits", ("repo", "sha")), [(repo, c.sha) for c, _, _ in ordered]
    )
    conn.executemany("DELETE FROM file_changes WHERE sha = ?", [(c.sha,) for c, _, _ in ordered])
    conn.executemany(
        "INSERT INTO file_changes"
        ' (sha, idx, path, old_path, status, added, deleted, "binary")'
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (c.sha, i, f.path, f.old_path, f.status.value, f.added, f.deleted, int(f.binary))
            for c, facts, _ in ordered
            for i, f in enumerate(facts.files)
        ],
    )
    conn.executemany(
        upsert("facts", ("sha", "extractor", "data", "checksum"), ("sha", "extractor")),
        [
            (c.sha, extractor, *encode([c.sha, extractor], to_jsonable(facts)))
            for c, facts, _ in ordered
        ],
    )
    put_analyses(conn, [(c.sha, analysis) for c, _, analysis in ordered])


def put_analyses(conn: Conn, items: Sequence[tuple[str, Analysis]]) -> None:
    """Write analyses keyed by (SHA, analyser identity) in one batched statement; the caller
    holds the transaction."""
    rows = []
    for sha, analysis in items:
        data, digest = encode([sha, analysis.analyser], to_jsonable(analysis))
        rows.append((sha, analysis.analyser, data, now_text(), digest))
    conn.executemany(
        upsert(
            "analyses",
            ("sha", "analyser", "data", "created_at", "checksum"),
            ("sha", "analyser"),
        ),
        rows,
    )


def load_analyses(conn: Conn, shas: Sequence[str], analyser: str) -> dict[str, Analysis]:
    """Cached analyses of ``shas`` by one analyser (e.g. an LLM identity)."""
    out: dict[str, Analysis] = {}
    misses = Misses()
    for start in range(0, len(shas), CHUNK):
        chunk = list(shas[start : start + CHUNK])
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT sha, CAST(data AS BLOB), checksum FROM analyses"
            f" WHERE analyser = ? AND sha IN ({marks})",
            (analyser, *chunk),
        ).fetchall()
        for sha, data, digest in rows:
            try:
                out[sha] = decode([sha, analyser], data, digest, analysis_from_dict)
            except Unreadable as exc:
                misses.add("analyses", [sha], exc)
    misses.report()
    return out
