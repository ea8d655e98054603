"""The GitHub REST backend behind the :class:`~repoherald.sources.base.Source` protocol.

``source = "github:owner/name"`` reads a repository without cloning it:

* **History.** ``/commits?sha=TIP&since=…`` lists every commit reachable from
  the branch tip in the window, side branches included; the first-parent
  chain is rebuilt from the ``parents`` fields, starting at the tip that
  ``/branches/{branch}`` names, so the set is what the git source reports.
  ``until`` is not sent: a commit dated in the future would cut the chain.
* **Files.** ``/commits/{sha}`` (300 files a page, 3,000 at most, each page
  followed) gives paths, statuses, counts and patches; the trees API adds
  modes, the blob each file had before, and binary sizes
  (:mod:`repoherald.github.trees`). A merge is diffed against its first
  parent, as GitHub's commit page shows it. Patches GitHub withheld are
  marked on the file (``patch_withheld``), a list cut at 3,000 on the commit
  (``files_truncated``): nothing is dropped silently.
* **Blobs.** ``/git/blobs/{sha}``, fetched for the files the API and
  dependency facts read, one side of each: the other is rebuilt from the
  patch (:mod:`repoherald.github.hunks`), so an added or deleted file costs
  none. They are fetched concurrently with the files of the day; anything
  else the facts ask for is read on demand.
* **Pull requests.** A GraphQL query per 100 commits of a day; REST
  (``/commits/{sha}/pulls``, then ``/pulls/{n}``) for what it did not settle
  (:mod:`repoherald.github.pulls`).
* **Whole tree** (:class:`~repoherald.sources.base.TreeSource`, for the
  downstream check): ``/git/trees/{tree}?recursive=1``, walked further down
  when GitHub cuts the answer, so the list is always complete; the sizes it
  carries spare the requests for empty ``__init__.py`` files.

Everything a day needs is fetched with up to ``[github] concurrency``
requests in flight, through the client's ETag cache, and within
``[github] stage_timeout`` seconds in all (:meth:`GitHubSource.time_budget`;
the history listing has its own): past them the day fails, with one line.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from repoherald.analysis.facts.commit import file_kind
from repoherald.analysis.facts.opschema import is_native
from repoherald.config.repos import RepoConfig
from repoherald.errors import CommitError, SourceError
from repoherald.github import hunks, parse
from repoherald.github.client import GitHubClient
from repoherald.github.connect import open_client, read_token, warn_anonymous
from repoherald.github.errors import GitHubError
from repoherald.github.patch import file_patch
from repoherald.github.pulls import PullContext
from repoherald.github.ref import RepoRef
from repoherald.github.trees import TreeEntry, TreeReader
from repoherald.models import Commit, CommitPatch, FileChange, FileStatus, PullRequest
from repoherald.sources.base import SourceContext, SourceInfo, SourceOptions

DAY = 86400
SINCE_SLACK = 2 * DAY
"""``since`` reaches this far before the window: GitHub filters by committer date, and a
little slack keeps a chain whose dates are slightly out of order intact."""
FILES_LIMIT = 3000
"""GitHub lists at most this many files of one commit."""
PREFETCH_MAX_BYTES = 1_000_000
BLOB_CACHE_BYTES = 64 << 20
MEMO_COMMITS = 512
MAX_RECIPES = 8192
"""Blobs remembered as rebuildable from a patch (each holds its file's patch text)."""

T = TypeVar("T")


def guess_name(cfg: RepoConfig) -> str:
    """``github:owner/name`` -> ``owner/name`` (for a repository that could not be opened)."""
    return cfg.source.partition(":")[2].strip() or cfg.source


@dataclass(frozen=True, slots=True)
class _Detail:
    commit: Commit
    files: tuple[parse.ListedFile, ...]
    tree: str


class _Lru(OrderedDict[str, T]):
    """A small LRU map, so a month-long range does not keep every commit's files."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: str, value: T) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


def _facts_read(f: FileChange) -> bool:
    """Whether the facts extractor reads this file's blobs (Python API, manifest, or the
    operators a native file registers)."""
    if f.binary or f.is_submodule or f.is_symlink:
        return False
    kind = file_kind(f.path)
    python = f.path.endswith((".py", ".pyi")) and kind == "source"
    return python or kind == "deps" or (kind == "source" and is_native(f.path))


@dataclass(frozen=True, slots=True)
class _Side:
    """How a blob can be rebuilt: from ``other`` ("" for the empty side) and ``patch``."""

    other: str
    patch: str
    reverse: bool
    """True when the blob is the old side (the hunks are undone)."""


def _sides(f: FileChange, patch: str | None) -> dict[str, _Side]:
    """The rebuild recipes of ``f``'s blobs, by blob id (none without a patch)."""
    if not patch or f.binary or f.is_submodule or f.old_blob == f.new_blob:
        return {}
    out: dict[str, _Side] = {}
    if f.new_blob:
        out[f.new_blob] = _Side(f.old_blob, patch, reverse=False)
    if f.old_blob:
        out[f.old_blob] = _Side(f.new_blob, patch, reverse=True)
    return out


