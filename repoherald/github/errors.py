"""How a GitHub request failed: the exception, and GitHub's own words for it."""

from __future__ import annotations

import httpx

from repoherald.errors import SourceError
from repoherald.httppolicy import loads


class GitHubError(SourceError):
    """A request failed for good; ``status`` is the HTTP status when there was one.

    ``detail`` is GitHub's own short ``message`` (empty when there was none), so a
    caller that words its own error (a publisher) can still quote GitHub.
    """

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class AmbiguousWriteError(GitHubError):
    """A write that creates something got an answer that does not say whether it did.

    A 5xx, or a connection that broke after the request went out: GitHub may
    have opened the issue anyway. Such a write is not retried blind; the
    caller looks for what it meant to create first.
    """


def github_message(response: httpx.Response) -> str:
    """GitHub's own ``message`` from an error body, short and on one line."""
    try:
        body = loads(response.content)
    except ValueError:
        return response.reason_phrase or "no message"
    text = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(text or response.reason_phrase).split())[:200]
