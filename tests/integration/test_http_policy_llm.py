"""The LLM client against a hostile endpoint on 127.0.0.1: bounded time, memory and waits.

Each failure is one :class:`LlmError` line (contained per commit by the
analyser), never a traceback or a hang.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from repoherald.httppolicy import LLM
from repoherald.llm.client import ChatClient, ChatReply, LlmError
from tests.github_server import gzip_bomb
from tests.llm_server import FakeLLM, Reply, ok, rate_limited

SCHEMA = {"type": "object", "properties": {"summary": {"type": "string"}}}
LIMITS = replace(LLM, max_body=1 << 20)


def ask(server: FakeLLM, sleeps: list[float], **kw: Any) -> ChatReply | LlmError:
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def go() -> ChatReply | LlmError:
        client = ChatClient(
            server.base_url, "m", sleep=sleep, limits=LIMITS, **{"max_retries": 1, **kw}
        )
        try:
            return await client.complete(
                [{"role": "user", "content": "hi"}],
                max_tokens=50,
                schema_name="answer",
                schema=SCHEMA,
            )
        except LlmError as exc:
            return exc
        finally:
            await client.aclose()

    return asyncio.run(go())


def serve(*replies: Reply) -> FakeLLM:
    queue = list(replies)

    def responder(body: dict[str, Any], attempt: int) -> Reply:
        return queue.pop(0) if queue else ok({"summary": "fine"})

    return FakeLLM(responder=responder)


def test_a_dripping_endpoint_fails_at_the_deadline_each_attempt() -> None:
    with serve(Reply(drip=0.5), Reply(drip=0.5)) as server:
        got = ask(server, [], timeout=1.5)
    assert isinstance(got, LlmError)
    assert "took longer than 1.5 s, the deadline (gave up after 2 attempts)" in str(got)


def test_a_gzip_bomb_is_refused_at_the_cap() -> None:
    bomb = Reply(raw_body=gzip_bomb(1 << 30), headers={"Content-Encoding": "gzip"})
    with serve(bomb) as server:
        got = ask(server, [])
    assert isinstance(got, LlmError) and "expands to more than 1 MB, the limit" in str(got)


def test_json_nested_200000_deep_is_a_malformed_completion() -> None:
    deep = Reply(raw_body=b"[" * 200_000 + b"]" * 200_000)
    with serve(deep, deep) as server:
        got = ask(server, [])
    assert isinstance(got, LlmError) and "malformed completion" in str(got)


@pytest.mark.parametrize("value", ["999999999", "inf", "1e300", "-1", "soon"])
def test_retry_after_is_capped_or_replaced_by_the_backoff(value: str) -> None:
    sleeps: list[float] = []
    with serve(rate_limited(value)) as server:
        got = ask(server, sleeps)
    assert isinstance(got, ChatReply)
    (slept,) = sleeps
    assert 0 <= slept <= LIMITS.max_wait


def test_a_long_retry_after_is_cut_to_the_cap_and_said(caplog: pytest.LogCaptureFixture) -> None:
    sleeps: list[float] = []
    with serve(rate_limited(3600)) as server:
        got = ask(server, sleeps)
    assert isinstance(got, ChatReply) and sleeps == [LIMITS.max_wait]
    assert "asked to wait 3600 s (Retry-After); waiting 120 s, the cap" in caplog.text
