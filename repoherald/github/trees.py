"""Modes, blob SHAs and sizes of paths at a revision, read through the git trees API.

``/commits/{sha}`` lists a commit's files but not their modes (executable,
symlink, submodule), nor the blob each file had *before* the commit (the
Python API facts parse both sides), nor the size of a binary file. The git
source knows all three, so for the reports to agree the GitHub source looks
the changed paths up in the root tree of each side, read whole with one
``?recursive=1`` request (:meth:`TreeReader.entry`). A commit's parent tree
is the previous commit's own, so a day costs about one tree per commit
(a walk along each changed path cost one request per changed directory,
about 15 a commit on a real day). When GitHub cuts the recursive answer
(``truncated``), the lookup walks ``/git/trees/{sha}`` one directory at a
time along the path instead.

Trees are addressed by SHA and never change, so each one is fetched once per
process (concurrent readers wait for the same fetch instead of repeating it)
and then served from the ETag cache without a request (a whole root larger
than :data:`KEEP_WHOLE_BYTES` from memory only, for the run).

A whole tree (:meth:`TreeReader.files`, for the downstream check) is one
``?recursive=1`` request. GitHub cuts that answer past 100,000 entries or
7 MB and says ``truncated``; a cut answer cannot tell which directories it
finished, so the walk then lists that directory alone and asks again,
recursively, for each subdirectory, until every answer is whole. The list
is therefore always complete: a silently partial one would make the
upstream's packages or re-exports look removed. It costs one request per
directory on the way down to subtrees small enough to come whole.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from repoherald.github.client import GitHubClient
from repoherald.github.errors import GitHubError
from repoherald.github.parse import ShapeError, git_id

MAX_TREES = 4096
"""Directory listings kept in memory (LRU); a listing is small, a day needs a few hundred."""
MAX_WHOLE_ENTRIES = 1_000_000
"""Entries of whole root trees kept in memory (LRU by tree): the commits in progress need
two roots each, and a big repository's root holds 100,000 entries."""
KEEP_WHOLE_BYTES = 1 << 20
"""A whole root tree up to this size (some 7,000 entries) is kept in the store's ETag
cache like any answer; a big repository's (~10 MB, one a commit, kept a month) only for
the run, or the store would grow by gigabytes."""
MAX_SIZE = 1 << 40
"""A blob size above this (or below 0) is not believed: the size is then unknown."""


@dataclass(frozen=True, slots=True)
class TreeEntry:
    mode: str
    """Six digits as git writes them: ``100644``, ``100755``, ``120000``, ``160000``, ``040000``."""
    type: str
    sha: str
    size: int | None


Listing = dict[str, TreeEntry]
Walked = tuple[list[tuple[str, TreeEntry]], bool]
"""Entries by path relative to the tree, and True when they are all of them (not cut)."""

T = TypeVar("T")


class Mapper(Protocol):
    """Runs ``fn`` over ``keys`` (concurrently, in the source's pool) and returns the results."""

    def __call__(self, fn: Callable[[str], T], keys: Iterable[str], /) -> list[T]: ...


def _entry(e: dict[str, Any]) -> TreeEntry:
    size = e.get("size")
    return TreeEntry(
        mode=str(e.get("mode", "")).rjust(6, "0"),
        type=str(e.get("type", "")),
        sha=str(e["sha"]),
        size=size if isinstance(size, int) and 0 <= size <= MAX_SIZE else None,
    )


def _usable(e: Any) -> bool:
    """An entry with a path and a real object id; any other is left out (its id would
    become part of a request path)."""
    return isinstance(e, dict) and "path" in e and _is_id(e.get("sha"))


def _is_id(value: Any) -> bool:
    try:
        git_id(value)
    except ShapeError:
        return False
    return True


def _listing(data: Any) -> Listing:
    out: Listing = {}
    for e in data.get("tree") or () if isinstance(data, dict) else ():
        if _usable(e):
            out[str(e["path"])] = _entry(e)
    return out


