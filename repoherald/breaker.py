"""A circuit breaker: stop calling a service that is not there, and say so once.

When an endpoint refuses connections, every call fails the same way after the
same retries; a run of 21 commits then spends minutes learning one fact 21
times and prints it 21 times. After ``threshold`` consecutive failures the
breaker opens and every later call fails at once with
:class:`~repoherald.errors.UnavailableError`, so the caller can fall back
(rules analysis, skip a publisher) and report the outage in one line.

Callers record only failures that mean *unreachable* (connection refused, DNS
failure, connect timeout). Any answer, even an error status, proves the
service is there and resets the count: a 500 is the retry policy's business.

One breaker is shared by concurrent callers, threads or asyncio tasks: its
state changes under a lock, and nothing inside the lock blocks or awaits.

Without ``cooldown`` an open breaker stays open for the rest of the process,
which suits a report run of a minute. With it, one trial call is let through
after ``cooldown`` seconds (half-open): a success closes the breaker, a
failure opens it for another ``cooldown``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from repoherald.errors import UnavailableError


class CircuitBreaker:
    """Counts consecutive failures of one service; opens at ``threshold``."""

    def __init__(
        self,
        threshold: int = 3,
        what: str = "service",
        *,
        cooldown: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1:
            raise ValueError("threshold must be at least 1")
        self.threshold = threshold
        self.what = what
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._reason = ""
        self._opened_at: float | None = None
        self._trial = False
        self._rejected = 0

    @property
    def is_open(self) -> bool:
        """True when a call made now would be refused."""
        with self._lock:
            return self._refuses()

    @property
    def rejected(self) -> int:
        """How many calls were refused because the breaker was open."""
        with self._lock:
            return self._rejected

    @property
    def message(self) -> str:
        """One line: which service, how many failures, and the last one's reason."""
        with self._lock:
            return (
                f"{self.what} unavailable after {self._failures} consecutive failures"
                f" ({self._reason})"
            )

    def before_call(self) -> None:
        """Raise :class:`UnavailableError` if the call must not be made."""
        with self._lock:
            if self._refuses():
                self._rejected += 1
                refused = True
            else:
                if self._opened_at is not None:
                    self._trial = True  # half-open: this caller is the trial
                refused = False
        if refused:
            raise UnavailableError(self.message)

    def record_success(self) -> None:
        """The service answered: close the breaker and forget earlier failures."""
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial = False

    def record_failure(self, reason: str) -> bool:
        """Count one failure that means unreachable; True when the breaker is now open."""
        with self._lock:
            self._failures += 1
            self._reason = reason
            if self._trial or (self._opened_at is None and self._failures >= self.threshold):
                self._opened_at = self._clock()
                self._trial = False
            return self._opened_at is not None

    def _refuses(self) -> bool:
        if self._opened_at is None:
            return False
        if self.cooldown is None or self._trial:
            return True
        return self._clock() - self._opened_at < self.cooldown
