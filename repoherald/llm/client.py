"""A small client for OpenAI-compatible chat completions, with honest retries.

Any server that speaks ``POST {base_url}/chat/completions`` works: OpenAI,
DeepSeek, Qwen/DashScope, a local vLLM, SGLang or Ollama. Transient trouble
(timeouts, connection resets, 429 with ``Retry-After``, 5xx) is retried a
bounded number of times with exponential backoff and jitter; anything else
fails at once with a message that says what to fix. The API key goes into
the ``Authorization`` header and nowhere else: no log line, exception or
report ever contains it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from dataclasses import dataclass
from typing import Any

import httpx

log = logging.getLogger("repoherald.llm")

RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_WAIT = 120.0


class LlmError(Exception):
    """The request failed for good; the message says why, in one line."""


class SchemaRejected(LlmError):
    """The server does not accept ``response_format: json_schema``."""


@dataclass(frozen=True)
class ChatReply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
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


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200].strip() or response.reason_phrase
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    return str(body)[:300]


class ChatClient:
    """One connection pool to one endpoint, shared by concurrent requests."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None,
        api_key_env: str | None,
        timeout: float,
        max_retries: int,
        concurrency: int,
        temperature: float,
    ) -> None:
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 15.0)),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
        self.model = model
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.temperature = temperature
        self.json_schema_supported = True

    async def aclose(self) -> None:
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
    ) -> ChatReply:
        """One chat completion, retried on transient failures."""
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
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            try:
                response = await self._http.post("/chat/completions", json=body)
            except httpx.TimeoutException:
                last = "the request timed out"
            except httpx.TransportError as exc:
                last = f"connection failed ({type(exc).__name__})"
            else:
                status = response.status_code
                if status == 200:
                    try:
                        return self._parse(response)
                    except LlmError as exc:
                        last = str(exc)
                elif status in RETRY_STATUSES:
                    last = f"HTTP {status}: {_error_message(response)}"
                    wait = _retry_after(response.headers.get("retry-after"))
                elif status == 400 and self.json_schema_supported and _mentions_schema(response):
                    self.json_schema_supported = False
                    raise SchemaRejected(f"server rejected json_schema: {_error_message(response)}")
                elif status in (401, 403):
                    where = f"${self.api_key_env}" if self.api_key_env else "--llm-api-key-env"
                    raise LlmError(f"HTTP {status} unauthorised: check the API key in {where}")
                elif status == 404:
                    raise LlmError(
                        f"HTTP 404 from {self._http.base_url}chat/completions: check the base URL"
                        f" and the model name {self.model!r}"
                    )
                else:
                    raise LlmError(f"HTTP {status}: {_error_message(response)}")
            if attempt == self.max_retries:
                break
            delay = min(MAX_WAIT, wait) if wait is not None else self._backoff(attempt)
            log.debug("LLM request failed (%s); retry %d in %.1fs", last, attempt + 1, delay)
            await asyncio.sleep(delay)
        raise LlmError(f"{last} (gave up after {self.max_retries + 1} attempts)")

    def _parse(self, response: httpx.Response) -> ChatReply:
        try:
            data = response.json()
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
            finish = str(choice.get("finish_reason") or "stop")
            usage = data.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise LlmError("the server sent a malformed completion") from None
        return ChatReply(
            content=str(content),
            finish_reason=finish,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )


def _mentions_schema(response: httpx.Response) -> bool:
    text = _error_message(response).lower()
    return any(word in text for word in ("response_format", "json_schema", "schema", "guided"))


def dumps_schema(schema: dict[str, Any]) -> str:
    """The schema as compact text, for the prompt when the server cannot take it natively."""
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
