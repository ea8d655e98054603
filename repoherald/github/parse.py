"""GitHub's JSON shapes -> repoherald's models.

Kept apart from the HTTP client so the mapping can be read (and tested) on
its own: which GitHub file status is which :class:`FileStatus`, how a
commit's dates become epoch seconds, which pull request of several is the
one that brought a commit in.

This is also where a server's answer is checked before anything trusts it:
a SHA is hexadecimal, a count is a non-negative integer of sane size, a
number is a positive integer, a date lies between 1970 and 2999, a link is
plain http(s). What fails is a :class:`ShapeError` naming the field, which
the source turns into a failure of that one commit, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
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


EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(3000, 1, 1, tzinfo=UTC)
"""Dates outside [EARLIEST, LATEST) are refused: 9999-12-31 overflows as soon as it
is moved to a time zone east of UTC, and no real commit is that old or new."""
MAX_COUNT = 1_000_000_000
"""More added or deleted lines than this in one file is not a real answer (and
would not fit an SQLite integer once summed, for -1e30)."""
MAX_NUMBER = 2**31 - 1
"""GitHub's issue and pull request numbers are 32-bit."""
MAX_ID = 2**63 - 1
"""Comment and other database ids are 64-bit."""
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_LINK = re.compile(r"https?://[^\s<>()\[\]`\"'\\]+")


def parse_time(text: str) -> tuple[int, int]:
    """``2026-01-22T10:00:00Z`` -> (epoch seconds, UTC offset in minutes).

    GitHub reports commit dates in UTC, so the offset the author's machine
    recorded is usually lost (0); a date with an offset keeps it.
    """
    when = datetime.fromisoformat(text)
    offset = when.utcoffset()
    if offset is None:
        raise ShapeError(f"date without a time zone: {text!r}")
    if not EARLIEST <= when < LATEST:
        raise ShapeError(f"date out of range: {text[:40]!r}")
    return int(when.timestamp()), int(offset.total_seconds() // 60)


def git_id(value: Any, what: str = "sha") -> str:
    """A commit, tree or blob id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits."""
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise ShapeError(f"{what} is not a git object id: {str(value)[:50]!r}")
    return value


def count(value: Any, what: str) -> int:
    """A line count: absent is 0; else an integer in [0, :data:`MAX_COUNT`]."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ShapeError(f"{what} is not a line count: {str(value)[:30]!r}")
    return value


def number(value: Any, what: str, maximum: int = MAX_NUMBER) -> int:
    """An issue or pull request number: an integer in [1, ``maximum``] (not ``"abc"``,
    not ``1e400``, which JSON parses as infinity)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise ShapeError(f"{what} is not a number: {str(value)[:30]!r}")
    return value


def link(value: Any) -> str:
    """A web address kept only when it is plain http(s); anything else is dropped ("")."""
    text = str(value or "")
    return text if _LINK.fullmatch(text) else ""


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
            sha=git_id(item["sha"]),
            parents=tuple(git_id(p["sha"], "parent") for p in item["parents"]),
            author=author,
            author_time=a_ts,
            author_offset=a_off,
            committer=committer,
            commit_time=c_ts,
            commit_offset=c_off,
            message=str(meta.get("message") or "").replace("\r\n", "\n"),
            files_truncated=files_truncated,
        )
    except ShapeError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"commit without {exc}") from None


def committer_time(item: dict[str, Any]) -> int:
    """The committer date of a ``/commits`` element (what the pipeline buckets by)."""
    try:
        return parse_time(str(item["commit"]["committer"]["date"]))[0]
    except ShapeError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"commit without a committer date ({exc})") from None


def tree_sha(item: dict[str, Any]) -> str:
    """The root tree of a commit, from ``/commits`` (``commit.tree``) or ``/git/commits``."""
    try:
        tree = item["commit"]["tree"] if "commit" in item else item["tree"]
        return git_id(tree["sha"], "tree")
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
            added=count(d.get("additions"), "additions"),
            deleted=count(d.get("deletions"), "deletions"),
            patch=str(patch) if isinstance(patch, str) else None,
        )
    except ShapeError:
        raise
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
            number=number(d["number"], "pull request number"),
            title=str(d.get("title") or ""),
            body=str(d.get("body") or "").replace("\r\n", "\n"),
            labels=tuple(
                str(label["name"])
                for label in d.get("labels") or ()
                if isinstance(label, dict) and label.get("name")
            ),
            author=_login(d.get("user")) or "?",
            merged_by=_login(d.get("merged_by")),
            url=link(d.get("html_url")),
        )
    except ShapeError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ShapeError(f"pull request without {exc}") from None


def _is_number(value: Any) -> bool:
    try:
        number(value, "number")
    except ShapeError:
        return False
    return True


def pick_pull(pulls: Sequence[dict[str, Any]], sha: str, branch: str) -> dict[str, Any] | None:
    """Of the pull requests GitHub associates with ``sha``, the one that brought it in.

    Preferred: the one whose merge commit *is* ``sha`` (squash, merge commit
    or the last of a rebase); then one merged into ``branch``; then any merged
    one; then the first.
    """
    candidates = [p for p in pulls if isinstance(p, dict) and _is_number(p.get("number"))]
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
