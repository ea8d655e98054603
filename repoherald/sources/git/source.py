"""The git backend behind the :class:`~repoherald.sources.base.Source` protocol.

A local path is read in place (never fetched: it is the user's clone). A clone
URL is kept as a shallow bare mirror under the home directory: the mirror's
depth policy — walk, deepen when the window reaches the shallow boundary,
walk again — is applied here so the pipeline does not know mirrors exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import ClassVar

from repoherald.config.locations import is_clone_url
from repoherald.config.repos import RepoConfig
from repoherald.github.pulls import PullRequestLookup
from repoherald.models import Commit, CommitPatch, FileChange, PullRequest
from repoherald.sources.base import SourceContext, SourceInfo, SourceOptions
from repoherald.sources.git import mirror
from repoherald.sources.git.mirror import Remote
from repoherald.sources.git.naming import derive_name, identity_from_url
from repoherald.sources.git.repo import SAFE_CONFIG, GitRepo, check_branch_name, open_local, run_git
from repoherald.sources.unidiff import split_patch


def guess_name(cfg: RepoConfig) -> str:
    """A display name without opening the repository (for one that failed, and for file names).

    Same precedence as an opened source: for a local path the origin is read
    from its config when it can be, so the files are named like the heading.
    """
    if is_clone_url(cfg.source):
        return derive_name(cfg.name, cfg.source, None)
    if cfg.name:
        return cfg.name
    return derive_name(None, _remote_origin(_local_origin(cfg.source)), cfg.source)


def _local_origin(path: str) -> str | None:
    if path.startswith("-"):
        return None
    proc = run_git(["git", *SAFE_CONFIG, "-C", path, "config", "--get", "remote.origin.url"])
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").strip() or None


def _remote_origin(origin: str | None) -> str | None:
    """Only a clone URL names a project; an origin that is another local path does not."""
    return origin if origin and is_clone_url(origin) else None


class GitSource:
    """A local repository or a shallow mirror of a remote one."""

    def __init__(self, cfg: RepoConfig, ctx: SourceContext) -> None:
        self._cfg = cfg
        self._ctx = ctx
        if cfg.branch is not None:
            check_branch_name(cfg.branch)
        self._remote: Remote | None = None
        if is_clone_url(cfg.source):
            self._remote = mirror.parse_remote(cfg.source)
            self._repo = mirror.ensure_mirror(
                self._remote, ctx.mirrors_dir, cfg.branch, ctx.earliest
            )
            origin: str | None = self._remote.display
            identity = self._remote.display
        else:
            self._repo = open_local(cfg.source)
            origin = _remote_origin(self._repo.origin_url())
            identity = cfg.source
        try:
            branch = cfg.branch or self._repo.default_branch()
            self._tip = self._repo.resolve_branch(branch)
        except BaseException:
            self._repo.close()
            raise
        name = derive_name(cfg.name, origin, cfg.source)
        web_url = cfg.web_url or (identity_from_url(origin).web_url if origin else None)
        try:
            self._pulls = PullRequestLookup.for_git(
                cfg.github, web_url, ctx.github, ctx.etags, name
            )
        except BaseException:
            self._repo.close()
            raise
        self.info = SourceInfo(
            name=name,
            identity=identity,
            branch=branch,
            web_url=web_url,
            refreshed=self._remote is not None,
            pr_context=self._pulls is not None,
        )

    @property
    def repo(self) -> GitRepo:
        """The git directory read (the mirror, for a remote source)."""
        return self._repo

    def __enter__(self) -> GitSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _walk(self) -> list[tuple[str, int]]:
        return list(self._repo.first_parent(self._tip)) if self._tip else []

    def history(self) -> list[tuple[str, int]]:
        history = self._walk()
        if self._remote is None:
            return history
        earliest = self._ctx.earliest
        if mirror.window_reaches_boundary(history, self._repo.shallow_commits(), earliest):
            since = earliest - mirror.HISTORY_MARGIN
            mirror.deepen(self._repo, self._remote, self.info.branch, since=since)
            self._tip = self._repo.resolve_branch(self.info.branch)
            history = self._walk()
        return history

    def prepare(self, shas: Iterable[str]) -> None:
        if self._remote is not None and self._repo.shallow_commits() & set(shas):
            mirror.deepen(self._repo, self._remote, self.info.branch, by=1)

    def read_commits(self, shas: Iterable[str]) -> dict[str, Commit]:
        return self._repo.read_commits(shas)

    def missing_parents(self, shas: Iterable[str]) -> set[str]:
        shallow = self._repo.shallow_commits()
        return {sha for sha in shas if sha in shallow}

    def file_changes(self, commits: Iterable[Commit]) -> dict[str, list[FileChange]]:
        diffs = self._repo.diff_first_parent(commits)
        binary = [f.new_blob or f.old_blob for fs in diffs.values() for f in fs if f.binary]
        sizes = self._repo.blob_sizes(binary)
        return {
            sha: [
                replace(f, size=sizes.get(f.new_blob or f.old_blob)) if f.binary else f
                for f in files
            ]
            for sha, files in diffs.items()
        }

    def read_blob(self, oid: str, max_bytes: int) -> bytes | None:
        return self._repo.read_blob(oid, max_bytes)

    def patches(self, commit: Commit) -> CommitPatch:
        """git's diff of ``commit``, cut per file and paired with its file list."""
        text, cut = self._repo.patch(commit)
        files = self._repo.diff_first_parent([commit])[commit.sha]
        return CommitPatch(tuple(split_patch(text, files)), cut)

    def pull_requests_ahead(self, shas: Sequence[str]) -> None:
        """See :class:`~repoherald.sources.base.BatchedPullSource`."""
        if self._pulls is not None:
            self._pulls.ahead(shas, self.info.branch)

    def pull_request(self, sha: str) -> PullRequest | None:
        """Through the GitHub API when ``info.pr_context``; otherwise None."""
        if self._pulls is None:
            return None
        return self._pulls.pull_request(sha, self.info.branch)

    def list_files(self, sha: str) -> list[tuple[str, str]]:
        """Every blob of the commit's tree (``ls-tree -r``): see :class:`TreeSource`."""
        out = self._repo.run("ls-tree", "-r", "-z", "--full-tree", "--end-of-options", sha)
        files = []
        for entry in out.decode("utf-8", "surrogateescape").split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and parts[0] != "120000":
                files.append((path, parts[2]))
        return files

    def read_blobs(self, oids: Iterable[str], max_bytes: int) -> dict[str, bytes]:
        """One after another: ``cat-file --batch`` answers them on one pipe anyway."""
        blobs = {oid: self._repo.read_blob(oid, max_bytes) for oid in dict.fromkeys(oids)}
        return {oid: data for oid, data in blobs.items() if data is not None}

    def close(self) -> None:
        if self._pulls is not None:
            self._pulls.close()
        self._repo.close()


class GitBackend:
    """The ``git`` scheme, the default: local paths and clone URLs (entry point ``git``)."""

    scheme: ClassVar[str] = "git"
    Options: ClassVar[type[SourceOptions]] = SourceOptions

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def open(self, cfg: RepoConfig, ctx: SourceContext) -> GitSource:
        return GitSource(cfg, ctx)

    def guess_name(self, cfg: RepoConfig) -> str:
        return guess_name(cfg)
