"""Modes, blob SHAs and sizes of paths at a revision, read through the git trees API.

``/commits/{sha}`` lists a commit's files but not their modes (executable,
symlink, submodule), nor the blob each file had *before* the commit (the
Python API facts parse both sides), nor the size of a binary file. The git
source knows all three, so for the reports to agree the GitHub source walks
``/git/trees/{sha}`` one directory at a time along each changed path.

Trees are addressed by SHA and never change, so each one is fetched once per
process (concurrent walkers wait for the same fetch instead of repeating it)
and then served from the ETag cache without a request. Consecutive commits
share most directories, so a day's walk costs about one tree per changed
directory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from repoherald.github.client import GitHubClient, GitHubError

MAX_TREES = 4096
"""Directory listings kept in memory (LRU); a listing is small, a day needs a few hundred."""


@dataclass(frozen=True, slots=True)
class TreeEntry:
    mode: str
    """Six digits as git writes them: ``100644``, ``100755``, ``120000``, ``160000``, ``040000``."""
    type: str
    sha: str
    size: int | None


Listing = dict[str, TreeEntry]


def _listing(data: Any) -> Listing:
    out: Listing = {}
    for e in data.get("tree") or () if isinstance(data, dict) else ():
        if not isinstance(e, dict) or "path" not in e or "sha" not in e:
            continue
        size = e.get("size")
        out[str(e["path"])] = TreeEntry(
            mode=str(e.get("mode", "")).rjust(6, "0"),
            type=str(e.get("type", "")),
            sha=str(e["sha"]),
            size=int(size) if isinstance(size, int) else None,
        )
    return out


class TreeReader:
    """Looks paths up in trees of one repository, sharing fetched listings between threads."""

    def __init__(self, client: GitHubClient, repo_path: str) -> None:
        self._client = client
        self._prefix = f"{repo_path}/git/trees/"
        self._lock = threading.Lock()
        self._trees: OrderedDict[str, Future[Listing]] = OrderedDict()

    def listing(self, tree: str) -> Listing:
        """One directory: name -> entry (fetched once; waiters share the fetch)."""
        with self._lock:
            fut = self._trees.get(tree)
            owner = fut is None
            if fut is None:
                fut = Future()
                self._trees[tree] = fut
                while len(self._trees) > MAX_TREES:
                    self._trees.popitem(last=False)
            else:
                self._trees.move_to_end(tree)
        if owner:
            try:
                fut.set_result(_listing(self._client.get(self._prefix + tree, immutable=True)))
            except BaseException as exc:
                with self._lock:
                    self._trees.pop(tree, None)
                fut.set_exception(exc)
                raise
        return fut.result()

    def entry(self, root: str, path: str) -> TreeEntry | None:
        """The entry of ``path`` in the tree ``root``, or None when it is not there."""
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
