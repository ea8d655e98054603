"""Pull-request context for a commit, for either source.

A day's commits are asked for at once through GraphQL, up to 100 a query
(:mod:`repoherald.github.pullbatch`, :meth:`PullContext.ahead`). What that
does not settle — no token (GitHub serves GraphQL to tokens only), a refused
query, an answer with errors or a malformed entry — is asked through REST,
one commit at a time: ``/commits/{sha}/pulls`` names the pull requests GitHub
associates with a commit, but its elements lack ``merged_by``; the chosen one
is then read in full from ``/pulls/{number}``. Both answers are conditional
requests, so a re-run costs two ``304``s per commit.

A git source gets pull-request context when it can name its GitHub
repository (``github = "owner/name"``, or a ``web_url`` on github.com or on
the host of a GitHub Enterprise ``api_url``) *and* a token is set; without a
token it says so instead of spending the anonymous limit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from repoherald.config.endpoints import GitHubSettings
from repoherald.errors import CommitError, SourceError
from repoherald.github.client import GitHubClient
from repoherald.github.connect import open_client, parse_api_url
from repoherald.github.errors import GitHubError
from repoherald.github.parse import ShapeError, number, pick_pull, pull_from_json
from repoherald.github.pullbatch import BATCH, fetch_batch
from repoherald.github.ref import RepoRef, repo_from_web_url
from repoherald.models import PullRequest
from repoherald.redact import secret_env
from repoherald.store.base import EtagCache

log = logging.getLogger("repoherald.github")


def fetch_pull_request(
    client: GitHubClient, repo: RepoRef, sha: str, branch: str
) -> PullRequest | None:
    """The pull request that brought ``sha`` into ``branch``, or None when there is none."""
    try:
        pulls = client.get(f"{repo.api_path}/commits/{sha}/pulls", {"per_page": "100"})
    except GitHubError as exc:
        if exc.status in (404, 422):  # commit unknown to GitHub (not pushed, or gone)
            return None
        raise
    chosen = pick_pull(pulls if isinstance(pulls, list) else [], sha, branch)
    if chosen is None:
        return None
    try:
        full: Any = client.get(f"{repo.api_path}/pulls/{number(chosen['number'], 'number')}")
        return pull_from_json(full if isinstance(full, dict) else chosen)
    except ShapeError as exc:
        raise CommitError(
            f"{client.repo}: GitHub's pull request for {sha[:7]} is malformed ({exc}): retry later",
            sha,
        ) from None


class PullContext:
    """The pull requests of one repository's commits: batched through GraphQL ahead of
    time, REST per commit for whatever the batch did not settle."""

    def __init__(self, ref: RepoRef, api_url: str) -> None:
        self._ref = ref
        self._api_url = api_url
        self._known: dict[str, PullRequest | None] = {}
        self._lock = threading.Lock()

    def ahead(self, client: GitHubClient, shas: Sequence[str], branch: str) -> None:
        """Settle ``shas`` in GraphQL queries of :data:`~repoherald.github.pullbatch.BATCH`.

        Without a token nothing is asked (GraphQL needs one). A refused query
        stops the batching: the commits left go through REST, with one log line.
        """
        if client.anonymous:
            return
        with self._lock:
            todo = [sha for sha in dict.fromkeys(shas) if sha not in self._known]
        for start in range(0, len(todo), BATCH):
            try:
                found = fetch_batch(
                    client, self._api_url, self._ref, todo[start : start + BATCH], branch
                )
            except (GitHubError, ShapeError) as exc:
                log.info(
                    "%s: GitHub's GraphQL API did not answer for pull requests (%s);"
                    " asking the REST API commit by commit",
                    client.repo,
                    exc,
                )
                return
            with self._lock:
                self._known.update(found)

    def one(self, client: GitHubClient, sha: str, branch: str) -> PullRequest | None:
        """The pull request of ``sha``: settled ahead, or asked through REST now."""
        with self._lock:
            if sha in self._known:
                return self._known[sha]
        return fetch_pull_request(client, self._ref, sha, branch)


class PullRequestLookup:
    """Pull-request context for a source that is not the GitHub API itself (a git clone).

    :meth:`for_git` decides whether there is any: a GitHub repository the
    configuration names, and a token. The HTTP client is opened on the first
    lookup, so a run that never asks costs nothing.
    """

    def __init__(
        self,
        ref: RepoRef,
        settings: GitHubSettings,
        etags: EtagCache | None,
        token: str,
        label: str,
    ) -> None:
        self._ref = ref
        self._settings = settings
        self._etags = etags
        self._token = token
        self._label = label
        self._client: GitHubClient | None = None
        self._context = PullContext(ref, settings.api_url)
        self._lock = threading.Lock()

    @classmethod
    def for_git(
        cls,
        github: str | None,
        web_url: str | None,
        settings: GitHubSettings,
        etags: EtagCache | None,
        label: str,
    ) -> PullRequestLookup | None:
        """A lookup when ``github = "owner/name"`` or a GitHub ``web_url`` and a token exist."""
        ref = RepoRef.parse(github, label) if github else repo_from_web_url(web_url, settings)
        if ref is None:
            return None
        token = secret_env(settings.token_env)
        if not token:
            return None
        try:
            parse_api_url(settings.api_url, label)
        except SourceError:
            return None
        return cls(ref, settings, etags, token, label)

    def _open(self) -> GitHubClient:
        with self._lock:
            if self._client is None:
                self._client = open_client(
                    self._settings, self._label, self._etags, token=self._token
                )
            return self._client

    def ahead(self, shas: Sequence[str], branch: str) -> None:
        """Ask for these commits' pull requests at once (see :meth:`PullContext.ahead`)."""
        self._context.ahead(self._open(), shas, branch)

    def pull_request(self, sha: str, branch: str) -> PullRequest | None:
        return self._context.one(self._open(), sha, branch)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
