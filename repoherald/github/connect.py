"""Opening a :class:`~repoherald.github.client.GitHubClient` from ``[github]`` settings.

The checks that belong to a repository rather than to the configuration file
live here: an API URL that is not http(s), a token variable that was named
but is not set. They raise :class:`~repoherald.errors.SourceError` naming the
repository, so one bad setting costs the GitHub repositories their reports,
not the whole run. Anonymous access is allowed, with one warning per process.
"""

from __future__ import annotations

import logging
import re
import threading

import httpx

from repoherald._version import __version__
from repoherald.config.endpoints import GitHubSettings
from repoherald.errors import SourceError
from repoherald.github.client import GitHubClient
from repoherald.httppolicy import GITHUB, Limits, new_client
from repoherald.redact import secret_env
from repoherald.store.base import EtagCache
from repoherald.store.etags import MemoryEtags

log = logging.getLogger("repoherald.github")

_API_URL = re.compile(r"https?://[^\s/?#@]+(?:/[^\s?#@]*)?")
_warned_anonymous = False
_warn_lock = threading.Lock()


def parse_api_url(api_url: str, repo: str) -> str:
    """``api_url`` without a trailing slash; a SourceError naming ``repo`` unless http(s)."""
    if not _API_URL.fullmatch(api_url):
        raise SourceError(
            f"{repo}: [github] api_url {api_url!r} is not an http(s) URL: use"
            " https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise"
        )
    return api_url.rstrip("/")


def read_token(settings: GitHubSettings, repo: str, *, required: bool) -> str | None:
    """The token from the variable ``settings.token_env`` names (registered for redaction).

    A variable that was configured by name but is not set is an error for
    ``github:`` sources; the default ``GITHUB_TOKEN`` unset means anonymous.
    """
    token = secret_env(settings.token_env)
    if token or not required:
        return token or None
    if settings.token_env_explicit:
        raise SourceError(
            f"{repo}: environment variable {settings.token_env} ([github] token_env) is not set:"
            " export it with a GitHub token, or remove token_env for anonymous access"
        )
    return None


def warn_anonymous(token_env: str) -> None:
    """Say once per process that anonymous access allows 60 requests an hour."""
    global _warned_anonymous
    with _warn_lock:
        if _warned_anonymous:
            return
        _warned_anonymous = True
    log.warning(
        "GitHub API without a token (%s is not set): 60 requests/hour, enough for a few"
        " commits; export %s with a token for 5,000/hour",
        token_env,
        token_env,
    )


def open_client(
    settings: GitHubSettings,
    repo: str,
    etags: EtagCache | None,
    *,
    token: str | None,
    transport: httpx.BaseTransport | None = None,
    limits: Limits = GITHUB,
) -> GitHubClient:
    """A client for ``repo`` keeping ETags in ``etags`` (the run's store; None: in memory).

    Network-free until the first call.

    Requests follow :mod:`repoherald.httppolicy` (``limits``: deadline, body size,
    redirects, capped waits).
    """
    api = parse_api_url(settings.api_url, repo)
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": f"repoherald/{__version__}",
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    http = new_client(
        limits,
        base_url=api,
        headers=headers,
        limits=httpx.Limits(
            max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency
        ),
        transport=transport,
    )
    return GitHubClient(
        http,
        repo=repo,
        token_env=settings.token_env,
        anonymous=not token,
        cache=etags if etags is not None else MemoryEtags(),
        concurrency=settings.concurrency,
        max_wait_seconds=settings.max_wait_seconds,
        backoff=settings.retry_backoff,
        secondary_wait=settings.secondary_wait,
        limits=limits,
    )
