"""A small client for OpenAI-compatible chat completions, with honest retries.

Any server that speaks ``POST {base_url}/chat/completions`` works: OpenAI,
DeepSeek, Qwen/DashScope, a local vLLM, SGLang or Ollama. Transient trouble
(timeouts, connection resets, 429 with ``Retry-After``, 5xx) is retried a
bounded number of times with exponential backoff and jitter; anything else
fails at once with a message that says what to fix.

An endpoint that cannot be reached at all (connection refused, DNS, connect
timeout) is reported to a shared :class:`~repoherald.breaker.CircuitBreaker`;
once it opens, every request fails at once with :class:`LlmUnavailable`
instead of retrying, so a dead endpoint costs seconds, not minutes.

The API key goes into the ``Authorization`` header and nowhere else. Error
text that leaves this module is redacted, because some proxies echo the
request's headers in their error bodies.

The HTTP layer is injectable (``transport=`` or a ready ``http=`` client), as
with httpx itself, so tests drive the client over ``httpx.MockTransport``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from repoherald.breaker import CircuitBreaker
from repoherald.errors import RepoheraldError, UnavailableError
from repoherald.httppolicy import (
    LLM,
    DeadlineExceeded,
    HttpPolicyError,
    Limits,
    asend,
    loads,
    new_async_client,
    retry_after,
)
from repoherald.llm.settings import DEFAULT_CONCURRENCY
from repoherald.redact import redact

log = logging.getLogger("repoherald.llm")

RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504}

Sleep = Callable[[float], Awaitable[None]]


class LlmError(RepoheraldError):
    """The request failed for good; the message says why, in one line."""


class SchemaRejected(LlmError):
    """The server does not accept ``response_format: json_schema``."""


class LlmUnavailable(LlmError):
    """The endpoint cannot be reached: the breaker is open, or every attempt failed to connect."""


@dataclass(frozen=True)
class ChatReply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class _Outcome:
    """One attempt that did not succeed for good: why, how long the server asks to wait,
    and whether the endpoint could not be reached at all."""

    reason: str
    wait: float | None = None
    unreachable: bool = False


def _error_message(response: httpx.Response) -> str:
    """The server's own words about an error, short and redacted."""
    try:
        body = loads(response.content)
    except ValueError:
        text = response.text[:200].strip() or response.reason_phrase
    else:
        err = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(err, dict):
            err = err.get("message") or err
        text = str(err)[:300]
    return redact(text)


