"""ChatClient over ``httpx.MockTransport``: every answer an endpoint can give, no server.

The transport stands in for the network only; the client's retry policy,
error messages, breaker bookkeeping and redaction run for real. Waits between
attempts go through an injected ``sleep`` that records them, so a test can
check the delay the client chose (``Retry-After``) without spending it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from repoherald import redact
from repoherald.breaker import CircuitBreaker
from repoherald.llm.client import (
    ChatClient,
    ChatReply,
    LlmError,
    LlmUnavailable,
    SchemaRejected,
)

BASE = "http://llm.test/v1"
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"summary": {"type": "string"}}}
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]

Handler = Callable[[httpx.Request], httpx.Response]


def completion(content: str = '{"summary": "ok"}', finish: str = "stop") -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "choices": [{"message": {"content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7},
        },
    )


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": message}}, headers=headers)


class Endpoint:
    """Plays ``replies`` in order (the last repeats) and records every request."""

    def __init__(self, *replies: httpx.Response | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def refused() -> httpx.ConnectError:
    return httpx.ConnectError("[Errno 111] Connection refused")


def ask(
    endpoint: Endpoint,
    *,
    sleeps: list[float] | None = None,
    breaker: CircuitBreaker | None = None,
    **kw: Any,
) -> tuple[ChatClient, ChatReply | BaseException]:
    """One ``complete`` call; returns the client and its reply or the exception it raised."""
    waits = sleeps if sleeps is not None else []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def go() -> tuple[ChatClient, ChatReply | BaseException]:
        client = ChatClient(
            BASE,
            "m",
            transport=httpx.MockTransport(endpoint),
            breaker=breaker,
            sleep=sleep,
            **{"max_retries": 2, **kw},
        )
        try:
            reply: ChatReply | BaseException = await client.complete(
                MESSAGES, max_tokens=100, schema_name="answer", schema=SCHEMA
            )
        except Exception as exc:
            reply = exc
        finally:
            await client.aclose()
        return client, reply

    return asyncio.run(go())


def test_success_parses_the_reply_and_sends_the_schema() -> None:
    endpoint = Endpoint(completion())
    client, reply = ask(endpoint, api_key="k-123456")
    assert reply == ChatReply('{"summary": "ok"}', "stop", 11, 7)
    (request,) = endpoint.requests
    assert str(request.url) == f"{BASE}/chat/completions"
    assert request.headers["authorization"] == "Bearer k-123456"
    body = endpoint.bodies[0]
    assert body["model"] == "m" and body["max_tokens"] == 100 and body["messages"] == MESSAGES
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert client.sent == 1


def test_no_key_sends_no_authorization() -> None:
    endpoint = Endpoint(completion())
    ask(endpoint)
    assert "authorization" not in endpoint.requests[0].headers


def test_429_waits_the_retry_after_seconds() -> None:
    endpoint = Endpoint(error(429, "slow down", {"Retry-After": "7"}), completion())
    sleeps: list[float] = []
    _, reply = ask(endpoint, sleeps=sleeps)
    assert isinstance(reply, ChatReply)
    assert len(endpoint.requests) == 2
    assert sleeps == [7.0]


def test_429_waits_until_the_retry_after_date() -> None:
    when = email.utils.formatdate(time.time() + 60, usegmt=True)
    endpoint = Endpoint(error(429, "slow down", {"Retry-After": when}), completion())
    sleeps: list[float] = []
    _, reply = ask(endpoint, sleeps=sleeps)
    assert isinstance(reply, ChatReply)
    (wait,) = sleeps
    assert 55 <= wait <= 60, "an HTTP date one minute ahead means about a minute"


def test_retry_after_is_capped() -> None:
    endpoint = Endpoint(error(429, "come back tomorrow", {"Retry-After": "86400"}), completion())
    sleeps: list[float] = []
    ask(endpoint, sleeps=sleeps)
    assert sleeps == [120.0]


def test_5xx_is_retried_then_succeeds() -> None:
    endpoint = Endpoint(error(502, "bad gateway"), error(503, "busy"), completion())
    sleeps: list[float] = []
    client, reply = ask(endpoint, sleeps=sleeps)
    assert isinstance(reply, ChatReply)
    assert len(endpoint.requests) == 3 and len(sleeps) == 2
    assert client.sent == 3


def test_5xx_gives_up_after_the_retries_and_says_so() -> None:
    endpoint = Endpoint(error(500, "the server had an error"))
    _, reply = ask(endpoint, max_retries=3)
    assert isinstance(reply, LlmError) and not isinstance(reply, LlmUnavailable)
    assert str(reply) == "HTTP 500: the server had an error (gave up after 4 attempts)"
    assert len(endpoint.requests) == 4


@pytest.mark.parametrize("status", [401, 403])
def test_unauthorised_fails_at_once_naming_the_variable(status: int) -> None:
    endpoint = Endpoint(error(status, "Incorrect API key provided"))
    _, reply = ask(endpoint, api_key="wrong-key-value", api_key_env="RH_KEY")
    assert isinstance(reply, LlmError)
    assert str(reply) == f"HTTP {status} unauthorised: check the API key in $RH_KEY"
    assert len(endpoint.requests) == 1


def test_unauthorised_without_a_variable_names_the_flag() -> None:
    _, reply = ask(Endpoint(error(401, "no key")))
    assert "--llm-api-key-env" in str(reply)


def test_404_fails_at_once_naming_url_and_model() -> None:
    endpoint = Endpoint(error(404, "model not found"))
    _, reply = ask(endpoint)
    assert isinstance(reply, LlmError)
    assert str(reply) == (
        f"HTTP 404 from {BASE}/chat/completions: check the base URL and the model name 'm'"
    )
    assert len(endpoint.requests) == 1


def test_schema_rejected_400_switches_to_json_object() -> None:
    rejection = error(400, "response_format type 'json_schema' is not supported")
    endpoint = Endpoint(rejection, completion())

    async def go() -> tuple[BaseException | None, ChatReply, bool]:
        client = ChatClient(BASE, "m", transport=httpx.MockTransport(endpoint))
        first: BaseException | None = None
        try:
            await client.complete(MESSAGES, max_tokens=10, schema_name="a", schema=SCHEMA)
        except SchemaRejected as exc:
            first = exc
        supported = client.json_schema_supported
        reply = await client.complete(MESSAGES, max_tokens=10, schema_name="a", schema=SCHEMA)
        await client.aclose()
        return first, reply, supported

    first, reply, supported = asyncio.run(go())
    assert isinstance(first, SchemaRejected) and "json_schema" in str(first)
    assert not supported
    assert reply.content == '{"summary": "ok"}'
    kinds = [b["response_format"]["type"] for b in endpoint.bodies]
    assert kinds == ["json_schema", "json_object"]


def test_other_400_fails_at_once_with_the_servers_words() -> None:
    endpoint = Endpoint(error(400, "max_tokens is too large"))
    _, reply = ask(endpoint)
    assert str(reply) == "HTTP 400: max_tokens is too large"
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, content=b'{"id": "chatcmpl-x", "choices": ['),
        httpx.Response(200, json={"choices": []}),
        httpx.Response(200, json={"choices": [{"message": None}]}),
        httpx.Response(200, json=["not", "an", "object"]),
    ],
    ids=["cut-json", "no-choice", "null-message", "list"],
)
def test_malformed_completion_is_retried_then_reported(response: httpx.Response) -> None:
    endpoint = Endpoint(response)
    _, reply = ask(endpoint, max_retries=1)
    assert isinstance(reply, LlmError)
    assert str(reply) == "the server sent a malformed completion (gave up after 2 attempts)"
    assert len(endpoint.requests) == 2


def test_malformed_then_good_completion_succeeds() -> None:
    endpoint = Endpoint(httpx.Response(200, content=b"<html>proxy</html>"), completion())
    _, reply = ask(endpoint)
    assert isinstance(reply, ChatReply)


def test_connection_refused_without_breaker_uses_every_retry() -> None:
    endpoint = Endpoint(refused())
    sleeps: list[float] = []
    client, reply = ask(endpoint, sleeps=sleeps, max_retries=4)
    assert isinstance(reply, LlmUnavailable)
    assert str(reply) == ("ConnectError: [Errno 111] Connection refused (gave up after 5 attempts)")
    assert len(endpoint.requests) == 5 and len(sleeps) == 4
    assert client.sent == 5


def test_connection_refused_opens_the_breaker_at_its_threshold() -> None:
    endpoint = Endpoint(refused())
    breaker = CircuitBreaker(threshold=3, what=f"LLM endpoint {BASE}")
    sleeps: list[float] = []
    _, reply = ask(endpoint, sleeps=sleeps, breaker=breaker, max_retries=4)
    assert isinstance(reply, LlmUnavailable)
    assert str(reply) == (
        f"LLM endpoint {BASE} unavailable after 3 consecutive failures"
        " (ConnectError: [Errno 111] Connection refused)"
    )
    assert len(endpoint.requests) == 3, "no retry once the breaker is open"
    assert len(sleeps) == 2
    assert breaker.is_open


def test_an_open_breaker_sends_nothing() -> None:
    breaker = CircuitBreaker(threshold=1, what="LLM endpoint")
    breaker.record_failure("refused")
    endpoint = Endpoint(completion())
    client, reply = ask(endpoint, breaker=breaker)
    assert isinstance(reply, LlmUnavailable)
    assert endpoint.requests == [] and client.sent == 0
    assert breaker.rejected == 1


def test_connect_timeout_counts_as_unreachable() -> None:
    endpoint = Endpoint(httpx.ConnectTimeout("timed out"))
    _, reply = ask(endpoint, breaker=CircuitBreaker(threshold=2), max_retries=4)
    assert isinstance(reply, LlmUnavailable)
    assert len(endpoint.requests) == 2


def test_any_answer_resets_the_breaker_count() -> None:
    breaker = CircuitBreaker(threshold=3)
    endpoint = Endpoint(refused(), refused(), error(503, "warming up"), refused(), completion())
    _, reply = ask(endpoint, breaker=breaker, max_retries=4)
    assert isinstance(reply, ChatReply), "two failures, an answer, one failure: never three"
    assert not breaker.is_open


def test_read_timeout_is_retried_but_not_counted_by_the_breaker() -> None:
    breaker = CircuitBreaker(threshold=1)
    endpoint = Endpoint(httpx.ReadTimeout("slow"), completion())
    _, reply = ask(endpoint, breaker=breaker)
    assert isinstance(reply, ChatReply)
    assert not breaker.is_open


def test_error_body_echoing_the_key_is_redacted() -> None:
    key = "rh-echo-Zq81Lk0Pw5Nm7Xs2"
    redact.register(key)
    try:
        echo = f"bad request, you sent Authorization: Bearer {key} (key {key})"
        for status in (400, 500):
            _, reply = ask(Endpoint(error(status, echo)), api_key=key, max_retries=0)
            assert isinstance(reply, LlmError)
            assert key not in str(reply) and "***" in str(reply)
    finally:
        redact._forget_all()


def test_injected_client_is_used_and_left_open() -> None:
    endpoint = Endpoint(completion())

    async def go() -> bool:
        async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
            client = ChatClient(BASE, "m", http=http, api_key="k-abcdef")
            await client.complete(MESSAGES, max_tokens=10, schema_name="a", schema=SCHEMA)
            await client.aclose()
            return http.is_closed

    assert asyncio.run(go()) is False
    assert endpoint.requests[0].headers["authorization"] == "Bearer k-abcdef"
