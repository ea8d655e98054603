"""The message each chat platform is sent: its shape, its size limit and its signature.

Each builder fits the digest into the platform's limit (:func:`render_digest`
drops whole items and says how many), so a message is never refused for
its size.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
from typing import Any

from repoherald.render.digest import Digest, render_digest, slack_blocks

FEISHU_MAX_BODY = 20_000
"""Feishu/Lark: the whole request body, in bytes ("20 KB": the stricter reading)."""
DINGTALK_MAX_TEXT = 18_000
"""DingTalk: markdown text, bytes. DingTalk documents no markdown size; messages of
about 20,000 bytes are known to pass, so this stays below with room for the JSON."""
WECOM_MAX_CONTENT = 4096
"""WeCom: markdown content, bytes of UTF-8."""


def sign_feishu(secret: str, timestamp: int) -> str:
    """Feishu/Lark: base64(HMAC-SHA256(key=f"{timestamp}\\n{secret}", msg=b""))."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def sign_dingtalk(secret: str, timestamp_ms: int) -> str:
    """DingTalk: urlencode(base64(HMAC-SHA256(key=secret, msg=f"{timestamp}\\n{secret}")))."""
    mac = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256)
    return urllib.parse.quote_plus(base64.b64encode(mac.digest()).decode())


def sign_body(secret: str, body: bytes) -> str:
    """The ``json`` kind's header value: ``sha256=<hex HMAC-SHA256 of the body>``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _json_size(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string (quotes, escapes, UTF-8)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def feishu_payload(d: Digest, secret: str | None, now: float) -> dict[str, Any]:
    """An interactive card within 20 KB, signed when a secret is set."""
    title = f"{d.name} · {d.day.isoformat()}"
    card: dict[str, Any] = {
        "config": {"wide_screen_mode": True},
        "header": {"title": {"tag": "plain_text", "content": title}},
        "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": ""}}],
    }
    body: dict[str, Any] = {"msg_type": "interactive", "card": card}
    if secret:
        ts = int(now)
        body.update(timestamp=str(ts), sign=sign_feishu(secret, ts))
    overhead = len(json.dumps(body, ensure_ascii=False).encode("utf-8")) - 2
    text, _ = render_digest(d, "markdown", FEISHU_MAX_BODY - overhead, measure=_json_size)
    card["elements"][0]["text"]["content"] = text
    return body


def dingtalk_payload(d: Digest) -> dict[str, Any]:
    """Markdown lines joined by blank lines: DingTalk runs single newlines together."""
    text, _ = render_digest(d, "markdown", DINGTALK_MAX_TEXT, "bytes", sep="\n\n")
    title = f"{d.name} {d.day.isoformat()}"
    return {"msgtype": "markdown", "markdown": {"title": title, "text": text}}


def wecom_payload(d: Digest) -> dict[str, Any]:
    text, _ = render_digest(d, "markdown", WECOM_MAX_CONTENT, "bytes")
    return {"msgtype": "markdown", "markdown": {"content": text}}


def slack_payload(d: Digest) -> dict[str, Any]:
    """Block Kit blocks, and a plain ``text`` for notifications and old clients."""
    blocks, _ = slack_blocks(d)
    fallback = f"{d.name} {d.day.isoformat()}"
    return {"text": fallback, "blocks": blocks}
