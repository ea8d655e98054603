"""GitHub's JSON shapes -> repoherald's models.

Kept apart from the HTTP client so the mapping can be read (and tested) on
its own: which GitHub file status is which :class:`FileStatus`, how a
commit's dates become epoch seconds, which pull request of several is the
one that brought a commit in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from repoherald.models import Commit, FileStatus, Person, PullRequest

STATUS = {
    "added": FileStatus.ADDED,
    "removed": FileStatus.DELETED,
    "modified": FileStatus.MODIFIED,
    "renamed": FileStatus.RENAMED,
    "copied": FileStatus.COPIED,
    "changed": FileStatus.TYPE_CHANGED,
    "unchanged": FileStatus.MODIFIED,
}
"""GitHub's ``files[].status`` values (the OpenAPI ``diff-entry`` enum)."""


class ShapeError(ValueError):
    """A GitHub answer does not have the fields it must have."""


def parse_time(text: str) -> tuple[int, int]:
    """``2026-01-22T10:00:00Z`` -> (epoch seconds, UTC offset in minutes).

    GitHub reports commit dates in UTC, so the offset the author's machine
    recorded is usually lost (0); a date with an offset keeps it.
    """
    when = datetime.fromisoformat(text)
    offset = when.utcoffset()
    if offset is None:
        raise ShapeError(f"date without a time zone: {text!r}")
    return int(when.timestamp()), int(offset.total_seconds() // 60)


def _person(d: dict[str, Any]) -> tuple[Person, int, int]:
    ts, off = parse_time(str(d["date"]))
    name = str(d.get("name") or "").strip() or "?"
    return Person(name=name, email=str(d.get("email") or "")), ts, off


def commit_from_json(item: dict[str, Any], *, files_truncated: bool = False) -> Commit:
    """A :class:`Commit` from an element of ``/commits`` or the body of ``/commits/{sha}``."""
    try:
        meta = item["commit"]
        author, a_ts, a_off = _person(meta["author"])
        committer, c_ts, c_off = _person(meta["committer"])
        return Commit(
            sha=str(item["sha"]),
            parents=tuple(str(p["sha"]) for p in item["parents"]),
            author=author,
            author_time=a_ts,
            author_offset=a_off,
            committer=committer,
            commit_time=c_ts,
            commit_offset=c_off,
            message=str(meta.get("message") or "").replace("\r\n", "\n"),
            files_truncated=files_truncated,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"commit without {exc}") from None


def committer_time(item: dict[str, Any]) -> int:
    """The committer date of a ``/commits`` element (what the pipeline buckets by)."""
    try:
        return parse_time(str(item["commit"]["committer"]["date"]))[0]
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"commit without a committer date ({exc})") from None


def tree_sha(item: dict[str, Any]) -> str:
    """The root tree of a commit, from ``/commits`` (``commit.tree``) or ``/git/commits``."""
    try:
        tree = item["commit"]["tree"] if "commit" in item else item["tree"]
        return str(tree["sha"])
    except (KeyError, TypeError) as exc:
        raise ShapeError(f"commit without a tree ({exc})") from None


@dataclass(frozen=True, slots=True)
class ListedFile:
    """One element of ``/commits/{sha}``'s ``files``, before the trees fill in modes and blobs."""

    path: str
    status: FileStatus
    old_path: str | None
    added: int
    deleted: int
    patch: str | None
    """None when GitHub sent no patch (binary, too large, or nothing to show)."""


def file_from_json(d: dict[str, Any]) -> ListedFile:
    try:
        status = STATUS.get(str(d["status"]), FileStatus.MODIFIED)
        prev = d.get("previous_filename")
        moved = prev and status in (FileStatus.RENAMED, FileStatus.COPIED)
        patch = d.get("patch")
        return ListedFile(
            path=str(d["filename"]),
            status=status,
            old_path=str(prev) if moved else None,
            added=int(d.get("additions") or 0),
            deleted=int(d.get("deletions") or 0),
            patch=str(patch) if isinstance(patch, str) else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"file entry without {exc}") from None


def _login(user: Any) -> str | None:
    if isinstance(user, dict) and user.get("login"):
        return str(user["login"])
    return None


def pull_from_json(d: dict[str, Any]) -> PullRequest:
    """A :class:`PullRequest` from ``/pulls/{n}`` (or a ``/commits/{sha}/pulls`` element)."""
    try:
        return PullRequest(
            number=int(d["number"]),
            title=str(d.get("title") or ""),
            body=str(d.get("body") or "").replace("\r\n", "\n"),
            labels=tuple(
                str(label["name"])
                for label in d.get("labels") or ()
                if isinstance(label, dict) and label.get("name")
            ),
            author=_login(d.get("user")) or "?",
            merged_by=_login(d.get("merged_by")),
            url=str(d.get("html_url") or ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"pull request without {exc}") from None


def pick_pull(pulls: Sequence[dict[str, Any]], sha: str, branch: str) -> dict[str, Any] | None:
    """Of the pull requests GitHub associates with ``sha``, the one that brought it in.

    Preferred: the one whose merge commit *is* ``sha`` (squash, merge commit
    or the last of a rebase); then one merged into ``branch``; then any merged
    one; then the first.
    """
    candidates = [p for p in pulls if isinstance(p, dict) and "number" in p]
    if not candidates:
        return None

    def rank(p: dict[str, Any]) -> int:
        base = p.get("base")
        into = base.get("ref") if isinstance(base, dict) else None
        if p.get("merge_commit_sha") == sha and p.get("merged_at"):
            return 0
        if p.get("merged_at") and into == branch:
            return 1
        return 2 if p.get("merged_at") else 3

    return min(candidates, key=rank)
