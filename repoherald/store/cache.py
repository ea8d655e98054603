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

    Rows are written in SHA order, so two processes saving overlapping
    commits (forks of one project) take their row locks in the same order.
    """
    for commit, facts, analysis in sorted(items, key=lambda item: item[0].sha):
        sha = commit.sha
        conn.execute(
            upsert("commits", ("sha", "data", "checksum"), ("sha",)),
            (sha, *encode([sha], to_jsonable(commit))),
        )
        conn.execute(insert_new("repo_commits", ("repo", "sha")), (repo, sha))
        conn.execute("DELETE FROM file_changes WHERE sha = ?", (sha,))
        changes = [
            (sha, i, f.path, f.old_path, f.status.value, f.added, f.deleted, int(f.binary))
            for i, f in enumerate(facts.files)
        ]
        if changes:
            conn.executemany(
                "INSERT INTO file_changes"
                ' (sha, idx, path, old_path, status, added, deleted, "binary")'
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                changes,
            )
        conn.execute(
            upsert("facts", ("sha", "extractor", "data", "checksum"), ("sha", "extractor")),
            (sha, extractor, *encode([sha, extractor], to_jsonable(facts))),
        )
        put_analysis(conn, sha, analysis)


def put_analysis(conn: Conn, sha: str, analysis: Analysis) -> None:
    """Write one analysis keyed by (SHA, analyser identity); the caller holds the transaction."""
    data, digest = encode([sha, analysis.analyser], to_jsonable(analysis))
    conn.execute(
        upsert(
            "analyses",
            ("sha", "analyser", "data", "created_at", "checksum"),
            ("sha", "analyser"),
        ),
        (sha, analysis.analyser, data, now_text(), digest),
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
