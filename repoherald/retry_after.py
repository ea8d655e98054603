"""The ``Retry-After`` header, read one way for every HTTP client (LLM, GitHub, webhooks).

RFC 9110 allows delta-seconds or an HTTP date; servers and proxies send both.
"""

from __future__ import annotations

import email.utils
import time


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, or None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
