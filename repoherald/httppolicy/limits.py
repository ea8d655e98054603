"""How long, how large and how far an HTTP exchange may go, one set of numbers per client kind.

A hostile or broken server must cost bounded time and memory: a
``Retry-After`` of 31 years, one byte every five seconds, a 1 MB gzip that
expands to 1 GiB, a redirect loop. Each client kind (GitHub, the LLM
endpoint, webhooks, SMTP) gets a :class:`Limits`; tests pass smaller ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from repoherald.errors import RepoheraldError

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """The bounds of one request (and of the waits between its attempts)."""

    deadline: float
    """Seconds for one request, from connecting to the last byte of the body."""
    max_body: int
    """Bytes of the answer after decompression (the compressed bytes count too)."""
    max_wait: float
    """Cap on a wait a server asks for (``Retry-After``, a rate limit's reset)."""
    max_redirects: int = 5
    """Redirects followed for a GET; writes never follow any."""
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    """Seconds between two reads (the deadline bounds their sum)."""

    def with_deadline(self, seconds: float) -> Limits:
        """These limits with another deadline (a configured per-request timeout)."""
        return replace(self, deadline=seconds, read_timeout=min(self.read_timeout, seconds))


GITHUB = Limits(deadline=300.0, max_body=128 * MIB, max_wait=120.0)
"""A commit with 3,000 files or a large blob fits; a bomb does not."""
LLM = Limits(deadline=120.0, max_body=16 * MIB, max_wait=120.0, read_timeout=120.0)
WEBHOOK = Limits(deadline=15.0, max_body=1 * MIB, max_wait=60.0, max_redirects=0)
"""Chat platforms answer a few bytes of JSON; webhooks are POSTs and follow no redirect."""
SMTP_DEADLINE = 120.0
"""Seconds for one whole SMTP conversation (connect, TLS, login, DATA, QUIT)."""


class HttpPolicyError(RepoheraldError):
    """An answer broke the policy; the message says how (the caller names the target)."""


class DeadlineExceeded(HttpPolicyError):
    """The request (or the SMTP conversation) took longer than its deadline."""


class BodyTooLarge(HttpPolicyError):
    """The answer, decompressed, is larger than ``max_body``."""


class BadEncoding(HttpPolicyError):
    """The answer's gzip/deflate data is damaged, cut off, or in an encoding never asked for."""


class TooManyRedirects(HttpPolicyError):
    """More redirects than ``max_redirects`` (a loop, most likely)."""
