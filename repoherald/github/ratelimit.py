"""GitHub's rate limits for one client: read on every answer, waited out by every worker.

The primary limit (``X-RateLimit-Remaining``/``Reset``) is waited for when it
resets within ``max_wait``; otherwise the run stops with one line saying when
to resume. A secondary limit (403/429 with ``Retry-After`` or the "secondary
rate limit" message) pauses every worker of the client, a minute and longer
each time it happens again, as GitHub's documentation asks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

import httpx

from repoherald.github.errors import GitHubError, github_message
from repoherald.retry_after import retry_after_seconds

log = logging.getLogger("repoherald.github")

MAX_RATE_LIMIT_WAITS = 8


class RateLimits:
    """The rate-limit state of one client (``repo`` and the token's variable word its errors)."""

    def __init__(
        self,
        *,
        repo: str,
        token_env: str,
        anonymous: bool,
        max_wait_seconds: float,
        secondary_wait: float,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self.repo = repo
        self._token_env = token_env
        self.anonymous = anonymous
        self._max_wait = max_wait_seconds
        self._secondary_wait = secondary_wait
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._resume_at = 0.0
        self._secondary_hits = 0
        self.remaining: int | None = None
        self.reset: int | None = None

    def note(self, headers: httpx.Headers) -> None:
        """Remember what the last answer said is left of the primary limit."""
        remaining = headers.get("x-ratelimit-remaining")
        reset = headers.get("x-ratelimit-reset")
        with self._lock:
            if remaining is not None and remaining.isdigit():
                self.remaining = int(remaining)
            if reset is not None and reset.isdigit():
                self.reset = int(reset)

    def wait_after(self, response: httpx.Response) -> float | None:
        """Seconds to wait before retrying, None when this 403/429 is not a rate limit.

        GitHub's rules: honour ``Retry-After``; else, with no requests left,
        wait for ``X-RateLimit-Reset``; else, for a secondary limit, wait a
        minute, longer each time it happens again.
        """
        headers = response.headers
        retry_after = retry_after_seconds(headers.get("retry-after"))
        text = github_message(response).lower()
        if retry_after is not None:
            wait = retry_after
        elif headers.get("x-ratelimit-remaining") == "0":
            reset = int(headers.get("x-ratelimit-reset", "0") or 0)
            wait = max(0.0, reset - self._clock()) + 1.0
            if wait > self._max_wait:
                raise self._exhausted(headers, reset)
            return wait
        elif "secondary rate limit" in text or response.status_code == 429:
            with self._lock:
                self._secondary_hits += 1
                hits = self._secondary_hits
            wait = self._secondary_wait * 2 ** (hits - 1)
        else:
            return None
        if wait > self._max_wait:
            resume = _clock_text(self._clock() + wait)
            raise GitHubError(
                f"{self.repo}: GitHub's secondary rate limit asks to wait {wait:.0f} s, more"
                f" than [github] max_wait_seconds={self._max_wait:g}: re-run after {resume}"
                " (what was fetched is cached)",
                response.status_code,
            )
        return wait

    def _exhausted(self, headers: httpx.Headers, reset: int) -> GitHubError:
        limit = headers.get("x-ratelimit-limit", "?")
        hint = (
            f"; set {self._token_env} to a token for 5,000 requests/hour" if self.anonymous else ""
        )
        return GitHubError(
            f"{self.repo}: the GitHub API rate limit ({limit} requests/hour) is used up until"
            f" {_clock_text(reset)}, more than [github] max_wait_seconds={self._max_wait:g} away:"
            f" re-run after that; what was fetched is cached{hint}",
            403,
        )

    def pause(self, seconds: float) -> None:
        """Hold every worker of this client, not just the one that was told to wait."""
        with self._lock:
            self._resume_at = max(self._resume_at, self._clock() + seconds)
        log.info("%s: GitHub rate limit, waiting %.0f s", self.repo, seconds)

    def wait_for_pause(self) -> None:
        """Return once no pause is in force (at once when there is none)."""
        while True:
            with self._lock:
                left = self._resume_at - self._clock()
            if left <= 0:
                return
            self._sleep(left)


def _clock_text(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M UTC")
