"""Readers' corrections: record a team's verdict on a reported commit, and export them as labels.

A team that disagrees with a verdict says so once (``repoherald mark``); every
later rendering of that day shows the correction beside the tool's verdict,
and the corrections export as labelled rows in the benchmarks' ``commits.tsv``
format, so the disagreements of real readers become test data. The analyses
themselves never see a correction: it is neither in their input nor in their
cache key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from repoherald.errors import PublishError, UsageError
from repoherald.models import ChangeType, Correction, Importance
from repoherald.store.base import Store
from repoherald.store.corrections import Marked

TSV_COLUMNS = ("repo", "sha", "committed", "title", "type", "importance", "note")
"""The columns of the benchmarks' ``commits.tsv`` (``bench/goldset.py`` reads them)."""
MAX_REASON = 500
_SHA = re.compile(r"[0-9a-fA-F]{4,40}")


@dataclass(frozen=True, slots=True)
class MarkedCommit:
    """Where a correction went: the repository and the full SHA."""

    repo: str
    sha: str


def mark_commit(
    store: Store,
    sha: str,
    importance: Importance,
    change_type: ChangeType | None,
    reason: str,
    repo: str | None = None,
) -> MarkedCommit:
    """Record a correction of the reported commit ``sha`` (a prefix of at least 4 digits)."""
    if not _SHA.fullmatch(sha):
        raise UsageError(f"{sha!r} is not a commit SHA: give at least 4 of its hex digits")
    text = " ".join(reason.split())
    if not text:
        raise UsageError("a correction needs a reason: say why in --reason")
    if len(text) > MAX_REASON:
        raise UsageError(f"the reason is {len(text)} characters long: keep it to {MAX_REASON}")
    found = store.find_reported(sha, repo)
    if not found:
        where = f" of {repo}" if repo else ""
        raise UsageError(
            f"no reported commit{where} starts with {sha}: report its day first"
            " (repoherald report or run), or check --repo against the report's repository name"
        )
    if len(found) > 1:
        shown = ", ".join(f"{s[:12]} ({r})" for r, s in found[:5])
        raise UsageError(
            f"{sha} matches {len(found)} reported commits ({shown}): give more of the SHA,"
            " or the repository with --repo"
        )
    ((name, full),) = found
    at = datetime.now(UTC).isoformat(timespec="seconds")
    store.mark(name, full, Correction(importance, change_type, text, at))
    return MarkedCommit(name, full)


def export_corrections(store: Store, path: Path) -> int:
    """Write every correction as a labelled ``commits.tsv`` row; return how many."""
    rows = ["\t".join(TSV_COLUMNS)]
    marked = store.every_correction()
    rows.extend("\t".join(_row(m)) for m in marked)
    try:
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    except OSError as exc:
        raise PublishError(f"cannot write {path}: {exc.strerror}") from None
    return len(marked)


def _row(m: Marked) -> tuple[str, ...]:
    """One labelled row: the reader's importance, their type or else the tool's, their reason."""
    committed = title = ""
    if m.commit is not None:
        zone = timezone(timedelta(minutes=m.commit.commit_offset))
        committed = datetime.fromtimestamp(m.commit.commit_time, tz=zone).isoformat()
        title = m.commit.title
    kind = m.correction.change_type or m.tool_type
    return tuple(
        _field(v)
        for v in (
            m.repo, m.sha, committed, title, kind.value if kind else "",
            m.correction.importance.value, m.correction.reason,
        )
    )  # fmt: skip


def _field(value: str) -> str:
    """A TSV field: no tab or line break may split the row."""
    return " ".join(value.split())