class GitHubSource:
    """One repository read through the GitHub REST API; open it with :func:`open_github`."""

    def __init__(
        self,
        ref: RepoRef,
        client: GitHubClient,
        ctx: SourceContext,
        info: SourceInfo,
        tip: dict[str, Any],
    ) -> None:
        self._ref = ref
        self._client = client
        self._ctx = ctx
        self.info = info
        self._tip_item = tip
        self._tip = str(tip["sha"])
        self._api = ref.api_path
        self._trees = TreeReader(client, self._api)
        self._pulls = PullContext(ref, ctx.github.api_url)
        # Twice the requests allowed in flight: a commit's tree walk is a chain of
        # requests, so more commits in progress keep every slot busy.
        self._pool = ThreadPoolExecutor(max_workers=2 * client.concurrency)
        self._items: dict[str, dict[str, Any]] = {}
        self._details: _Lru[_Detail] = _Lru(MEMO_COMMITS)
        self._changes: _Lru[list[FileChange]] = _Lru(MEMO_COMMITS)
        self._sizes: dict[str, int] = {}
        self._recipes: _Lru[_Side] = _Lru(MAX_RECIPES)
        self._blobs: _Lru[bytes] = _Lru(1 << 20)
        self._blob_bytes = 0
        self._fetching: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    @property
    def client(self) -> GitHubClient:
        """The HTTP client (its ``stats`` count requests, for tests and the benchmark)."""
        return self._client

    def __enter__(self) -> GitHubSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, fn: Callable[[str], T], keys: Iterable[str]) -> list[T]:
        """``fn`` over ``keys`` on the pool, in order; the first failure cancels what has not
        started (a used-up rate limit should not be hit again by every queued commit)."""
        futures = [self._pool.submit(fn, key) for key in keys]
        _, pending = wait(futures, return_when=FIRST_EXCEPTION)
        if pending:
            for f in pending:
                f.cancel()
            # Those already running end too (within the stage's budget): none goes on
            # fetching after the stage has stopped.
            wait(futures)
            errors = [f.exception() for f in futures if f.done() and not f.cancelled()]
            raise next(e for e in errors if e is not None)
        return [f.result() for f in futures]

    def time_budget(self, what: str) -> AbstractContextManager[None]:
        """Fetching inside the block (``what``: a repository-day) stops after
        ``[github] stage_timeout`` seconds with a :class:`~repoherald.errors.StageTimeoutError`."""
        return self._client.stage(what, self._ctx.github.stage_timeout)

    def _shape(self, what: str, exc: Exception) -> GitHubError:
        return GitHubError(
            f"{self._client.repo}: GitHub's answer for {what} has an unexpected shape ({exc}):"
            " check [github] api_url, or retry later"
        )

    def _bad_commit(self, sha: str, exc: Exception) -> CommitError:
        """A malformed answer about one commit: that commit fails, the others are reported."""
        return CommitError(
            f"{self._client.repo}: GitHub's answer for commit {sha[:7]} is malformed ({exc}):"
            " retry later, or report it to the server's operator",
            sha,
        )

    # -- history ---------------------------------------------------------------

    def _list(self, since: int) -> list[dict[str, Any]]:
        iso = datetime.fromtimestamp(max(since, 0), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        params = {"sha": self._tip, "since": iso, "per_page": "100"}
        items: list[dict[str, Any]] = []
        for page in self._client.pages(f"{self._api}/commits", params):
            if not isinstance(page, list):
                raise self._shape("the commit list", TypeError("not a list"))
            items.extend(i for i in page if isinstance(i, dict) and _has_id(i))
        return items

    def _chain(self) -> list[tuple[str, int]]:
        """The first-parent chain from the tip.

        A commit whose committer date is unusable (9999-12-31, not a date)
        stays in the chain, on the day of its newer neighbour: reading its
        details then fails for it alone, and the report names it.
        """
        chain: list[tuple[str, int | None]] = []
        seen: set[str] = set()
        sha: str | None = self._tip
        while sha is not None and sha in self._items and sha not in seen:
            seen.add(sha)
            item = self._items[sha]
            try:
                when: int | None = parse.committer_time(item)
            except parse.ShapeError:
                when = None
            chain.append((sha, when))
            parents = item.get("parents") or []
            sha = parse.git_id(parents[0]["sha"], "parent") if parents else None
        return _fill_times(chain)

    def history(self) -> list[tuple[str, int]]:
        with self.time_budget(f"the history of {self._client.repo}"):
            return self._history()

    def _history(self) -> list[tuple[str, int]]:
        try:
            listed = self._list(self._ctx.earliest - SINCE_SLACK)
            self._items.update((str(i["sha"]), i) for i in listed)
            chain = self._chain()
            if not chain:
                # The branch was idle all window: list the tip's own days instead,
                # so "latest" finds them.
                tip_time = _time_or_now(self._tip_item)
                self._items.update((str(i["sha"]), i) for i in self._list(tip_time - SINCE_SLACK))
                chain = self._chain()
        except (parse.ShapeError, KeyError, TypeError, IndexError) as exc:
            raise self._shape("the commit list", exc) from None
        return chain

    def prepare(self, shas: Iterable[str]) -> None:
        """Nothing to deepen: the API reaches every parent."""

    def missing_parents(self, shas: Iterable[str]) -> set[str]:
        return set()

    # -- commits and their files -----------------------------------------------

    def _detail(self, sha: str) -> _Detail:
        hit = self._details.get(sha)
        if hit is not None:
            return hit
        files: list[parse.ListedFile] = []
        first: dict[str, Any] | None = None
        try:
            pages = self._client.pages(f"{self._api}/commits/{sha}", max_pages=FILES_LIMIT // 300)
            for page in pages:
                if not isinstance(page, dict):
                    raise TypeError("not an object")
                first = first or page
                files.extend(parse.file_from_json(f) for f in page.get("files") or ())
            assert first is not None
            commit = parse.commit_from_json(first, files_truncated=len(files) >= FILES_LIMIT)
            if commit.sha != sha:
                raise parse.ShapeError(f"it names commit {commit.sha[:12]}")
            detail = _Detail(commit, tuple(files), parse.tree_sha(first))
        except (parse.ShapeError, KeyError, TypeError) as exc:
            raise self._bad_commit(sha, exc) from None
        with self._lock:
            self._details.put(sha, detail)
        return detail

    def read_commits(self, shas: Iterable[str]) -> dict[str, Commit]:
        """Each commit's metadata and file list, fetched concurrently."""
        wanted = list(dict.fromkeys(shas))
        return {d.commit.sha: d.commit for d in self._map(self._detail, wanted)}

    def _tree_of(self, sha: str) -> str:
        item = self._items.get(sha)
        if item is not None:
            return parse.tree_sha(item)
        hit = self._details.get(sha)
        if hit is not None:
            return hit.tree
        data = self._client.get(f"{self._api}/git/commits/{sha}", immutable=True)
        return parse.tree_sha(data if isinstance(data, dict) else {})

    def _resolve(self, sha: str) -> list[FileChange]:
        hit = self._changes.get(sha)
        if hit is not None:
            return hit
        detail = self._detail(sha)
        parents = detail.commit.parents
        try:
            old_root = self._tree_of(parents[0]) if parents else None
        except parse.ShapeError as exc:
            raise self._bad_commit(sha, parse.ShapeError(f"its parent: {exc}")) from None
        changes = [self._file(f, detail.tree, old_root) for f in detail.files]
        with self._lock:
            self._changes.put(sha, changes)
            for change, listed in zip(changes, detail.files, strict=True):
                self._recipes.update(_sides(change, listed.patch))
        return changes

    def _file(self, f: parse.ListedFile, new_root: str, old_root: str | None) -> FileChange:
        new: TreeEntry | None = None
        old: TreeEntry | None = None
        if f.status is not FileStatus.DELETED:
            new = self._trees.entry(new_root, f.path)
        if f.status is not FileStatus.ADDED and old_root is not None:
            old = self._trees.entry(old_root, f.old_path or f.path)
        with self._lock:
            for e in (new, old):
                if e is not None and e.size is not None:
                    self._sizes[e.sha] = e.size
        new_blob, old_blob = (new.sha if new else ""), (old.sha if old else "")
        modes = (old.mode if old else "", new.mode if new else "")
        special = "160000" in modes
        size = (new.size if new else None) if new_blob else (old.size if old else None)
        binary = (
            f.patch is None
            and f.added == 0
            and f.deleted == 0
            and not special
            and new_blob != old_blob
            and bool(size)
        )
        return FileChange(
            path=f.path,
            status=f.status,
            old_path=f.old_path,
            added=f.added,
            deleted=f.deleted,
            binary=binary,
            old_mode=modes[0],
            new_mode=modes[1],
            old_blob=old_blob,
            new_blob=new_blob,
            size=size if binary else None,
            patch_withheld=f.patch is None and not binary and (f.added + f.deleted) > 0,
        )

    def file_changes(self, commits: Iterable[Commit]) -> dict[str, list[FileChange]]:
        """Each commit's files with modes and blobs, and the blobs the facts will read.

        Commits are worked on concurrently, each from its trees to its blobs,
        so no commit waits for the slowest of another stage.
        """
        shas = [c.sha for c in commits]
        return dict(zip(shas, self._map(self._changes_and_blobs, shas), strict=True))

    def _changes_and_blobs(self, sha: str) -> list[FileChange]:
        changes = self._resolve(sha)
        for f in changes:
            if _facts_read(f):
                try:
                    self._both_sides(f)
                except _BadBlob as exc:
                    raise self._bad_commit(sha, exc) from None
        return changes

    def _both_sides(self, f: FileChange) -> None:
        """Both blobs of ``f`` into the cache, with as few requests as its patch allows:
        one side is fetched (none when the other is empty), the other rebuilt."""
        wanted = [
            o for o in (f.old_blob, f.new_blob) if o and self._sizes.get(o, 0) <= PREFETCH_MAX_BYTES
        ]
        with self._lock:
            wanted.sort(key=lambda o: o not in self._blobs)  # one at hand: rebuild from it
        for oid in wanted:
            self._prefetch(oid)

    # -- the whole tree ----------------------------------------------------------

    def list_files(self, sha: str) -> list[tuple[str, str]]:
        """Every regular file of the commit's tree, as ``git ls-tree -r`` lists them.

        Symlinks and submodules are left out, like the git source does; the
        order is git's (byte order of the full paths).
        """
        try:
            root = self._tree_of(sha)
        except parse.ShapeError as exc:
            raise self._shape(f"commit {sha[:7]}", exc) from None
        files: list[tuple[str, str]] = []
        with_sizes = [
            (path, e) for path, e in self._trees.files(root, self._map) if e.type == "blob"
        ]
        with self._lock:
            for path, e in with_sizes:
                if e.size is not None:
                    self._sizes[e.sha] = e.size
                if e.mode != "120000":
                    files.append((path, e.sha))
        files.sort(key=lambda f: f[0].encode("utf-8", "surrogateescape"))
        return files

    # -- blobs -------------------------------------------------------------------

    def _fetch_blob(self, oid: str) -> bytes | None:
        try:
            data = self._client.get(f"{self._api}/git/blobs/{oid}", cache=False)
        except GitHubError as exc:
            if exc.status in (404, 422):
                return None
            raise
        try:
            content = str(data.get("content") or "")
            if data.get("encoding") == "base64":
                return base64.b64decode(content)
            return content.encode("utf-8")
        except (AttributeError, binascii.Error, ValueError) as exc:
            raise _BadBlob(
                f"{self._client.repo}: GitHub's blob {oid[:7]} is malformed ({exc})", oid
            ) from None

    def _rebuilt(self, oid: str) -> bytes | None:
        """``oid`` rebuilt from its other side and the patch, when that side is at hand."""
        with self._lock:
            side = self._recipes.get(oid)
            base = None if side is None else (self._blobs.get(side.other) if side.other else b"")
        if side is None or base is None:
            return None
        return hunks.rebuilt(base, side.patch, oid, reverse=side.reverse)

    def _prefetch(self, oid: str) -> None:
        """Fetch into the blob cache, once even when two commits want the same blob;
        rebuilt from the patch instead when it can be (:mod:`repoherald.github.hunks`)."""
        with self._lock:
            if oid in self._blobs:
                return
            busy = self._fetching.get(oid)
            owner = busy is None
            if busy is None:
                busy = self._fetching[oid] = threading.Event()
        if not owner:
            # Another commit is fetching it: wait (its request has a deadline), so the
            # side rebuilt from this one finds it instead of asking GitHub again.
            busy.wait()
            return
        blob: bytes | None = None
        try:
            blob = self._rebuilt(oid)
            if blob is None:
                blob = self._fetch_blob(oid)
        finally:
            with self._lock:
                if blob is not None:
                    self._keep(oid, blob)
                del self._fetching[oid]
            busy.set()

    def _keep(self, oid: str, blob: bytes) -> None:
        """Into the blob cache (the caller holds the lock)."""
        self._blobs.put(oid, blob)
        self._blob_bytes += len(blob)
        while self._blob_bytes > BLOB_CACHE_BYTES and self._blobs:
            self._blob_bytes -= len(self._blobs.popitem(last=False)[1])

    def read_blob(self, oid: str, max_bytes: int) -> bytes | None:
        if not oid or self._sizes.get(oid, 0) > max_bytes:
            return None
        if self._sizes.get(oid) == 0:
            return b""  # an empty file (most __init__.py): nothing to ask GitHub for
        with self._lock:
            blob = self._blobs.get(oid)
        if blob is None:
            blob = self._rebuilt(oid)
        if blob is None:
            blob = self._fetch_blob(oid)
        return blob if blob is not None and len(blob) <= max_bytes else None

    def read_blobs(self, oids: Iterable[str], max_bytes: int) -> dict[str, bytes]:
        """Fetched concurrently: the downstream check reads every package ``__init__.py``."""
        wanted = list(dict.fromkeys(oids))
        blobs = self._map(lambda oid: self.read_blob(oid, max_bytes), wanted)
        return {oid: data for oid, data in zip(wanted, blobs, strict=True) if data is not None}

    # -- patch and pull request ------------------------------------------------

    def patches(self, commit: Commit) -> CommitPatch:
        """GitHub's per-file patches, each with its file; cut when the file list was."""
        changes = self._resolve(commit.sha)
        detail = self._detail(commit.sha)
        files = tuple(file_patch(c, f.patch) for c, f in zip(changes, detail.files, strict=True))
        return CommitPatch(files, detail.commit.files_truncated)

    def pull_requests_ahead(self, shas: Sequence[str]) -> None:
        """See :class:`~repoherald.sources.base.BatchedPullSource`."""
        self._pulls.ahead(self._client, shas, self.info.branch)

    def pull_request(self, sha: str) -> PullRequest | None:
        """The pull request that brought ``sha`` in (raises SourceError when GitHub fails)."""
        return self._pulls.one(self._client, sha, self.info.branch)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()


class _BadBlob(CommitError):
    """A blob's answer cannot be decoded: the commit that reads it fails, not the day
    (``sha`` is the blob's; the commit's is added where it is known)."""


def _has_id(item: dict[str, Any]) -> bool:
    """A listed commit with a real SHA (one with ``<`` or ``)`` in it is left out)."""
    try:
        parse.git_id(item.get("sha"))
    except parse.ShapeError:
        return False
    return True


def _time_or_now(item: dict[str, Any]) -> int:
    try:
        return parse.committer_time(item)
    except parse.ShapeError:
        return int(datetime.now(UTC).timestamp())


def _fill_times(chain: list[tuple[str, int | None]]) -> list[tuple[str, int]]:
    """Give a commit without a usable time its newer neighbour's (the tip: its older one's)."""
    out: list[tuple[str, int]] = []
    known = [ts for _, ts in chain if ts is not None]
    last = known[0] if known else int(datetime.now(UTC).timestamp())
    for sha, ts in chain:
        last = ts if ts is not None else last
        out.append((sha, last))
    return out


def _branch_path(branch: str, label: str) -> str:
    if not branch or ".." in branch or branch.startswith("/") or any(ord(c) < 33 for c in branch):
        raise SourceError(f"{label}: {branch!r} is not a valid branch name: check `branch`")
    return quote(branch, safe="/")


def _tip(client: GitHubClient, ref: RepoRef, branch: str, label: str) -> dict[str, Any]:
    """The branch head's commit; a 404 is told apart as an empty repository or a wrong branch."""
    try:
        data = client.get(f"{ref.api_path}/branches/{_branch_path(branch, label)}")
        tip = data["commit"]
        parse.git_id(tip["sha"])
        return dict(tip)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        client.get(f"{ref.api_path}/commits", {"per_page": "1"})  # 409 here: empty repository
        raise GitHubError(
            f"{label}: branch {branch!r} does not exist on GitHub: check `branch` in [[repos]]"
            " (default: the repository's default branch)",
            404,
        ) from None
    except (KeyError, TypeError, parse.ShapeError) as exc:
        raise GitHubError(
            f"{label}: GitHub's answer for branch {branch!r} has an unexpected shape ({exc}):"
            " check [github] api_url"
        ) from None


def open_github(
    cfg: RepoConfig, ctx: SourceContext, *, transport: httpx.BaseTransport | None = None
) -> GitHubSource:
    """Open ``github:owner/name``: checks settings, finds the branch tip.

    ``transport`` replaces the network (tests); :class:`GitHubBackend` calls it without.
    """
    text = guess_name(cfg)
    label = cfg.name or text
    ref = RepoRef.parse(text, label)
    token = read_token(ctx.github, label, required=True)
    client = open_client(ctx.github, label, ctx.etags, token=token, transport=transport)
    if not token:
        warn_anonymous(ctx.github.token_env)
    try:
        repo = client.get(ref.api_path)
        if not isinstance(repo, dict):
            raise GitHubError(f"{label}: GitHub's answer for the repository is not an object")
        branch = cfg.branch or str(repo.get("default_branch") or "main")
        tip = _tip(client, ref, branch, label)
    except BaseException:
        client.close()
        raise
    host = urlsplit(ctx.github.api_url).hostname or ""
    info = SourceInfo(
        name=cfg.name or str(repo.get("full_name") or ref.full),
        # github:owner/name on github.com; the host is kept for any other API.
        identity=f"github:{ref.full}" if host == "api.github.com" else f"github:{host}/{ref.full}",
        branch=branch,
        web_url=cfg.web_url or parse.link(repo.get("html_url")) or None,
        pr_context=True,
    )
    return GitHubSource(ref, client, ctx, info, tip)


class GitHubBackend:
    """The ``github`` scheme: ``github:owner/name`` read through the REST API (entry point
    ``github``)."""

    scheme: ClassVar[str] = "github"
    Options: ClassVar[type[SourceOptions]] = SourceOptions

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def open(self, cfg: RepoConfig, ctx: SourceContext) -> GitHubSource:
        return open_github(cfg, ctx)

    def guess_name(self, cfg: RepoConfig) -> str:
        return guess_name(cfg)
