"""Pacing sends to a chat robot that mutes senders who go too fast (DingTalk).

DingTalk takes at most 20 messages a minute from one robot and mutes a robot
that sends more for 10 minutes, so sends to one DingTalk URL are paced by a
sliding window shared by every target of the process (:class:`RobotPacer`):
``publish --since --until`` over 30 days waits rather than being refused.
A wait is said on the log (one info line), so a pause of up to a minute is
not mistaken for a hang.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger("repoherald.publish")

DINGTALK_PER_MINUTE = 20
"""DingTalk: messages one robot may send in a minute (more mutes it for 10 minutes)."""
DINGTALK_WINDOW = 61.0
"""Seconds of the pacing window: DingTalk's minute plus one for network jitter."""


class RobotPacer:
    """At most ``limit`` sends in any ``window`` seconds per robot (per webhook URL).

    Keyed by a hash of the URL, not the variable's name, so two targets that
    point at one robot share its budget. ``clock`` and ``sleep`` are
    injectable so tests pace by a fake clock instead of waiting.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        limit: int = DINGTALK_PER_MINUTE,
        window: float = DINGTALK_WINDOW,
    ) -> None:
        self.clock, self.sleep, self.limit, self.window = clock, sleep, limit, window
        self._sent: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait_turn(self, url: str) -> float:
        """Block until ``url``'s robot may send, and count the send; returns seconds waited."""
        key = hashlib.sha256(url.encode()).hexdigest()
        waited = 0.0
        with self._lock:
            sent = self._sent.setdefault(key, deque())
            while True:
                now = self.clock()
                while sent and now - sent[0] >= self.window:
                    sent.popleft()
                if len(sent) < self.limit:
                    sent.append(now)
                    return waited
                pause = sent[0] + self.window - now
                log.info(
                    "dingtalk: pacing, waiting %d s (%d messages a minute per robot)",
                    math.ceil(pause),
                    self.limit,
                )
                self.sleep(pause)
                waited += pause

    def hold(self, url: str) -> None:
        """The platform said "too fast": count the window as full from now."""
        key = hashlib.sha256(url.encode()).hexdigest()
        with self._lock:
            now = self.clock()
            self._sent[key] = deque([now] * self.limit)


DINGTALK_PACER = RobotPacer()
"""The process-wide pacer of DingTalk robots (every publisher shares it by default)."""