def _shared(
    lock: threading.Lock,
    memo: OrderedDict[str, Future[T]],
    key: str,
    fetch: Callable[[], T],
    over: Callable[[], bool],
) -> T:
    """``fetch()`` once per ``key`` however many threads ask; LRU, trimmed while ``over()``."""
    with lock:
        fut = memo.get(key)
        owner = fut is None
        if fut is None:
            fut = Future()
            memo[key] = fut
            while over():
                memo.popitem(last=False)
        else:
            memo.move_to_end(key)
    if owner:
        try:
            fut.set_result(fetch())
        except BaseException as exc:
            with lock:
                memo.pop(key, None)
            fut.set_exception(exc)
            raise
    return fut.result()


class TreeReader:
    """Looks paths up in trees of one repository, sharing fetched listings between threads."""

    def __init__(self, client: GitHubClient, repo_path: str) -> None:
        self._client = client
        self._prefix = f"{repo_path}/git/trees/"
        self._lock = threading.Lock()
        self._trees: OrderedDict[str, Future[Listing]] = OrderedDict()
        self._roots: OrderedDict[str, Future[Listing | None]] = OrderedDict()

    def listing(self, tree: str) -> Listing:
        """One directory: name -> entry (fetched once; waiters share the fetch)."""
        return _shared(
            self._lock,
            self._trees,
            tree,
            lambda: _listing(self._client.get(self._prefix + tree, immutable=True)),
            lambda: len(self._trees) > MAX_TREES,
        )

    def whole(self, root: str) -> Listing | None:
        """Every entry below ``root`` by full path, or None when GitHub cut the answer."""

        def fetch() -> Listing | None:
            data = self._client.get(
                self._prefix + root,
                {"recursive": "1"},
                immutable=True,
                keep_max_bytes=KEEP_WHOLE_BYTES,
            )
            if not isinstance(data, dict) or data.get("truncated") is not False:
                return None  # cut, or not the shape of a whole answer: walk instead
            return _listing(data)

        def over() -> bool:
            done = (f.result() for f in self._roots.values() if f.done() and not f.exception())
            return len(self._roots) > 1 and sum(len(x or ()) for x in done) > MAX_WHOLE_ENTRIES

        return _shared(self._lock, self._roots, root, fetch, over)

    def entry(self, root: str, path: str) -> TreeEntry | None:
        """The entry of ``path`` in the tree ``root``, or None when it is not there."""
        try:
            whole = self.whole(root)
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        if whole is not None:
            return whole.get(path)
        return self._walk(root, path)

    def _walk(self, root: str, path: str) -> TreeEntry | None:
        """``path`` looked up one directory at a time (a root too big to come whole)."""
        parts = path.split("/")
        tree = root
        for i, name in enumerate(parts):
            try:
                found = self.listing(tree).get(name)
            except GitHubError as exc:
                if exc.status == 404:
                    return None
                raise
            if found is None:
                return None
            if i == len(parts) - 1:
                return found
            if found.type != "tree":
                return None
            tree = found.sha
        return None

    def _whole(self, tree: str) -> Walked:
        """Everything below ``tree`` in one request; when GitHub cut it, the directory alone."""
        data = self._client.get(self._prefix + tree, {"recursive": "1"}, immutable=True)
        if not isinstance(data, dict) or not isinstance(data.get("tree"), list):
            raise GitHubError(
                f"{self._client.repo}: GitHub's answer for tree {tree[:7]} has no `tree` list:"
                " check [github] api_url"
            )
        if data.get("truncated"):
            return list(self.listing(tree).items()), False
        entries = [(str(e["path"]), _entry(e)) for e in data["tree"] if _usable(e)]
        return entries, True

    def files(self, root: str, run: Mapper) -> list[tuple[str, TreeEntry]]:
        """Every entry below ``root`` that is not a directory, by full path (unordered).

        Directories whose answer was cut are walked level by level, each
        level's requests through ``run`` at once; a subtree that occurs
        at several paths (identical directories) is fetched once.
        """
        out: list[tuple[str, TreeEntry]] = []
        frontier = [(root, "")]
        while frontier:
            shas = list(dict.fromkeys(sha for sha, _ in frontier))
            answers = dict(zip(shas, run(self._whole, shas), strict=True))
            deeper: list[tuple[str, str]] = []
            for sha, prefix in frontier:
                entries, whole = answers[sha]
                for path, e in entries:
                    if e.type != "tree":
                        out.append((prefix + path, e))
                    elif not whole:
                        deeper.append((e.sha, f"{prefix}{path}/"))
            frontier = deeper
        return out
