"""The ``webhook`` publisher: a digest to a Feishu, DingTalk, WeCom or Slack group, or JSON.

Webhook URLs carry credentials, so the config names only the environment
variable that holds the URL (``url_env``) and, for platforms that sign,
the one that holds the signing secret (``secret_env``). Both are read with
:func:`~repoherald.redact.secret_env`, so they are masked everywhere, and no
error ever shows the URL: errors name the target by its ``kind`` and the
variable's name.

Transient failures (5xx, 429 with ``Retry-After``, connections that time out
or fail before the message is out, and DingTalk's "send too fast") are
retried with backoff; no answer after the message went out (a read timeout,
a connection cut, the request's deadline passed) is a
:class:`~repoherald.errors.MaybeSentError`, never retried, so a slow robot
does not get the message once per retry. Success is a 2xx that also passes
the platform's own rule (:func:`platform_verdict`): Slack's ``ok``,
``code``/``StatusCode`` 0 for Feishu, ``errcode`` 0 for DingTalk and WeCom;
anything else (a 3xx, which a POST never follows; an HTML page; a 200 with an
error code or without the platform's answer) is a
:class:`~repoherald.errors.PublishError`. Requests follow
:mod:`repoherald.httppolicy` (a deadline of ``timeout`` seconds for the whole
request, a small cap on the answer's size).

Sends to one DingTalk robot are paced (:mod:`repoherald.publish.webhook.pacing`);
the message of each platform is built in :mod:`repoherald.publish.webhook.payloads`.
"""

from __future__ import annotations

import builtins
import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import httpx
from pydantic import Field, field_validator

from repoherald.errors import MaybeSentError, PublishError
from repoherald.httppolicy import (
    WEBHOOK,
    DeadlineExceeded,
    HttpPolicyError,
    Limits,
    loads,
    new_client,
    retry_after,
    send,
)
from repoherald.publish.base import Delivery, Publication, PublisherOptions, Status
from repoherald.publish.webhook.pacing import DINGTALK_PACER, RobotPacer
from repoherald.publish.webhook.payloads import (
    dingtalk_payload,
    feishu_payload,
    sign_body,
    sign_dingtalk,
    slack_payload,
    wecom_payload,
)
from repoherald.publish.webhook.report_url import REPORT_URL_HELP, check_report_url, report_url
from repoherald.redact import redact, secret_env
from repoherald.render import twin
from repoherald.render.digest import digest_from_twin

log = logging.getLogger("repoherald.publish")

Kind = Literal["feishu", "dingtalk", "wecom", "slack", "json"]
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"

DINGTALK_TOO_FAST = 130101
"""DingTalk's error code for "send too fast": transient, wait a window and retry."""
SIGNATURE_HEADER = "X-Repoherald-Signature"
ANSWER_LOST = (httpx.ReadTimeout, httpx.ReadError, httpx.RemoteProtocolError)
"""Failures after the message went out: the receiver may have it, so it is not posted again
(a slow robot that answers after the timeout would otherwise get it once per retry)."""


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
        description=REPORT_URL_HELP,
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
        limits: Limits | None = None,
    ) -> None:
        self.options = options
        self.limits = limits or WEBHOOK.with_deadline(options.timeout)
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
            data = twin.read(item.json)
        except twin.TwinError as e:
            raise PublishError(f"{self.label}: {e}") from None
        url = report_url(o.report_url, name=item.name, day=item.day, lang=item.lang)
        d = digest_from_twin(data, item.name, url, item.location)
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
        client = self._client or new_client(self.limits)
        delay = o.retry_delay
        problem = ""
        try:
            for attempt in range(o.max_retries + 1):
                wait = delay * (2**attempt)
                if o.kind == "dingtalk":
                    self._pacer.wait_turn(robot)
                request = client.build_request("POST", url, content=body, headers=headers)
                try:
                    response = send(client, request, self.limits)
                except (DeadlineExceeded, *ANSWER_LOST) as exc:
                    raise MaybeSentError(
                        f"{self.label}: the message went out but no answer came back"
                        f" ({exc if isinstance(exc, DeadlineExceeded) else type(exc).__name__});"
                        " look in the group before sending it again"
                    ) from None
                except HttpPolicyError as exc:
                    raise PublishError(
                        f"{self.label}: {exc}, so whether it took the message is unknown:"
                        f" check the URL in ${o.url_env}"
                    ) from None
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
                    wait = self._retry_after(response, wait)
                if attempt < o.max_retries:
                    self._sleep(wait)
        finally:
            if self._client is None:
                client.close()
        tries = o.max_retries + 1
        raise PublishError(f"{self.label}: {problem} after {tries} attempt(s): try again later")

    def _retry_after(self, response: httpx.Response, default: float) -> float:
        """The receiver's ``Retry-After``, capped (and said so), else ``default``."""
        asked = retry_after(response.headers.get("retry-after"), self.limits.max_wait)
        if asked is None:
            return default
        if asked.capped:
            log.warning("%s", asked.note(self.label))
        return asked.seconds

    def _check(self, response: httpx.Response) -> str | None:
        """The platform's verdict: only a 2xx that passes the platform's own rule is a delivery."""
        text = response.text
        kind = response.headers.get("content-type", "")
        status = response.status_code
        env = f"${self.options.url_env}"
        if 300 <= status < 400:
            raise PublishError(
                f"{self.label}: answered HTTP {status}, a redirect, which a POST does not"
                f" follow: the message was not delivered; check the URL in {env}"
            )
        if "html" in kind or text.lstrip().startswith("<"):
            raise PublishError(
                f"{self.label}: answered an HTML page, not the platform's API:"
                f" check the URL in {env}"
            )
        if not 200 <= status < 300:
            raise PublishError(
                f"{self.label}: answered HTTP {status}: {_short(text)}"
                f": check {env} and the robot's settings"
            )
        refusal = platform_verdict(self.options.kind, response.content)
        if refusal is not None:
            raise PublishError(
                f"{self.label}: the platform refused the message ({_short(refusal)}):"
                " check the robot's keyword, IP and signature settings"
            )
        return None


def platform_verdict(kind: str, body: bytes) -> str | None:
    """Why a 2xx answer is not a delivery by the platform's own rule; None when it is.

    Slack answers the text ``ok``; Feishu/Lark ``{"code": 0}`` (older:
    ``{"StatusCode": 0}``); DingTalk and WeCom ``{"errcode": 0}``. The ``json``
    kind is any receiver, for which the 2xx is the whole rule.
    """
    if kind == "json":
        return None
    if kind == "slack":
        said = body.decode("utf-8", "replace").strip()
        return None if said == "ok" else f"answered {said[:80]!r}, not ok"
    try:
        data = loads(body)
    except ValueError:
        return "answered something that is not JSON"
    if not isinstance(data, dict):
        return "answered JSON that is not an object"
    names = ("code", "StatusCode") if kind == "feishu" else ("errcode",)
    name = next((n for n in names if n in data), None)
    if name is None:
        return f"answered without {' or '.join(names)}"
    code = data[name]
    if type(code) is int and code == 0:
        return None
    msg = data.get("msg") or data.get("errmsg") or data.get("StatusMessage") or ""
    return f"code {code}: {msg}"


def _errcode(response: httpx.Response) -> Any:
    """The ``errcode`` of a JSON answer, or None."""
    try:
        data = loads(response.content)
    except ValueError:
        return None
    return data.get("errcode") if isinstance(data, dict) else None


def _short(text: Any) -> str:
    return redact(" ".join(str(text).split()))[:200]
