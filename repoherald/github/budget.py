"""A time budget for one fetch stage, shared by every thread of a GitHub client.

Each request has a deadline (:mod:`repoherald.httppolicy`) and each wait a
cap, but a repository-day is hundreds of requests and some waits: a slow or
rate-limiting server can keep every one of them under its bound and still
hold the day for hours. Inside :meth:`GitHubClient.stage
<repoherald.github.client.GitHubClient.stage>` a request gets no more than the
time left, a wait that would outlast it is not started, and once it is used
up the stage stops with one :class:`~repoherald.errors.StageTimeoutError`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from repoherald.errors import StageTimeoutError


class StageBudget:
    """``seconds`` for fetching ``what`` (``owner/name 2026-04-01``), from now."""

    def __init__(
        self, what: str, seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.what = what
        self.seconds = seconds
        self._clock = clock
        self._ends = clock() + seconds

    def left(self) -> float:
        """Seconds left (zero or less: used up)."""
        return self._ends - self._clock()

    def exceeded(self, why: str) -> StageTimeoutError:
        """The one line that ends the stage; ``why`` says what was going on."""
        return StageTimeoutError(
            f"GitHub fetch of {self.what} took longer than {self.seconds:g} s"
            f" ([github] stage_timeout): {why}; re-run later (what was fetched is cached),"
            " or raise stage_timeout"
        )

    def check(self, doing: str) -> None:
        """Raise when the budget is used up before ``doing`` starts."""
        if self.left() <= 0:
            raise self.exceeded(f"used up before {doing}")
