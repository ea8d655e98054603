"""One HTTP policy for every client (GitHub, the LLM endpoint, webhooks; SMTP's deadline).

* :mod:`~repoherald.httppolicy.limits` — the numbers per client kind, and the errors.
* :mod:`~repoherald.httppolicy.waits` — ``Retry-After`` and reset headers, capped.
* :mod:`~repoherald.httppolicy.body` — bounded, decompressing body reads; safe JSON.
* :mod:`~repoherald.httppolicy.deadline` — an overall deadline for sync requests.
* :mod:`~repoherald.httppolicy.send` — one request under all of the above.
"""

from repoherald.httppolicy.body import JsonTooDeep, loads
from repoherald.httppolicy.limits import (
    GITHUB,
    LLM,
    SMTP_DEADLINE,
    WEBHOOK,
    BadEncoding,
    BodyTooLarge,
    DeadlineExceeded,
    HttpPolicyError,
    Limits,
    TooManyRedirects,
)
from repoherald.httppolicy.send import asend, new_async_client, new_client, send
from repoherald.httppolicy.waits import ServerWait, epoch_from_header, retry_after

__all__ = [
    "GITHUB",
    "LLM",
    "SMTP_DEADLINE",
    "WEBHOOK",
    "BadEncoding",
    "BodyTooLarge",
    "DeadlineExceeded",
    "HttpPolicyError",
    "JsonTooDeep",
    "Limits",
    "ServerWait",
    "TooManyRedirects",
    "asend",
    "epoch_from_header",
    "loads",
    "new_async_client",
    "new_client",
    "retry_after",
    "send",
]