class ChatClient:
    """One connection pool to one endpoint, shared by concurrent requests.

    ``transport`` replaces httpx's network transport (tests pass an
    ``httpx.MockTransport``); ``http`` is a ready client the caller owns and
    closes. ``breaker`` is shared with whoever else calls the same endpoint;
    ``sleep`` is how the client waits between attempts; ``pace``, awaited before
    every attempt, keeps a provider's rate limit (:mod:`repoherald.llm.pace`).
    ``limits`` is the HTTP policy (body size, capped ``Retry-After``);
    ``timeout`` is its deadline: the whole request, body included, not just
    the gap between two reads.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        concurrency: int = DEFAULT_CONCURRENCY,
        temperature: float = 0.2,
        transport: httpx.AsyncBaseTransport | None = None,
        http: httpx.AsyncClient | None = None,
        breaker: CircuitBreaker | None = None,
        sleep: Sleep = asyncio.sleep,
        limits: Limits = LLM,
        pace: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.limits = limits.with_deadline(timeout)
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._owns_http = http is None
        self._http = http or new_async_client(
            self.limits,
            transport=transport,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 15.0)),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
        self.model = model
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.temperature = temperature
        self.breaker = breaker
        self._sleep = sleep
        self._pace = pace
        self.json_schema_supported = True
        self.sent = 0
        """HTTP requests actually sent (every attempt counts; refused-by-breaker ones do not)."""

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    def _backoff(self, attempt: int) -> float:
        return float(min(30.0, 2.0**attempt) * random.uniform(0.5, 1.5))

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int,
        schema_name: str,
        schema: dict[str, Any],
        on_send: Callable[[], None] | None = None,
    ) -> ChatReply:
        """One chat completion, retried on transient failures; ``on_send`` hears each attempt."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": max_tokens,
        }
        if self.json_schema_supported:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        else:
            body["response_format"] = {"type": "json_object"}
        last = _Outcome("no attempt made")
        for attempt in range(self.max_retries + 1):
            result = await self._attempt(body, on_send)
            if isinstance(result, ChatReply):
                return result
            last = result
            if attempt == self.max_retries:
                break
            delay = last.wait if last.wait is not None else self._backoff(attempt)
            log.debug("LLM request failed (%s); retry %d in %.1fs", last.reason, attempt + 1, delay)
            await self._sleep(delay)
        gave_up = f"{last.reason} (gave up after {self.max_retries + 1} attempts)"
        raise LlmUnavailable(gave_up) if last.unreachable else LlmError(gave_up)

    async def _attempt(
        self, body: dict[str, Any], on_send: Callable[[], None] | None
    ) -> ChatReply | _Outcome:
        """Send once. A reply, a retryable outcome, or an exception that ends the request."""
        if self._pace is not None:
            await self._pace()
        if self.breaker is not None:
            try:
                self.breaker.before_call()
            except UnavailableError as exc:
                raise LlmUnavailable(redact(str(exc))) from None
        self.sent += 1
        if on_send is not None:
            on_send()
        request = self._http.build_request(
            "POST", f"{self.base_url}/chat/completions", json=body, headers=self._headers
        )
        try:
            response = await asend(self._http, request, self.limits)
        except DeadlineExceeded as exc:
            return _Outcome(str(exc))
        except HttpPolicyError as exc:
            raise LlmError(redact(f"the endpoint's answer was refused: {exc}")) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return self._unreachable(exc)
        except httpx.TimeoutException:
            return _Outcome("the request timed out")
        except httpx.TransportError as exc:
            return _Outcome(f"connection failed ({type(exc).__name__})")
        if self.breaker is not None:
            self.breaker.record_success()
        return self._judge(response)

    def _unreachable(self, exc: httpx.TransportError) -> _Outcome:
        """A connection that was never made: count it, and stop once the breaker opens."""
        reason = redact(f"{type(exc).__name__}: {exc}")
        if self.breaker is not None and self.breaker.record_failure(reason):
            raise LlmUnavailable(redact(self.breaker.message))
        return _Outcome(reason, unreachable=True)

    def _judge(self, response: httpx.Response) -> ChatReply | _Outcome:
        """What an HTTP answer means: a reply, a retry, or a failure with the fix."""
        status = response.status_code
        if status == 200:
            try:
                return self._parse(response)
            except LlmError as exc:
                return _Outcome(str(exc))
        if status in RETRY_STATUSES:
            asked = retry_after(response.headers.get("retry-after"), self.limits.max_wait)
            if asked is not None and asked.capped:
                log.warning("%s", asked.note(f"the LLM endpoint (HTTP {status})"))
            wait = asked.seconds if asked is not None else None
            return _Outcome(f"HTTP {status}: {_error_message(response)}", wait)
        if status == 400 and self.json_schema_supported and _mentions_schema(response):
            self.json_schema_supported = False
            raise SchemaRejected(f"server rejected json_schema: {_error_message(response)}")
        if status in (401, 403):
            where = f"${self.api_key_env}" if self.api_key_env else "--llm-api-key-env"
            raise LlmError(f"HTTP {status} unauthorised: check the API key in {where}")
        if status == 404:
            raise LlmError(
                redact(
                    f"HTTP 404 from {self.base_url}/chat/completions: check the base URL"
                    f" and the model name {self.model!r}"
                )
            )
        raise LlmError(f"HTTP {status}: {_error_message(response)}")

    def _parse(self, response: httpx.Response) -> ChatReply:
        try:
            data = loads(response.content)
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
            finish = str(choice.get("finish_reason") or "stop")
            usage = data.get("usage") or {}
            prompt = int(usage.get("prompt_tokens") or 0)
            completion = int(usage.get("completion_tokens") or 0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise LlmError("the server sent a malformed completion") from None
        return ChatReply(str(content), finish, prompt, completion)


def _mentions_schema(response: httpx.Response) -> bool:
    text = _error_message(response).lower()
    return any(word in text for word in ("response_format", "json_schema", "schema", "guided"))


def dumps_schema(schema: dict[str, Any]) -> str:
    """The schema as compact text, for the prompt when the server cannot take it natively."""
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
