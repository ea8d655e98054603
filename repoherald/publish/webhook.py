"""The ``webhook`` publisher: a digest to a Feishu, DingTalk, WeCom or Slack group, or JSON.

Webhook URLs carry credentials, so the config names only the environment
variable that holds the URL (``url_env``) and, for platforms that sign,
the one that holds the signing secret (``secret_env``). Both are read with
:func:`~repoherald.redact.secret_env`, so they are masked everywhere, and no
error ever shows the URL: errors name the target by its ``kind`` and the
variable's name.

Transient failures (5xx, 429 with ``Retry-After``, timeouts, resets, and
DingTalk's "send too fast") are retried with backoff; an HTML answer or a
200 carrying another platform error code is a
:class:`~repoherald.errors.PublishError`.

DingTalk takes at most 20 messages a minute from one robot and mutes a robot
that sends more for 10 minutes, so sends to one DingTalk URL are paced by a
sliding window shared by every target of the process (:class:`RobotPacer`):
``publish --since --until`` over 30 days waits rather than being refused.
"""

from __future__ import annotations

import base64
import builtins
import hashlib
import hmac
import json
import re
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import httpx
from pydantic import Field, field_validator

from repoherald.errors import PublishError
from repoherald.publish.base import Delivery, Publication, PublisherOptions, Status
from repoherald.redact import redact, secret_env
from repoherald.render.digest import (
    Digest,
    check_report_url,
    digest_from_json,
    render_digest,
    report_url,
    slack_blocks,
)
from repoherald.retry_after import retry_after_seconds

Kind = Literal["feishu", "dingtalk", "wecom", "slack", "json"]
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"

FEISHU_MAX_BODY = 20_000
"""Feishu/Lark: the whole request body, in bytes ("20 KB": the stricter reading)."""
DINGTALK_MAX_TEXT = 18_000
"""DingTalk: markdown text, bytes. DingTalk documents no markdown size; messages of
about 20,000 bytes are known to pass, so this stays below with room for the JSON."""
DINGTALK_PER_MINUTE = 20
"""DingTalk: messages one robot may send in a minute (more mutes it for 10 minutes)."""
DINGTALK_WINDOW = 61.0
"""Seconds of the pacing window: DingTalk's minute plus one for network jitter."""
DINGTALK_TOO_FAST = 130101
"""DingTalk's error code for "send too fast": transient, wait a window and retry."""
WECOM_MAX_CONTENT = 4096
"""WeCom: markdown content, bytes of UTF-8."""
SIGNATURE_HEADER = "X-Repoherald-Signature"
MAX_RETRY_AFTER = 60.0


