"""Readers' corrections: a team's verdict on a commit, kept beside the tool's, never in it.

Rows are keyed by the repository's report name and the full commit SHA. The
commit must be in the store (it was reported), so a correction always has
the title and date its benchmark row needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from repoherald.models import (
    ChangeType,
    Commit,
    Correction,
    Importance,
)
from repoherald.store.codec import analysis_from_dict, commit_from_dict
from repoherald.store.rows import Unreadable, decode
from repoherald.store.runs import now_text
from repoherald.store.sql import Conn, split_columns, upsert

COLUMNS = "repo, sha, importance, change_type, reason, marked_at"
_CHUNK = 500


@dataclass(frozen=True, slots=True)
class Marked:
    """One stored correction with its commit and the tool's newest verdict on it."""

    repo: str
    commit: Commit | None
    """None when the stored commit no longer reads (a damaged cache row)."""
    sha: str
    correction: Correction
    tool_type: ChangeType | None
    """The type of the newest analysis in the store, for rows that corrected only importance."""


def find(conn: Conn, sha: str, repo: str | None) -> list[tuple[str, str]]:
    """(repository, full SHA) of the reported commits ``sha`` (a prefix) may mean."""
    pattern = sha.lower().replace("%", "").replace("_", "") + "%"
    if repo is None:
        rows = conn.execute(
            "SELECT repo, sha FROM repo_commits WHERE sha LIKE ? ORDER BY repo, sha LIMIT 20",
            (pattern,),
        )
    else:
        rows = conn.execute(
            "SELECT repo, sha FROM repo_commits WHERE repo = ? AND sha LIKE ? ORDER BY sha"
            " LIMIT 20",
            (repo, pattern),
        )
    return [(str(r), str(s)) for r, s in rows.fetchall()]


def save(conn: Conn, repo: str, sha: str, correction: Correction) -> None:
    type_value = correction.change_type.value if correction.change_type else None
    conn.execute(
        upsert("corrections", split_columns(COLUMNS), ("repo", "sha")),
        (repo, sha, correction.importance.value, type_value, correction.reason, now_text()),
    )


def load(conn: Conn, repo: str, shas: Sequence[str]) -> dict[str, Correction]:
    """The corrections of ``repo``'s ``shas``, by SHA."""
    out: dict[str, Correction] = {}
    for start in range(0, len(shas), _CHUNK):
        chunk = list(shas[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT sha, importance, change_type, reason, marked_at FROM corrections"
            f" WHERE repo = ? AND sha IN ({marks})",
            (repo, *chunk),
        ).fetchall()
        for sha, importance, change_type, reason, marked_at in rows:
            out[sha] = _correction(importance, change_type, reason, marked_at)
    return out


def every(conn: Conn) -> list[Marked]:
    """Every correction, oldest mark first, with its commit and the tool's newest type."""
    rows = conn.execute(
        "SELECT k.repo, k.sha, k.importance, k.change_type, k.reason, k.marked_at,"
        " CAST(c.data AS BLOB), c.checksum"
        " FROM corrections k LEFT JOIN commits c ON c.sha = k.sha"
        " ORDER BY k.marked_at, k.repo, k.sha"
    ).fetchall()
    out = []
    for repo, sha, importance, change_type, reason, marked_at, data, digest in rows:
        commit: Commit | None = None
        if data is not None:
            try:
                commit = decode([sha], data, digest, commit_from_dict)
            except Unreadable:
                commit = None
        correction = _correction(importance, change_type, reason, marked_at)
        tool = None if correction.change_type else _tool_type(conn, sha)
        out.append(Marked(repo, commit, sha, correction, tool))
    return out


def _tool_type(conn: Conn, sha: str) -> ChangeType | None:
    """The change type of the newest readable analysis of ``sha`` (rules or model)."""
    rows = conn.execute(
        "SELECT analyser, CAST(data AS BLOB), checksum FROM analyses WHERE sha = ?"
        " ORDER BY created_at DESC",
        (sha,),
    ).fetchall()
    for analyser, data, digest in rows:
        try:
            return decode([sha, analyser], data, digest, analysis_from_dict).change_type
        except Unreadable:
            continue
    return None


def _correction(importance: str, change_type: str | None, reason: str, at: str) -> Correction:
    return Correction(
        Importance(importance), ChangeType(change_type) if change_type else None, reason, at
    )
