"""GitHub's rate limits for one client: read on every answer, waited out by every worker.

The primary limit (``X-RateLimit-Remaining``/``Reset``) is waited for when it
resets within ``max_wait``; otherwise the run stops with one line saying when
to resume. A secondary limit (403/429 with ``Retry-After`` or the "secondary
rate limit" message) pauses every worker of the client, a minute and longer
each time it happens again, as GitHub's documentation asks.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from datetime import UTC, datetime

import httpx

from repoherald.github.errors import GitHubError, github_message
from repoherald.httppolicy import epoch_from_header, retry_after

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
        left, when = epoch_from_header(remaining), epoch_from_header(reset)
        with self._lock:
            if left is not None:
                self.remaining = left
            if when is not None:
                self.reset = when

    def wait_after(self, response: httpx.Response) -> float | None:
        """Seconds to wait before retrying, None when this 403/429 is not a rate limit.

        GitHub's rules: honour ``Retry-After``; else, with no requests left,
        wait for ``X-RateLimit-Reset``; else, for a secondary limit, wait a
        minute, longer each time it happens again. A header that is not a
        number (``Retry-After: inf``, ``X-RateLimit-Reset: soon``) counts as
        absent: the secondary wait applies, never an exception.
        """
        headers = response.headers
        asked = retry_after(headers.get("retry-after"), math.inf)
        text = github_message(response).lower()
        exhausted = headers.get("x-ratelimit-remaining") == "0"
        reset = epoch_from_header(headers.get("x-ratelimit-reset"))
        if asked is not None:
            wait = asked.seconds
        elif exhausted and reset is not None:
            wait = max(0.0, reset - self._clock()) + 1.0
            if wait > self._max_wait:
                raise self._exhausted(headers, reset)
            return wait
        elif "secondary rate limit" in text or response.status_code == 429 or exhausted:
            with self._lock:
                self._secondary_hits += 1
                hits = self._secondary_hits
            wait = self._secondary_wait * 2 ** (hits - 1)
            unreadable = "retry-after" in headers or exhausted
            if unreadable and wait <= self._max_wait:
                name = "Retry-After" if "retry-after" in headers else "X-RateLimit-Reset"
                log.warning(
                    "%s: GitHub's %s header %r is not a number of seconds; waiting %.0f s instead",
                    self.repo,
                    name,
                    _short(headers.get(name)),
                    wait,
                )
        else:
            return None
        if wait > self._max_wait:
            raise GitHubError(
                f"{self.repo}: GitHub's secondary rate limit asks to wait {_duration(wait)}, more"
                f" than [github] max_wait_seconds={self._max_wait:g}:"
                f" re-run {_after(self._clock() + wait, wait)} (what was fetched is cached)",
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
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%H:%M UTC")
    except (OverflowError, ValueError, OSError):
        return "a long while"


def _after(ts: float, wait: float) -> str:
    return f"after {_clock_text(ts)}" if wait < 86400 else "later"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 365 * 86400 else "more than a year"


def _short(value: str | None) -> str:
    """A header value fit for a log line: printable characters, 40 at most."""
    return "".join(c for c in value or "" if c.isprintable())[:40]
