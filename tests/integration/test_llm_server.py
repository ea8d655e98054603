"""Tests for tests.llm_server: the fake OpenAI-compatible server, over real HTTP with httpx."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from repoherald.llm.schema import FullAnswer, ShortAnswer, response_schema
from tests.llm_server import (
    FakeLLM,
    Reply,
    echo_schema_answer,
    malformed,
    ok,
    rate_limited,
    raw,
    reset,
    schema_instance,
    scripted,
    server_error,
    truncated,
)


def chat_body(
    user: str = "hello", *, response_format: dict[str, Any] | None = None, system: str = "sys"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "test-model",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "temperature": 0,
        "max_tokens": 256,
    }
    if response_format is not None:
        body["response_format"] = response_format
    return body


def json_schema_format(model: type[BaseModel], name: str = "answer") -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": response_schema(model, "en"), "strict": True},
    }


@pytest.fixture
def server() -> Any:
    with FakeLLM() as s:
        yield s


@pytest.fixture
def client(server: FakeLLM) -> Any:
    with httpx.Client(base_url=server.base_url, timeout=10) as c:
        yield c


def test_basic_completion_shape(server: FakeLLM, client: httpx.Client) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    r = client.post(
        "/chat/completions", json=chat_body("hi"), headers={"Authorization": "Bearer k"}
    )
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert int(r.headers["content-length"]) == len(r.content)
    data = r.json()
    assert data["object"] == "chat.completion"
    assert data["id"].startswith("chatcmpl-")
    assert isinstance(data["created"], int)
    assert data["model"] == "test-model"
    choice = data["choices"][0]
    assert choice["index"] == 0
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] == "{}"  # no schema anywhere: empty object
    assert choice["finish_reason"] == "stop"
    usage = data["usage"]
    assert usage["prompt_tokens"] >= 1
    assert usage["completion_tokens"] >= 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]

    (rec,) = server.requests
    assert rec.method == "POST"
    assert rec.path == "/v1/chat/completions"
    assert rec.body == chat_body("hi")
    assert rec.headers["authorization"] == "Bearer k"
    assert rec.key == "hi"
    assert rec.attempt == 1
    assert rec.arrived <= time.monotonic()
    assert server.bodies == [chat_body("hi")]


def test_keep_alive_reuses_one_connection(server: FakeLLM, client: httpx.Client) -> None:
    ports = set()
    for i in range(5):
        r = client.post("/chat/completions", json=chat_body(f"q{i}"))
        assert r.status_code == 200
        assert r.http_version == "HTTP/1.1"
        stream = r.extensions["network_stream"]
        ports.add(stream.get_extra_info("client_addr")[1])
    assert len(ports) == 1


def test_usage_from_reply_and_without_usage() -> None:
    replies = iter(
        [Reply(content="x", prompt_tokens=11, completion_tokens=7), Reply(include_usage=False)]
    )
    with FakeLLM(lambda body, attempt: next(replies)) as s, httpx.Client() as c:
        url = s.base_url + "/chat/completions"
        usage = c.post(url, json=chat_body()).json()["usage"]
        assert usage == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        data = c.post(url, json=chat_body()).json()
        assert "usage" not in data
        assert data["choices"][0]["message"]["content"] is None


def test_models_route_and_404(server: FakeLLM, client: httpx.Client) -> None:
    models = client.get("/models").json()
    assert models["data"][0]["id"] == "fake-model"
    r = client.post("/embeddings", json={})
    assert r.status_code == 404
    assert "error" in r.json()


def test_latency_and_real_concurrency_sync() -> None:
    with FakeLLM(latency=0.5) as s, httpx.Client(base_url=s.base_url, timeout=10) as c:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            statuses = list(
                pool.map(
                    lambda i: c.post("/chat/completions", json=chat_body(f"m{i}")).status_code,
                    range(8),
                )
            )
        elapsed = time.perf_counter() - t0
        assert statuses == [200] * 8
        assert 0.5 <= elapsed < 2.5
        assert s.max_concurrency == 8
        assert s.in_flight == 0


def test_latency_and_real_concurrency_async() -> None:
    async def main(s: FakeLLM) -> list[int]:
        async with httpx.AsyncClient(base_url=s.base_url, timeout=10) as c:
            rs = await asyncio.gather(
                *(c.post("/chat/completions", json=chat_body(f"a{i}")) for i in range(8))
            )
            return [r.status_code for r in rs]

    with FakeLLM(latency=0.5) as s:
        t0 = time.perf_counter()
        statuses = asyncio.run(main(s))
        elapsed = time.perf_counter() - t0
        assert statuses == [200] * 8
        assert 0.5 <= elapsed < 2.5
        assert s.max_concurrency == 8


def test_reply_delay_adds_to_latency() -> None:
    with FakeLLM(lambda b, a: ok({}, delay=0.3), latency=0.1) as s, httpx.Client() as c:
        t0 = time.perf_counter()
        assert c.post(s.base_url + "/chat/completions", json=chat_body()).status_code == 200
        assert time.perf_counter() - t0 >= 0.4


def test_rate_limited_with_retry_after() -> None:
    with FakeLLM(lambda b, a: rate_limited(3)) as s, httpx.Client(base_url=s.base_url) as c:
        r = c.post("/chat/completions", json=chat_body())
        assert r.status_code == 429
        assert r.headers["retry-after"] == "3"
        err = r.json()["error"]
        assert err["code"] == "rate_limit_exceeded"
        assert err["type"] == "rate_limit_error"
        assert err["message"]


def test_server_error_statuses() -> None:
    with FakeLLM(lambda b, a: server_error(503 if a > 1 else 500)) as s, httpx.Client() as c:
        url = s.base_url + "/chat/completions"
        r1 = c.post(url, json=chat_body("same"))
        r2 = c.post(url, json=chat_body("same"))
        assert (r1.status_code, r2.status_code) == (500, 503)
        assert r1.json()["error"]["type"] == "server_error"


def test_flat_error_style() -> None:
    with FakeLLM(lambda b, a: server_error(), error_style="flat") as s, httpx.Client() as c:
        body = c.post(s.base_url + "/chat/completions", json=chat_body()).json()
        assert body["object"] == "error"
        assert body["code"] == 500
        assert body["message"]


def test_reset_raises_transport_error_sync() -> None:
    with FakeLLM(lambda b, a: reset()) as s, httpx.Client(base_url=s.base_url) as c:
        with pytest.raises(httpx.TransportError) as info:
            c.post("/chat/completions", json=chat_body())
        assert isinstance(info.value, httpx.RemoteProtocolError | httpx.ReadError)
        # the server keeps serving after a reset
        s.responder = lambda b, a: ok({"fine": True})
        r = c.post("/chat/completions", json=chat_body())
        assert json.loads(r.json()["choices"][0]["message"]["content"]) == {"fine": True}


def test_reset_raises_transport_error_async() -> None:
    async def main(url: str) -> None:
        async with httpx.AsyncClient(base_url=url) as c:
            with pytest.raises(httpx.TransportError):
                await c.post("/chat/completions", json=chat_body())

    with FakeLLM(lambda b, a: reset()) as s:
        asyncio.run(main(s.base_url))


def test_malformed_raw_envelope() -> None:
    with FakeLLM(lambda b, a: raw()) as s, httpx.Client() as c:
        r = c.post(s.base_url + "/chat/completions", json=chat_body())
        assert r.status_code == 200
        assert r.content == b'{"id": "chatcmpl-x", "choices": ['
        with pytest.raises(json.JSONDecodeError):
            r.json()


def test_malformed_content_and_truncated() -> None:
    replies = {"bad": malformed(), "cut": truncated('{"summary": "half')}
    with FakeLLM(lambda b, a: replies[b["messages"][-1]["content"]]) as s, httpx.Client() as c:
        url = s.base_url + "/chat/completions"
        bad = c.post(url, json=chat_body("bad")).json()["choices"][0]
        assert bad["finish_reason"] == "stop"
        with pytest.raises(json.JSONDecodeError):
            json.loads(bad["message"]["content"])
        cut = c.post(url, json=chat_body("cut")).json()["choices"][0]
        assert cut["finish_reason"] == "length"
        assert cut["message"]["content"] == '{"summary": "half'


def test_reject_json_schema_but_accept_json_object() -> None:
    with FakeLLM(reject_json_schema=True) as s, httpx.Client(base_url=s.base_url) as c:
        r = c.post(
            "/chat/completions", json=chat_body(response_format=json_schema_format(ShortAnswer))
        )
        assert r.status_code == 400
        err = r.json()["error"]
        assert "response_format" in err["message"]
        assert err["param"] == "response_format"
        r = c.post("/chat/completions", json=chat_body(response_format={"type": "json_object"}))
        assert r.status_code == 200
        # both requests are recorded; only the accepted one reached the responder
        first, second = s.requests
        assert (first.attempt, second.attempt) == (None, 1)


def test_json_schema_accepted_by_default(server: FakeLLM, client: httpx.Client) -> None:
    r = client.post(
        "/chat/completions", json=chat_body(response_format=json_schema_format(ShortAnswer))
    )
    assert r.status_code == 200
    ShortAnswer.model_validate_json(r.json()["choices"][0]["message"]["content"])


def test_invalid_request_bodies(server: FakeLLM, client: httpx.Client) -> None:
    r = client.post("/chat/completions", content=b"not json")
    assert r.status_code == 400
    r = client.post("/chat/completions", json={"model": "m", "messages": []})
    assert r.status_code == 400
    r = client.post("/chat/completions", json=chat_body(response_format={"type": "object"}))
    assert r.status_code == 400
    assert "response_format" in r.json()["error"]["message"]


def test_api_key_required() -> None:
    with FakeLLM(api_key="sekrit") as s, httpx.Client(base_url=s.base_url) as c:
        assert c.post("/chat/completions", json=chat_body()).status_code == 401
        r = c.post(
            "/chat/completions", json=chat_body(), headers={"Authorization": "Bearer sekrit"}
        )
        assert r.status_code == 200


def test_attempt_counts_per_key() -> None:
    seen: list[tuple[str, int]] = []

    def responder(body: dict[str, Any], attempt: int) -> Reply:
        seen.append((body["messages"][-1]["content"], attempt))
        return ok({})

    with FakeLLM(responder) as s, httpx.Client(base_url=s.base_url) as c:
        for user in ["a", "b", "a", "a"]:
            c.post("/chat/completions", json=chat_body(user))
        assert seen == [("a", 1), ("b", 1), ("a", 2), ("a", 3)]
        assert s.attempts("a") == 3
        s.clear()
        assert s.requests == [] and s.attempts("a") == 0


def test_scripted_replies_by_attempt() -> None:
    responder = scripted(
        {
            "[case-429]": [rate_limited(1), ok({"n": 2})],
            "[case-flaky]": [server_error(), reset(), ok({"n": 3})],
        },
        default=lambda body: ok({"default": True}),
    )
    with FakeLLM(responder) as s, httpx.Client(base_url=s.base_url) as c:

        def post(user: str) -> httpx.Response:
            return c.post("/chat/completions", json=chat_body(user))

        assert post("fix: thing [case-429]").status_code == 429
        assert json.loads(
            post("fix: thing [case-429]").json()["choices"][0]["message"]["content"]
        ) == {"n": 2}
        # the last reply repeats
        assert post("again [case-429]").status_code == 200
        assert post("[case-flaky] x").status_code == 500
        with pytest.raises(httpx.TransportError):
            post("[case-flaky] x")
        assert post("[case-flaky] x").status_code == 200
        plain = post("feat: no marker").json()["choices"][0]["message"]["content"]
        assert json.loads(plain) == {"default": True}
        assert responder.counts == {"[case-429]": 3, "[case-flaky]": 3}


def test_scripted_matches_marker_in_earlier_message() -> None:
    responder = scripted(
        {"[case-x]": [malformed(), ok({"fixed": True})]}, default=echo_schema_answer
    )
    with FakeLLM(responder) as s, httpx.Client(base_url=s.base_url) as c:
        first = chat_body("commit [case-x]")
        assert c.post("/chat/completions", json=first).status_code == 200
        repair = dict(first)
        repair["messages"] = [
            *first["messages"],
            {"role": "assistant", "content": "garbage"},
            {"role": "user", "content": "That was not valid JSON. Answer again."},
        ]
        content = c.post("/chat/completions", json=repair).json()["choices"][0]["message"][
            "content"
        ]
        assert json.loads(content) == {"fixed": True}


def test_responder_exception_becomes_500() -> None:
    def boom(body: dict[str, Any], attempt: int) -> Reply:
        raise RuntimeError("kaput")

    with FakeLLM(boom) as s, httpx.Client(base_url=s.base_url) as c:
        r = c.post("/chat/completions", json=chat_body())
        assert r.status_code == 500
        assert "kaput" in r.json()["error"]["message"]
        assert len(s.errors) == 1


@pytest.mark.parametrize("model", [FullAnswer, ShortAnswer])
def test_echo_schema_answer_validates(model: type[BaseModel]) -> None:
    with FakeLLM(lambda b, a: echo_schema_answer(b)) as s, httpx.Client(base_url=s.base_url) as c:
        r = c.post("/chat/completions", json=chat_body(response_format=json_schema_format(model)))
        content = r.json()["choices"][0]["message"]["content"]
        answer = model.model_validate_json(content)
        assert answer.model_dump(mode="json") == json.loads(content)


def test_echo_schema_answer_with_refs_schema() -> None:
    # pydantic's own schema ($defs / $ref), not the flattened one
    body = chat_body(
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "full", "schema": FullAnswer.model_json_schema()},
        }
    )
    content = echo_schema_answer(body).content
    assert content is not None
    full = FullAnswer.model_validate_json(content)
    assert len(full.risks) == 1


def test_echo_schema_answer_json_object_marker() -> None:
    schema = json.dumps(response_schema(FullAnswer, "en"), indent=2)
    body = chat_body(
        "commit text", system=f"Answer in JSON.\nJSON Schema:\n```json\n{schema}\n```\nThanks."
    )
    body["response_format"] = {"type": "json_object"}
    content = echo_schema_answer(body).content
    assert content is not None
    FullAnswer.model_validate_json(content)
    # no marker: an empty object
    assert echo_schema_answer(chat_body(response_format={"type": "json_object"})).content == "{}"


def test_schema_instance_edge_cases() -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 3, "maxLength": 5},
            "n": {"type": ["integer", "null"], "minimum": 2},
            "f": {"type": "number", "exclusiveMinimum": 0.5},
            "b": {"type": "boolean"},
            "e": {"enum": ["x", "y"]},
            "c": {"const": 7},
            "o": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            "a": {"type": "array", "items": {"type": "integer"}, "minItems": 2},
            "z": {"type": "array", "items": {"type": "integer"}, "maxItems": 0},
            "d": {"type": "string", "format": "date-time"},
        },
    }
    assert schema_instance(schema) == {
        "s": "…xx",
        "n": 2,
        "f": 1.5,
        "b": False,
        "e": "x",
        "c": 7,
        "o": "…",
        "a": [0, 0],
        "z": [],
        "d": "2024-01-01T00:00:00Z",
    }


def test_close_is_idempotent_and_stops_serving() -> None:
    s = FakeLLM()
    url = s.base_url + "/chat/completions"
    with httpx.Client() as c:
        assert c.post(url, json=chat_body()).status_code == 200
        s.close()
        s.close()
        with pytest.raises(httpx.TransportError):
            c.post(url, json=chat_body())
