"""The references a commit's message makes to other commits: reverts, re-lands, fixes, follow-ups.

Pure text work, no I/O: the store keeps what is found here unresolved
(:mod:`repoherald.store.links`), and :mod:`repoherald.pipeline.related`
resolves it against the commits the store knows, across days. A reference
that names nothing the store knows links nothing; it is never an error.

Only what the author wrote plainly is read: git's own revert line, a
re-land title (``Reapply "…"``, ``Re-land …``, ``Add back …``,
``Revert "Revert "…""``), a ``Fixes:`` trailer or "fixes <sha>", and
"follow-up to/of <sha or #PR>". A commit is never said to fix another
because their words look alike.
"""

from __future__ import annotations

import re

from repoherald.models import Commit, Facts, Mention

_PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
_QUOTES = "\"'“”‘’`"
_DOUBLE_REVERT = re.compile(r'^\s*revert\s*["“]\s*revert\s*["“](?P<rest>.+)["”]\s*["”]', re.I)
_RELAND = re.compile(
    r"^\s*(?:\[\s*re-?land\s*\]|(?:re-?land(?:ed|ing)?|re-?appl(?:y|ied)"
    r"|(?:add(?:s|ed)?|bring(?:s)?)\s+back)(?![\w-]))\s*:?\s*(?P<rest>.+)$",
    re.I,
)
_SHA = r"(?P<sha>[0-9a-f]{7,40})\b"
_PR = r"(?:#|https?://[^\s/]+/[^\s/]+/[^\s/]+/pull/)(?P<pr>\d{1,7})\b"
_TARGET = rf"(?:commit\s+|pr\s+|pull\s+request\s+)?(?:{_SHA}|{_PR})"
_FIXES = re.compile(rf"(?<![\w-])fix(?:es|ed)?\s*:?\s+{_TARGET}", re.I)
_FOLLOWS = re.compile(rf"(?<![\w-])follow[- ]?ups?\s+(?:to|of|for|on)\s*:?\s*{_TARGET}", re.I)

KINDS = ("reverts", "relands", "fixes", "follows_up")
"""What a commit can do to another, in the order its links are shown."""
REVERSE = {
    "reverts": "reverted_by",
    "relands": "relanded_by",
    "fixes": "fixed_by",
    "follows_up": "followed_up_by",
}
"""The same link said from the other commit's side."""


def title_key(title: str) -> str:
    """A title as re-land references match it: no ``(#123)`` suffix, no outer quotes,
    whitespace collapsed, case folded."""
    text = _PR_SUFFIX.sub("", title.strip()).strip(_QUOTES)
    return " ".join(_PR_SUFFIX.sub("", text).strip(_QUOTES).split()).casefold()


def relanded_title(title: str) -> str | None:
    """The title a re-land says it brings back (as :func:`title_key`), or None."""
    double = _DOUBLE_REVERT.match(title)
    found = double or _RELAND.match(title)
    if found is None:
        return None
    key = title_key(_PR_SUFFIX.sub("", found["rest"].strip()))
    return key or None


def title_keys_for(key: str) -> tuple[str, ...]:
    """The title keys a re-land of ``key`` may mean: ``Add back X`` brings back an ``Add X``."""
    return (key, f"add {key}") if not key.startswith("add ") else (key,)


def mentions(commit: Commit, facts: Facts) -> tuple[Mention, ...]:
    """Every reference ``commit`` makes to another commit, in the order of :data:`KINDS`."""
    own_sha = commit.sha.lower()
    found: list[Mention] = []
    reverted = (facts.reverted_sha or "").lower()
    if len(reverted) >= 7 and not own_sha.startswith(reverted):
        found.append(Mention("reverts", "sha", reverted[:40]))
    relanded = relanded_title(commit.title)
    if relanded is not None:
        found.append(Mention("relands", "title", relanded))
    for kind, pattern in (("fixes", _FIXES), ("follows_up", _FOLLOWS)):
        for match in pattern.finditer(commit.message):
            sha, pr = match["sha"], match["pr"]
            if sha is not None and not own_sha.startswith(sha.lower()):
                found.append(Mention(kind, "sha", sha.lower()))
            elif pr is not None and int(pr) != facts.pr_number:
                found.append(Mention(kind, "pr", str(int(pr))))
    return tuple(dict.fromkeys(found))
