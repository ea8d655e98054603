"""Waits a server asks for (``Retry-After``, ``X-RateLimit-Reset``), read safely and capped.

RFC 9110 allows delta-seconds or an HTTP date; servers and proxies send both,
and hostile ones send ``inf``, ``1e300``, ``-5`` or ``soon``. Whatever the
value, the answer is a finite number of seconds no larger than the cap, or
None (unreadable: the caller uses its own bounded backoff). When a value was
cut to the cap, :attr:`ServerWait.capped` keeps what was asked, so the log
can say so.
"""

from __future__ import annotations

import email.utils
import math
import time
from dataclasses import dataclass

PLAUSIBLE = 366 * 86400.0
"""Longer asks (``999999999``, ``1e300``) are not a wait anyone means: read as unreadable."""


@dataclass(frozen=True)
class ServerWait:
    seconds: float
    asked: str
    """The header's value, as sent (for the message)."""
    capped: bool

    def note(self, who: str, header: str = "Retry-After") -> str:
        """One line for the log saying what was asked and what is done."""
        asked = _printable(self.asked)
        if self.capped:
            return f"{who} asked to wait {asked} ({header}); waiting {self.seconds:.0f} s, the cap"
        return f"{who} asked to wait {asked} ({header}); waiting {self.seconds:.0f} s"


def _printable(value: str) -> str:
    text = "".join(c for c in value if c.isprintable())[:40]
    return repr(text) if not text.replace(".", "").isdigit() else f"{text} s"


def seconds_from_header(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` value asks for; None when absent, negative or unreadable.

    ``inf``, ``nan`` and anything beyond :data:`PLAUSIBLE` are unreadable;
    other long asks are cut by :func:`retry_after`.
    """
    if not value:
        return None
    value = value.strip()[:100]
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        try:
            seconds = when.timestamp() - (time.time() if now is None else now)
        except (OverflowError, ValueError, OSError):
            return None
        return seconds if 0 <= seconds <= PLAUSIBLE else None
    if not math.isfinite(seconds) or not 0 <= seconds <= PLAUSIBLE:
        return None
    return seconds


def retry_after(value: str | None, cap: float, now: float | None = None) -> ServerWait | None:
    """The wait a ``Retry-After`` value asks for, cut to ``cap``; None when absent or unreadable."""
    seconds = seconds_from_header(value, now)
    if seconds is None or value is None:
        return None
    return ServerWait(min(seconds, cap), value.strip(), seconds > cap)


def epoch_from_header(value: str | None) -> int | None:
    """A Unix time from a header like ``X-RateLimit-Reset``; None unless plain ASCII digits.

    ``soon``, ``-1``, ``1e9`` and ``²`` are all None, never an exception.
    """
    if value is None:
        return None
    value = value.strip()
    if not value.isascii() or not value.isdigit() or len(value) > 12:
        return None
    return int(value)