class WebhookOptions(PublisherOptions):
    """One ``[[publish]]`` table with ``type = "webhook"``."""

    kind: Kind = Field(description="feishu, dingtalk, wecom, slack or json.")
    url_env: str = Field(
        pattern=ENV_NAME, description="NAME of the env variable holding the webhook URL."
    )
    secret_env: str | None = Field(
        default=None,
        pattern=ENV_NAME,
        description="NAME of the env variable holding the signing secret (feishu, dingtalk, json).",
    )
    report_url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s<>()\[\]`\"'|]+$",
        description="Link to the full report: {year} {month} {day} {date} {name} {lang}"
        " are filled in. Without it the digest names the report's file in the archive.",
    )
    timeout: float = Field(default=15.0, gt=0, le=300, description="Seconds per request.")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries of transient errors.")
    retry_delay: float = Field(
        default=1.0, ge=0, le=60, description="First backoff in seconds (doubles each retry)."
    )

    @field_validator("report_url")
    @classmethod
    def _known_fields(cls, value: str | None) -> str | None:
        return None if value is None else check_report_url(value)


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


class WebhookPublisher:
    """Posts one message per repository-day to a chat robot, or the JSON twin to any URL."""

    type: ClassVar[str] = "webhook"
    Options: ClassVar[builtins.type[PublisherOptions]] = WebhookOptions

    def __init__(
        self,
        options: WebhookOptions,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        pacer: RobotPacer | None = None,
    ) -> None:
        self.options = options
        self._client = client
        self._sleep = sleep
        self._pacer = pacer or DINGTALK_PACER

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        o: WebhookOptions = options
        return (o.url_env,) + ((o.secret_env,) if o.secret_env else ())

    @property
    def label(self) -> str:
        """How errors name this target: its kind and the variable (never the URL)."""
        return f"webhook {self.options.kind} (${self.options.url_env})"

    def payload(self, item: Publication) -> tuple[bytes, dict[str, str], dict[str, str]]:
        """The request body, its headers and query parameters (also for ``--dry-run``)."""
        o = self.options
        secret = secret_env(o.secret_env)
        headers = {"Content-Type": "application/json; charset=utf-8"}
        if o.kind == "json":
            body = item.json.encode("utf-8")
            if secret:
                headers[SIGNATURE_HEADER] = sign_body(secret, body)
            return body, headers, {}
        try:
            data = json.loads(item.json)
        except ValueError:
            raise PublishError(
                f"{self.label}: the report's JSON is damaged: run it again"
            ) from None
        url = report_url(o.report_url, name=item.name, day=item.day, lang=item.lang)
        d = digest_from_json(data, item.name, url, item.location)
        now = time.time()
        params: dict[str, str] = {}
        if o.kind == "feishu":
            message = feishu_payload(d, secret, now)
        elif o.kind == "dingtalk":
            message = dingtalk_payload(d)
            if secret:
                ts = int(now * 1000)
                params = {"timestamp": str(ts), "sign": sign_dingtalk(secret, ts)}
        elif o.kind == "wecom":
            message = wecom_payload(d)
        else:
            message = slack_payload(d)
        return json.dumps(message, ensure_ascii=False).encode("utf-8"), headers, params

    def publish(self, item: Publication) -> Delivery:
        url = secret_env(self.options.url_env)
        if not url:
            raise PublishError(f"{self.label}: ${self.options.url_env} is not set: export it")
        if not re.match(r"^https?://\S+$", url):
            raise PublishError(
                f"{self.label}: ${self.options.url_env} is not an http(s) URL: check its value"
            )
        body, headers, params = self.payload(item)
        robot = url
        if params:  # DingTalk's signature; quote_plus already encoded the sign
            sep = "&" if "?" in url else "?"
            url = url + sep + "&".join(f"{k}={v}" for k, v in params.items())
        response = self._post(url, body, headers, robot)
        remote = self._check(response)
        return Delivery(
            Status.SENT, remote, item.content_hash(), f"{self.label}: sent {len(body)} bytes"
        )

    def _post(self, url: str, body: bytes, headers: dict[str, str], robot: str) -> httpx.Response:
        """POST with retries of 5xx, 429, transport errors and DingTalk's "too fast".

        DingTalk sends wait their turn in the robot's window (``robot`` is its
        URL without the signature). The URL is never in a message.
        """
        o = self.options
        client = self._client or httpx.Client(timeout=o.timeout)
        delay = o.retry_delay
        problem = ""
        try:
            for attempt in range(o.max_retries + 1):
                wait = delay * (2**attempt)
                if o.kind == "dingtalk":
                    self._pacer.wait_turn(robot)
                try:
                    response = client.post(url, content=body, headers=headers)
                except httpx.TimeoutException:
                    problem = "timed out"
                except httpx.TransportError as exc:
                    problem = f"connection failed ({type(exc).__name__})"
                else:
                    if o.kind == "dingtalk" and _errcode(response) == DINGTALK_TOO_FAST:
                        problem = f"answered code {DINGTALK_TOO_FAST} (sent too fast)"
                        self._pacer.hold(robot)  # the next turn comes a full window later
                        continue
                    if response.status_code != 429 and response.status_code < 500:
                        return response
                    problem = f"answered HTTP {response.status_code}"
                    wait = _retry_after(response, wait)
                if attempt < o.max_retries:
                    self._sleep(wait)
        finally:
            if self._client is None:
                client.close()
        tries = o.max_retries + 1
        raise PublishError(f"{self.label}: {problem} after {tries} attempt(s): try again later")

    def _check(self, response: httpx.Response) -> str | None:
        """The platform's verdict: HTML, a 4xx or a non-zero error code is a failure."""
        text = response.text
        kind = response.headers.get("content-type", "")
        if "html" in kind or text.lstrip().startswith("<"):
            raise PublishError(
                f"{self.label}: answered an HTML page, not the platform's API:"
                f" check the URL in ${self.options.url_env}"
            )
        if response.status_code >= 400:
            raise PublishError(
                f"{self.label}: answered HTTP {response.status_code}: {_short(text)}"
                f": check ${self.options.url_env} and the robot's settings"
            )
        if self.options.kind in ("json", "slack"):
            return None
        try:
            data = response.json()
        except ValueError:
            raise PublishError(f"{self.label}: answered something that is not JSON") from None
        code = data.get("code", data.get("StatusCode", 0)) if isinstance(data, dict) else 0
        if self.options.kind != "feishu":
            code = data.get("errcode", 0) if isinstance(data, dict) else 0
        if code not in (0, None):
            msg = data.get("msg") or data.get("errmsg") or data.get("StatusMessage") or ""
            raise PublishError(
                f"{self.label}: the platform refused the message (code {code}: {_short(msg)}):"
                " check the robot's keyword, IP and signature settings"
            )
        return None


def _errcode(response: httpx.Response) -> Any:
    """The ``errcode`` of a JSON answer, or None."""
    try:
        data = response.json()
    except ValueError:
        return None
    return data.get("errcode") if isinstance(data, dict) else None


def _retry_after(response: httpx.Response, default: float) -> float:
    seconds = retry_after_seconds(response.headers.get("retry-after"))
    return default if seconds is None else min(seconds, MAX_RETRY_AFTER)


def _short(text: Any) -> str:
    return redact(" ".join(str(text).split()))[:200]
