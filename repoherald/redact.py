"""One filter for every string that leaves the process: logs, store, reports, messages.

Secrets reach repoherald in two ways: as values of environment variables it
was told to read (an LLM key, a GitHub token, a webhook URL, an SMTP
password), and embedded in text it did not write (a clone URL with
``user:token@``, an error body from a proxy that echoes the ``Authorization``
header). Both are scrubbed here, at the edges, by one function, so a new
output path cannot forget a case that another one handles.

Usage: whoever reads a secret calls :func:`register` with the value; whoever
writes text out calls :func:`redact` on it. Registration is process-wide
because secrets are process-wide (they come from the environment).
"""

from __future__ import annotations

import logging
import os
import re
import threading

MASK = "***"

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None

# user-info in any URL: scheme://user:password@host or scheme://token@host
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<info>[^/\s@]+)@")
# query parameters whose name says they carry a credential
_QUERY_SECRET = re.compile(
    r"(?P<key>[?&](?:access_token|token|key|api_key|apikey|sign|signature|secret|password|"
    r"passwd|sig|auth|code)=)(?P<value>[^&#\s\"'<>]+)",
    re.IGNORECASE,
)
# a bearer/basic credential in an echoed header
_AUTH_HEADER = re.compile(r"(?P<key>\b(?:Bearer|Basic|token)\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})")
# well-known token shapes, even when nobody registered them (pasted into a message)
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|"
    r"gsk_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})\b"
)

MIN_SECRET_LENGTH = 4
"""Shorter values are not masked: masking "abc" everywhere would garble reports."""


def register(value: str | None) -> None:
    """Remember a secret value so every later :func:`redact` call masks it."""
    global _pattern
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))


def secret_env(name: str | None) -> str | None:
    """Read an environment variable that holds a secret, registering its value."""
    if not name:
        return None
    value = os.environ.get(name)
    register(value)
    return value


def redact(text: str) -> str:
    """Mask registered secrets, URL user-info, credential query parameters and token shapes."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(MASK, text)
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _QUERY_SECRET.sub(lambda m: f"{m['key']}{MASK}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m['key']}{MASK}", text)
    return _TOKEN_SHAPES.sub(MASK, text)


def strip_userinfo(url: str) -> str:
    """The URL without ``user:password@`` (for display and for names derived from it)."""
    return _USERINFO.sub(lambda m: m["scheme"], url)


class RedactingFilter(logging.Filter):
    """A logging filter that applies :func:`redact` to every record's final message."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


def _forget_all() -> None:
    """Tests only: drop every registered secret."""
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None
