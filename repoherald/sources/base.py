"""The ``Source`` protocol: where a repository's commits come from.

The pipeline reads every repository through this protocol and never names a
backend. A backend is one class (:class:`SourceBackend`: git, the GitHub
REST API) that names its scheme, brings an ``Options`` model and opens a
repository's configuration into a :class:`Source`. It is declared under the
``repoherald.sources`` entry-point group and found by
:mod:`repoherald.sources.registry`, the built-ins exactly as a third-party
backend (see :mod:`repoherald.plugins`).

What a source must answer is what the report needs: the first-parent chain
of the branch with committer times (so the pipeline can bucket commits into
days), each commit's metadata and file changes diffed against its first
parent, a blob's bytes (for the Python API facts), the per-file patches (for
the LLM), which commits have no readable parent (a shallow boundary), and the
pull request behind a commit when the source can know it (``info.pr_context``).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from repoherald.config.endpoints import GitHubSettings
from repoherald.config.repos import RepoConfig
from repoherald.models import Commit, CommitPatch, FileChange, PullRequest
from repoherald.store.base import EtagCache


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """How a repository is named, identified and linked in a report."""

    name: str
    """Display name, never empty (``owner/name`` when known)."""
    identity: str
    """A stable id of *what* is read (a clone URL without credentials, or a resolved path):
    two sources with the same display name but different identities are different."""
    branch: str
    web_url: str | None
    refreshed: bool = True
    """False when the repository is read as found on disk and never brought up to date
    (a local clone): days after its newest commit may be missing commits that exist upstream."""
    pr_context: bool = False
    """True when :meth:`Source.pull_request` can answer; False means the report ran
    without pull-request context (no GitHub repository known, or no token for a git source)."""


@dataclass(frozen=True, slots=True)
class SourceContext:
    """What an opener may use besides the repository's own configuration."""

    mirrors_dir: Path
    """Where backends that keep local copies (git mirrors) put them."""
    earliest: int
    """Seconds since the epoch: the history must reach back at least this far."""
    github: GitHubSettings = field(default_factory=GitHubSettings)
    """The GitHub API, for ``github:`` sources and pull-request context."""
    etags: EtagCache | None = None
    """Where HTTP backends keep ETags (the run's store); None keeps them in memory."""


@runtime_checkable
class Source(Protocol):
    """An open repository. Call :meth:`close` when done (or use it as a context manager)."""

    info: SourceInfo

    def history(self) -> list[tuple[str, int]]:
        """The branch's first-parent chain, newest first, as (sha, committer time).

        It reaches back at least to the context's ``earliest`` (or to the root).
        """
        ...

    def prepare(self, shas: Iterable[str]) -> None:
        """Make sure these commits' first parents can be read (e.g. deepen a shallow mirror)."""
        ...

    def read_commits(self, shas: Iterable[str]) -> dict[str, Commit]:
        """Metadata of these commits, keyed by SHA."""
        ...

    def missing_parents(self, shas: Iterable[str]) -> set[str]:
        """Those of ``shas`` that have a parent this source cannot read."""
        ...

    def file_changes(self, commits: Iterable[Commit]) -> dict[str, list[FileChange]]:
        """Each commit's files diffed against its first parent (binary files with sizes)."""
        ...

    def read_blob(self, oid: str, max_bytes: int) -> bytes | None:
        """A blob's bytes, or None when it is larger than ``max_bytes`` or absent."""
        ...

    def patches(self, commit: Commit) -> CommitPatch:
        """The commit's diff against its first parent, per file in the order of
        :meth:`file_changes` (a source with one unified text can cut it with
        :func:`repoherald.sources.unidiff.split_patch`)."""
        ...

    def pull_request(self, sha: str) -> PullRequest | None:
        """The pull request that brought ``sha`` in, or None (none, or no PR context)."""
        ...

    def close(self) -> None:
        """Release processes and files; the source is unusable afterwards."""
        ...


@runtime_checkable
class TreeSource(Protocol):
    """A source that can also list a commit's whole tree (optional).

    The downstream check uses it to find the upstream's import packages and
    the re-exports in its ``__init__.py`` files; a source without it still
    gets the check, with packages from the configuration or the name.
    """

    def list_files(self, sha: str) -> list[tuple[str, str]]:
        """``(path, blob id)`` of every regular file in the commit's tree, in path order."""
        ...

    def read_blobs(self, oids: Iterable[str], max_bytes: int) -> dict[str, bytes]:
        """Many blobs at once (an HTTP backend fetches them concurrently): those that are
        present and at most ``max_bytes`` long, by id."""
        ...


@runtime_checkable
class BatchedPullSource(Protocol):
    """A source that can ask for many commits' pull requests at once (optional).

    The pipeline calls :meth:`pull_requests_ahead` with a day's commits, then
    :meth:`Source.pull_request` for each: the GitHub API answers a hundred
    commits in one GraphQL query instead of two REST requests a commit.
    """

    def pull_requests_ahead(self, shas: Sequence[str]) -> None:
        """Fetch what it can for ``shas`` now; what it could not is asked per commit
        later. Raises only what would stop the day (its time budget used up)."""
        ...


@runtime_checkable
class BudgetedSource(Protocol):
    """A source whose fetching can be held to a time budget (optional: an HTTP backend).

    A local clone answers in bounded time; an API answers a day in hundreds of
    requests and waits, each bounded, their sum not.
    """

    def time_budget(self, what: str) -> AbstractContextManager[None]:
        """Inside the block, fetching for ``what`` (``owner/name 2026-04-01``) stops with
        a :class:`~repoherald.errors.StageTimeoutError` once the source's budget is used up."""
        ...


def fetch_budget(source: Source, what: str) -> AbstractContextManager[None]:
    """``source``'s time budget for fetching ``what``, or none for a source without one."""
    if isinstance(source, BudgetedSource):
        return source.time_budget(what)
    return nullcontext()


class SourceOptions(BaseModel):
    """Base of every source backend's options: frozen, and unknown keys are errors.

    The built-in backends take none (everything they need is in the
    repository's ``[[repos]]`` table and the ``[github]`` section); a
    backend subclasses it to say what it would accept, like a publisher's
    ``Options``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


@runtime_checkable
class SourceBackend(Protocol):
    """Opens the repositories of one scheme (``github`` for ``github:owner/name``).

    The class is what the ``repoherald.sources`` entry point names; the
    registry builds one instance from validated ``Options``. Nothing is read
    or fetched before :meth:`open`.
    """

    scheme: ClassVar[str]
    """The ``scheme:`` a ``source`` starts with; ``git`` is the default (paths, clone URLs)."""
    Options: ClassVar[builtins.type[SourceOptions]]

    def __init__(self, options: Any) -> None:
        """Take validated options; no network or file access here."""
        ...

    def open(self, cfg: RepoConfig, ctx: SourceContext) -> Source:
        """Open ``cfg``; raise :class:`~repoherald.errors.SourceError` with one line when it
        cannot be read."""
        ...

    def guess_name(self, cfg: RepoConfig) -> str:
        """A non-empty display name without opening ``cfg`` (for a repository that failed)."""
        ...
