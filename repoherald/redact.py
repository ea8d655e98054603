"""One filter for every string that leaves the process: logs, store, reports, messages.

Secrets reach repoherald in two ways: as values of environment variables it
was told to read (an LLM key, a GitHub token, a webhook URL, an SMTP
password), and embedded in text it did not write (a clone URL with
``user:token@``, an error body from a proxy that echoes the ``Authorization``
header). Both are scrubbed here, at the edges, by one function, so a new
output path cannot forget a case that another one handles.

A webhook URL is a secret in parts too: a receiver or a proxy may echo only
its path (Slack's ``/services/T…/B…/<secret>``) or one query value
(DingTalk's ``access_token``, WeCom's ``key``). Registering a URL registers
its token-like path segments and query values as well, and the path shapes
of known webhook platforms are masked even when nobody registered them.

Usage: whoever reads a secret calls :func:`register` with the value; whoever
writes text out calls :func:`redact` on it. Registration is process-wide
because secrets are process-wide (they come from the environment).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import urllib.parse

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
# the secret part of known webhook paths: Slack, Feishu/Lark, Discord, Mattermost-style hooks
_WEBHOOK_PATH = re.compile(
    r"(?P<key>/services/|/open-apis/bot/v2/hook/|/api/webhooks/|/hooks/)"
    r"(?P<value>(?<=/services/)T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9_-]+"
    r"|(?<=/hook/)[A-Za-z0-9_-]{8,}"
    r"|(?<=/api/webhooks/)\d+/[A-Za-z0-9_-]+"
    r"|(?<=/hooks/)[A-Za-z0-9]{20,})"
)
_URL_PARTS = re.compile(r"https?://[^/\s?#]+(?P<path>/[^\s?#]*)?(?:\?(?P<query>[^\s#]*))?")
# well-known token shapes, even when nobody registered them (pasted into a message)
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|"
    r"gsk_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})\b"
)

MIN_SECRET_LENGTH = 4
"""Shorter values are not masked: masking "abc" everywhere would garble reports."""


def register(value: str | None) -> None:
    """Remember a secret value so every later :func:`redact` call masks it.

    A URL's token-like parts are remembered with it (:func:`url_secrets`).
    """
    global _pattern
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    values = {value, *url_secrets(value)}
    with _lock:
        if values <= _secrets:
            return
        _secrets.update(values)
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))


def _token_like(part: str) -> bool:
    """Long enough, and shaped like a generated token rather than a word ("send", "hook")."""
    has_digit = any(c.isdigit() for c in part)
    return len(part) >= 16 or (len(part) >= 8 and has_digit)


def url_secrets(value: str) -> set[str]:
    """The parts of a secret URL that are secrets on their own.

    Its path (what a receiver echoes as "no hook at /…"), each token-like path
    segment, and every query value of eight characters or more (shorter ones
    are flags like ``json``, too common to mask everywhere).
    """
    m = _URL_PARTS.fullmatch(value.strip())
    if m is None:
        return set()
    out: set[str] = set()
    path = m["path"] or ""
    if len(path) >= 8 and any(_token_like(seg) for seg in path.split("/")):
        out.add(path)
    out.update(seg for seg in path.split("/") if _token_like(seg))
    for pair in (m["query"] or "").split("&"):
        raw = pair.partition("=")[2]
        for candidate in {raw, urllib.parse.unquote_plus(raw)}:
            if len(candidate) >= 8:
                out.add(candidate)
    return out


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
    text = _WEBHOOK_PATH.sub(lambda m: f"{m['key']}{MASK}", text)
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
