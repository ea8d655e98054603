"""``[llm] requests_per_minute``: a provider's rate limit kept by the client, not found by 429s.

Hosted providers limit requests per minute per key; an organisation's run
with dozens of requests in flight reaches the limit in seconds and then
spends its retries on 429 answers. A token bucket of one token, refilled at
``per_minute / 60`` tokens a second, spaces every request of the run's pool
(retries included) evenly, so no minute holds more than the limit. Callers
are served in arrival order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class RequestPace:
    """Lets one request through every ``60 / per_minute`` seconds, across all callers."""

    def __init__(
        self,
        per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.interval = 60.0 / per_minute
        self._clock = clock
        self._sleep = sleep
        self._next = clock()

    async def take(self) -> None:
        """Return when this caller's turn comes: each call takes the next free slot.

        The slot is taken before the wait, with no ``await`` in between, so
        callers on the one event loop never share a slot.
        """
        now = self._clock()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await self._sleep(slot - now)
