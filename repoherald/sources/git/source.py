"""The git backend behind the :class:`~repoherald.sources.base.Source` protocol.

A local path is read in place (never fetched: it is the user's clone). A clone
URL is kept as a shallow bare mirror under the home directory: the mirror's
depth policy — walk, deepen when the window reaches the shallow boundary,
walk again — lives here so the pipeline does not know mirrors exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from repoherald.config import RepoConfig
from repoherald.models import Commit, FileChange
from repoherald.sources.base import SourceContext, SourceInfo
from repoherald.sources.git import repo as git

DAY = 86400


def guess_name(cfg: RepoConfig) -> str:
    """A display name from the configuration alone (the repository could not be opened)."""
    if git.is_remote(cfg.source):
        return git.identity_from_url(cfg.source).name
    base = Path(cfg.source).name
    return (base[:-4] if base.endswith(".git") else base) or cfg.source


class GitSource:
    """A local repository or a shallow mirror of a remote one."""

    def __init__(self, cfg: RepoConfig, ctx: SourceContext) -> None:
        self._cfg = cfg
        self._ctx = ctx
        self._remote = git.is_remote(cfg.source)
        if self._remote:
            self._repo = git.ensure_mirror(cfg.source, ctx.mirrors_dir, cfg.branch, ctx.earliest)
            ident = git.identity_from_url(cfg.source)
        else:
            self._repo = git.open_local(cfg.source)
            ident = self._local_identity()
        try:
            branch = cfg.branch or self._repo.default_branch()
            self._tip = self._repo.resolve_branch(branch)
        except BaseException:
            self._repo.close()
            raise
        self.info = SourceInfo(
            name=cfg.name or ident.name,
            identity=cfg.source,
            branch=branch,
            web_url=cfg.web_url or ident.web_url,
        )

    def _local_identity(self) -> git.RepoIdentity:
        origin = (
            self._repo.run("config", "--get", "remote.origin.url", check=False)
            .decode("utf-8", "replace")
            .strip()
        )
        if origin and git.is_remote(origin):
            return git.identity_from_url(origin)
        return git.RepoIdentity(name=guess_name(self._cfg), web_url=None)

    def __enter__(self) -> GitSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _walk(self) -> list[tuple[str, int]]:
        return list(self._repo.first_parent(self._tip)) if self._tip else []

    def history(self) -> list[tuple[str, int]]:
        history = self._walk()
        if not self._remote or not history:
            return history
        shallow = self._repo.shallow_commits()
        oldest_sha, oldest_ts = history[-1]
        earliest = self._ctx.earliest
        if oldest_sha in shallow and oldest_ts >= earliest - DAY:
            git.deepen(self._repo, self._cfg.source, self.info.branch, since=earliest - 2 * DAY)
            self._tip = self._repo.resolve_branch(self.info.branch)
            history = self._walk()
        return history

    def prepare(self, shas: Iterable[str]) -> None:
        if self._remote and self._repo.shallow_commits() & set(shas):
            git.deepen(self._repo, self._cfg.source, self.info.branch, by=1)

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

    def patch(self, commit: Commit) -> tuple[str, bool]:
        return self._repo.patch(commit)

    def close(self) -> None:
        self._repo.close()


def open_git(cfg: RepoConfig, ctx: SourceContext) -> GitSource:
    """Opener registered for the ``git`` scheme."""
    return GitSource(cfg, ctx)
