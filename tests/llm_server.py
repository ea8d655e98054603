"""A real, dependency-free OpenAI-compatible chat-completions server for tests and benchmarks.

:class:`FakeLLM` runs a stdlib :class:`http.server.ThreadingHTTPServer` on
``127.0.0.1`` (ephemeral port) in a daemon thread. It speaks HTTP/1.1 with
keep-alive (every answer has a correct ``Content-Length``), so httpx connection
pooling works, and it answers each request in its own thread, so ``latency``
is real wall-clock time that overlaps between concurrent requests::

    with FakeLLM(responder=scripted({"[case-429]": [rate_limited(1), ok({...})]},
                                    default=echo_schema_answer),
                 latency=0.05) as server:
        client = httpx.Client(base_url=server.base_url)      # ".../v1"
        client.post("/chat/completions", json={...})
        server.requests       # snapshot: list[RecordedRequest]
        server.max_concurrency

Wire format (OpenAI ``POST /v1/chat/completions``):

* request: ``model``, ``messages`` (``[{"role": ..., "content": str | [parts]}]``),
  optional ``temperature``, ``max_tokens`` / ``max_completion_tokens``,
  ``response_format`` (``{"type": "json_schema", "json_schema": {"name", "schema",
  "strict"}}`` or ``{"type": "json_object"}`` or ``{"type": "text"}``);
* success: ``{"id": "chatcmpl-…", "object": "chat.completion", "created": <unix>,
  "model", "choices": [{"index": 0, "message": {"role": "assistant", "content",
  "refusal": null}, "logprobs": null, "finish_reason": "stop" | "length"}],
  "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}``;
* errors: ``{"error": {"message", "type", "param", "code"}}`` (OpenAI and current
  vLLM), or with ``error_style="flat"`` the legacy vLLM/FastChat body
  ``{"object": "error", "message", "type", "param", "code": <int>}``;
  429 carries ``Retry-After`` (seconds) when the reply sets it.

``reject_json_schema=True`` makes the server behave like an engine without
structured-output support: ``response_format.type == "json_schema"`` gets HTTP
400 (``type`` ``"BadRequestError"``, ``param`` ``"response_format"``, message
naming ``response_format``), while ``json_object`` is accepted.

Nothing here imports repoherald or pytest.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = [
    "FakeLLM",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedResponder",
    "bad_request",
    "echo_schema_answer",
    "last_user_message",
    "malformed",
    "message_text",
    "ok",
    "rate_limited",
    "raw",
    "reset",
    "schema_instance",
    "scripted",
    "server_error",
    "truncated",
]


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Reply:
    """What the server does with one request.

    * ``status`` 200: a ``chat.completion`` whose message content is ``content``
      (``None`` is sent as JSON ``null``) and whose ``finish_reason`` is
      ``finish_reason``.
    * any other status: an OpenAI error body built from ``error`` (the inner
      error object; default: a message/type/code derived from the status).
    * ``raw_body``: send exactly these bytes as the body (with ``status`` and
      ``Content-Type: application/json`` unless ``headers`` says otherwise).
    * ``reset``: read the request, then close the socket with ``SO_LINGER 0``
      (TCP RST) without answering.
    * ``headers`` are added to the answer (e.g. ``{"Retry-After": "2"}``).
    * ``delay`` seconds are waited on top of the server's ``latency``.
    * ``drip`` seconds between single bytes of the body (a hostile slow server;
      the body is ``raw_body`` or a completion).
    * ``prompt_tokens`` / ``completion_tokens`` default to ``len(text) // 4``
      (at least 1); ``include_usage=False`` leaves ``usage`` out.
    """

    status: int = 200
    content: str | None = None
    finish_reason: str = "stop"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reset: bool = False
    raw_body: bytes | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    include_usage: bool = True
    refusal: str | None = None
    error: Mapping[str, Any] | None = None
    drip: float = 0.0


Responder = Callable[[dict[str, Any], int], Reply]
"""``(request_body, attempt) -> Reply``; ``attempt`` is 1 for the first request with a key."""


def ok(answer: Any, finish_reason: str = "stop", **kw: Any) -> Reply:
    """A 200 answer; ``answer`` is sent as-is if it is a ``str``, else ``json.dumps``'ed."""
    content = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    return Reply(content=content, finish_reason=finish_reason, **kw)


def rate_limited(
    retry_after_seconds: float | str | None = 1, *, retry_after_ms: int | None = None
) -> Reply:
    """HTTP 429 with ``Retry-After`` (seconds, or any string such as an HTTP date)."""
    headers: dict[str, str] = {}
    if retry_after_seconds is not None:
        value = retry_after_seconds
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        headers["Retry-After"] = str(value)
    if retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    return Reply(
        status=429,
        headers=headers,
        error={
            "message": "Rate limit reached for requests. Please try again later.",
            "type": "rate_limit_error",
            "param": None,
            "code": "rate_limit_exceeded",
        },
    )


def server_error(status: int = 500, message: str | None = None) -> Reply:
    """An HTTP 5xx (or any status) with an OpenAI-style error body."""
    return Reply(
        status=status,
        error={
            "message": message or "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        },
    )


def bad_request(message: str, param: str | None = None, code: Any = None) -> Reply:
    """HTTP 400 ``invalid_request_error``."""
    return Reply(
        status=400,
        error={"message": message, "type": "invalid_request_error", "param": param, "code": code},
    )


def truncated(partial_text: str = '{"change_type": "feature", "summary": "The comm') -> Reply:
    """A 200 answer cut off by the token limit: ``finish_reason == "length"``."""
    return Reply(content=partial_text, finish_reason="length")


def reset() -> Reply:
    """Drop the connection (TCP RST) without sending any response."""
    return Reply(reset=True)


def malformed(
    text: str = 'Sure! Here is the analysis: {"change_type": feature, "summary": ',
) -> Reply:
    """A 200 ``stop`` answer whose content is not valid JSON."""
    return Reply(content=text)


def raw(body: bytes = b'{"id": "chatcmpl-x", "choices": [', status: int = 200) -> Reply:
    """Send exactly ``body`` (default: a truncated, invalid JSON envelope)."""
    return Reply(status=status, raw_body=body)


# --------------------------------------------------------------------------- messages


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message: a ``str`` content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def last_user_message(body: Mapping[str, Any]) -> str:
    """The text of the last ``role == "user"`` message ("" if none)."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return message_text(message)
    return ""


def _all_texts(body: Mapping[str, Any]) -> list[str]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [message_text(m) for m in messages if isinstance(m, Mapping)]


# --------------------------------------------------------------------------- scripting


class ScriptedResponder:
    """Replies by marker; see :func:`scripted`. ``counts[marker]`` = requests matched so far."""

    def __init__(
        self, script: Mapping[str, list[Reply]], default: Callable[[dict[str, Any]], Reply]
    ) -> None:
        for marker, replies in script.items():
            if not replies:
                raise ValueError(f"script for {marker!r} is empty")
        self.script = {marker: list(replies) for marker, replies in script.items()}
        self.default = default
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def marker_for(self, body: Mapping[str, Any]) -> str | None:
        """The first script key found in the last user message, else in any message."""
        last = last_user_message(body)
        for marker in self.script:
            if marker in last:
                return marker
        texts = _all_texts(body)
        for marker in self.script:
            if any(marker in text for text in texts):
                return marker
        return None

    def __call__(self, body: dict[str, Any], attempt: int) -> Reply:
        marker = self.marker_for(body)
        if marker is None:
            return self.default(body)
        with self._lock:
            n = self.counts.get(marker, 0)
            self.counts[marker] = n + 1
        replies = self.script[marker]
        return replies[min(n, len(replies) - 1)]


def scripted(
    script: Mapping[str, list[Reply]], default: Callable[[dict[str, Any]], Reply]
) -> ScriptedResponder:
    """A responder that plays ``script[marker]`` in order for requests mentioning ``marker``.

    A request matches the first key of ``script`` that is a substring of its last
    user message (failing that, of any message, so a follow-up "repair" turn still
    matches). The n-th matching request (counted per marker by the responder
    itself, not by the server's key) gets ``script[marker][n]``; the last reply
    repeats. Requests matching no marker get ``default(body)``.
    """
    return ScriptedResponder(script, default)


# --------------------------------------------------------------------------- schema answers

_PLACEHOLDER = "…"


def schema_instance(schema: Mapping[str, Any], text: str = _PLACEHOLDER) -> Any:
    """A minimal value valid against JSON Schema ``schema`` (the subset LLM schemas use).

    Handles ``$ref`` (to ``#/$defs/...`` / ``#/definitions/...`` of the root),
    ``const``, ``enum`` (first value), ``anyOf`` / ``oneOf`` (first non-null
    branch), ``allOf`` (merged), ``type`` lists (first non-null), objects (every
    listed property), arrays (``minItems`` items, at least one unless
    ``maxItems`` is 0), strings (``text``, padded/cut to ``minLength`` /
    ``maxLength``; ``format`` date-time/date/email/uri/uuid), numbers
    (``minimum`` / ``exclusiveMinimum`` or 0) and booleans (``false``).
    """
    return _instance(schema, schema, text, 0)


def _resolve(ref: str, root: Mapping[str, Any]) -> Mapping[str, Any]:
    if not ref.startswith("#"):
        raise ValueError(f"unsupported $ref {ref!r}")
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        node = node[part.replace("~1", "/").replace("~0", "~")]
    if not isinstance(node, Mapping):
        raise ValueError(f"$ref {ref!r} is not a schema")
    return node


def _instance(node: Mapping[str, Any], root: Mapping[str, Any], text: str, depth: int) -> Any:
    if depth > 40:
        raise ValueError("schema nests too deeply (recursive $ref?)")
    if "$ref" in node:
        return _instance(_resolve(node["$ref"], root), root, text, depth + 1)
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    for combo in ("anyOf", "oneOf"):
        if node.get(combo):
            branches = node[combo]
            pick = next((b for b in branches if b.get("type") != "null"), branches[0])
            return _instance(pick, root, text, depth + 1)
    if node.get("allOf"):
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        for branch in node["allOf"]:
            part = _resolve(branch["$ref"], root) if "$ref" in branch else branch
            for key, sub in part.items():
                if key in ("properties", "$defs") and key in merged:
                    merged[key] = {**merged[key], **sub}
                elif key == "required" and key in merged:
                    merged[key] = [*merged[key], *sub]
                else:
                    merged.setdefault(key, sub)
        return _instance(merged, root, text, depth + 1)

    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        if "properties" in node:
            kind = "object"
        elif "items" in node:
            kind = "array"
        else:
            kind = "string"

    if kind == "object":
        props = node.get("properties") or {}
        return {name: _instance(sub, root, text, depth + 1) for name, sub in props.items()}
    if kind == "array":
        items = node.get("items")
        if isinstance(items, list):  # tuple form
            return [_instance(sub, root, text, depth + 1) for sub in items]
        count = max(int(node.get("minItems", 0)), 1)
        if "maxItems" in node:
            count = min(count, int(node["maxItems"]))
        if not isinstance(items, Mapping):
            return [text] * count
        return [_instance(items, root, text, depth + 1) for _ in range(count)]
    if kind == "string":
        return _string(node, text)
    if kind in ("integer", "number"):
        value: float = 0
        if "minimum" in node:
            value = node["minimum"]
        elif "exclusiveMinimum" in node:
            value = node["exclusiveMinimum"] + 1
        elif "maximum" in node and node["maximum"] < 0:
            value = node["maximum"]
        elif "exclusiveMaximum" in node and node["exclusiveMaximum"] <= 0:
            value = node["exclusiveMaximum"] - 1
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise ValueError(f"unsupported schema type {kind!r}")


def _string(node: Mapping[str, Any], text: str) -> str:
    fmt = node.get("format")
    special = {
        "date-time": "2024-01-01T00:00:00Z",
        "date": "2024-01-01",
        "time": "00:00:00Z",
        "email": "a@example.com",
        "uri": "https://example.com/",
        "uuid": "00000000-0000-4000-8000-000000000000",
    }
    value = special.get(fmt, text) if isinstance(fmt, str) else text
    low = int(node.get("minLength", 0))
    if len(value) < low:
        value = value + "x" * (low - len(value))
    if "maxLength" in node:
        value = value[: int(node["maxLength"])]
    return value


_FENCE = re.compile(r"\s*(?:```(?:json)?\s*)?")


def _schema_after_marker(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON object after ``JSON Schema:`` in a message; when the prompt carries
    several (``JSON Schema (short):``, ``JSON Schema (full):``), the one its user
    message asks for (``answer: full``)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    wanted = _ANSWER_KIND.search(last_user_message(body))
    found_any: Mapping[str, Any] | None = None
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") not in ("system", "user"):
            continue
        text = message_text(message)
        for marker in _SCHEMA_MARKERS.finditer(text):
            start = marker.end()
            fence = _FENCE.match(text, start)
            start = fence.end() if fence else start
            try:
                found, _ = json.JSONDecoder().raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if not isinstance(found, Mapping):
                continue
            if wanted is None or marker.group("kind") in (None, wanted.group(1)):
                return found
            found_any = found_any or found
    return found_any


_SCHEMA_MARKERS = re.compile(r"JSON Schema(?: \((?P<kind>\w+)\))?:\s*")
_ANSWER_KIND = re.compile(r"^answer: (\w+)$", re.M)


def echo_schema_answer(body: dict[str, Any]) -> Reply:
    """A 200 answer with a minimal JSON object valid against the requested schema.

    ``response_format.type == "json_schema"``: generated from
    ``response_format.json_schema.schema``. Otherwise (``json_object``, ``text``
    or none): from the JSON object following ``JSON Schema:`` in a system or user
    message (an optional ````json`` fence is skipped), else ``{}``.
    """
    fmt = body.get("response_format")
    schema: Mapping[str, Any] | None = None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema")
        if isinstance(spec, Mapping) and isinstance(spec.get("schema"), Mapping):
            schema = spec["schema"]
    if schema is None:
        schema = _schema_after_marker(body)
    return ok(schema_instance(schema) if schema is not None else {})


def _default_responder(body: dict[str, Any], attempt: int) -> Reply:
    return echo_schema_answer(body)


# --------------------------------------------------------------------------- server


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (``headers`` keys are lower-case).

    ``body`` is the parsed JSON (``None`` if not JSON). ``arrived`` is
    :func:`time.monotonic` when the body had been read; ``key`` / ``attempt`` are
    set for chat completions that reached the responder (``attempt`` 1-based).
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    arrived: float
    key: str | None = None
    attempt: int | None = None


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never join handler threads (idle keep-alive ones would hang)
    request_queue_size = 256  # listen backlog: many clients connect at once
    allow_reuse_address = True
    fake: FakeLLM


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"
    sys_version = ""
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    # ---- plumbing

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        extra = dict(headers or {})
        lower = {k.lower() for k in extra}
        if "content-type" not in lower:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", uuid.uuid4().hex)
        for name, value in extra.items():
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), headers)

    def _error(
        self,
        status: int,
        error: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._send_json(status, self.server.fake._error_body(status, error), headers)

    def _drip(self, reply: Reply, completion: Any) -> None:
        """Headers at once, then the body one byte every ``reply.drip`` seconds."""
        body = reply.raw_body or json.dumps(completion).encode("utf-8")
        self.close_connection = True
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(reply.drip)

    def _reset(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    # ---- routes

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._record(self.command, self.path, dict(self.headers.items()), b"", None)
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            if not fake._authorized(self.headers):
                self._error(401, fake._auth_error())
                return
            if fake.list_models:
                self._send_json(200, {"object": "list", "data": fake._models()})
                return
        self._error(404, {"message": f"no route GET {self.path}", "type": "not_found_error"})

    def do_POST(self) -> None:
        fake = self.server.fake
        raw_request = self._read_body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body: Any = json.loads(raw_request) if raw_request else None
        except (ValueError, UnicodeDecodeError):
            body = None
        if self.path.split("?", 1)[0].rstrip("/") not in (
            "/v1/chat/completions",
            "/chat/completions",
        ):
            fake._record(self.command, self.path, headers, raw_request, body)
            self._error(404, {"message": f"no route POST {self.path}", "type": "not_found_error"})
            return
        fake._enter()
        try:
            self._chat(fake, headers, raw_request, body)
        finally:
            fake._leave()

    def _chat(self, fake: FakeLLM, headers: dict[str, str], raw_request: bytes, body: Any) -> None:
        started = time.monotonic()
        problem = _validate(body)
        if problem is None and not fake._authorized(self.headers):
            fake._record("POST", self.path, headers, raw_request, body)
            fake._wait(started, 0.0)
            self._error(401, fake._auth_error())
            return
        if problem is not None:
            fake._record("POST", self.path, headers, raw_request, body)
            fake._wait(started, 0.0)
            self._error(400, {"message": problem, "type": "BadRequestError", "param": None})
            return
        fmt = body.get("response_format")
        if (
            fake.reject_json_schema
            and isinstance(fmt, Mapping)
            and fmt.get("type") == "json_schema"
        ):
            fake._record("POST", self.path, headers, raw_request, body)
            fake._wait(started, 0.0)
            self._error(
                400,
                {
                    "message": (
                        "response_format type 'json_schema' is not supported by this server; "
                        "supported response_format types: 'text', 'json_object'"
                    ),
                    "type": "BadRequestError",
                    "param": "response_format",
                },
            )
            return

        key, attempt = fake._attempt(body)
        fake._record("POST", self.path, headers, raw_request, body, key, attempt)
        try:
            reply = fake.responder(body, attempt)
            if not isinstance(reply, Reply):
                raise TypeError(f"responder returned {type(reply).__name__}, not Reply")
        except Exception as exc:  # surfaced to the client and in fake.errors
            fake._note_error(exc)
            fake._wait(started, 0.0)
            self._error(500, {"message": f"fake responder failed: {exc!r}", "type": "server_error"})
            return

        fake._wait(started, reply.delay)
        if reply.reset:
            self._reset()
            return
        if reply.drip:
            self._drip(reply, fake._completion(body, reply))
            return
        if reply.raw_body is not None:
            self._send(reply.status, reply.raw_body, reply.headers)
            return
        if reply.status != 200:
            self._error(reply.status, reply.error, reply.headers)
            return
        self._send_json(200, fake._completion(body, reply), reply.headers)


def _validate(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty list"
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            return "each message needs a 'role'"
    if not isinstance(body.get("model"), str):
        return "'model' must be a string"
    if body.get("stream"):
        return "stream=true is not supported by the fake server"
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in ("text", "json_object", "json_schema"):
            return (
                f"Invalid value {kind!r} for response_format.type; supported values are "
                "'text', 'json_object' and 'json_schema'"
            )
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                return "response_format.json_schema.name is required"
            if not isinstance(spec.get("schema", {}), dict):
                return "response_format.json_schema.schema must be an object"
    return None


class FakeLLM:
    """A real OpenAI-compatible HTTP server on ``127.0.0.1:<ephemeral>``; see module doc.

    ``responder(body, attempt)`` decides each chat-completion answer (default:
    :func:`echo_schema_answer`). ``attempt`` counts, per ``key(body)`` (default:
    :func:`last_user_message`), the requests that reached the responder, starting
    at 1; requests refused earlier (bad body, 401, ``reject_json_schema``) are
    recorded but not counted. ``latency`` seconds (plus ``Reply.delay``) are
    waited in the handler thread before every chat-completion answer, refusals
    included. ``api_key``: if set, chat and model requests without
    ``Authorization: Bearer <api_key>`` get 401. ``error_style``: ``"openai"``
    (``{"error": {...}}``) or ``"flat"`` (legacy vLLM ``{"object": "error", ...}``).
    ``GET /v1/models`` lists ``model`` then ``other_models``, each with vLLM's
    ``max_model_len`` when that is set; ``list_models=False`` answers it 404, as a
    server without the route does.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        reject_json_schema: bool = False,
        key: Callable[[dict[str, Any]], str] = last_user_message,
        model: str | None = None,
        api_key: str | None = None,
        error_style: Literal["openai", "flat"] = "openai",
        host: str = "127.0.0.1",
        max_model_len: int | None = None,
        other_models: tuple[str, ...] = (),
        list_models: bool = True,
    ) -> None:
        self.responder: Responder = responder or _default_responder
        self.latency = latency
        self.reject_json_schema = reject_json_schema
        self.key = key
        self.model = model or "fake-model"
        self._echo_model = model is None
        self.api_key = api_key
        self.error_style = error_style
        self.max_model_len = max_model_len
        self.other_models = other_models
        self.list_models = list_models
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._attempts: dict[str, int] = {}
        self._errors: list[BaseException] = []
        self._connections: set[socket.socket] = set()
        self._in_flight = 0
        self._max_concurrency = 0
        self._closed = False
        self._httpd = _Server((host, 0), _Handler)
        self._httpd.fake = self
        self.host = host
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeLLM:{self.port}",
            daemon=True,
        )
        self._thread.start()

    # ---- public

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot (copy) of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Recorded ``POST .../chat/completions`` requests only."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    @property
    def bodies(self) -> list[Any]:
        """The parsed JSON bodies of :attr:`chat_requests`."""
        return [r.body for r in self.chat_requests]

    @property
    def max_concurrency(self) -> int:
        """Peak number of chat-completion requests in flight at once."""
        with self._lock:
            return self._max_concurrency

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by the responder (each also answered as HTTP 500)."""
        with self._lock:
            return list(self._errors)

    def attempts(self, key: str) -> int:
        """How many requests with ``key`` reached the responder."""
        with self._lock:
            return self._attempts.get(key, 0)

    def clear(self) -> None:
        """Forget recorded requests, attempt counts, errors and the concurrency peak."""
        with self._lock:
            self._requests.clear()
            self._attempts.clear()
            self._errors.clear()
            self._max_concurrency = self._in_flight

    def close(self) -> None:
        """Stop serving and drop open connections. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            connections = list(self._connections)
        self._httpd.shutdown()
        self._httpd.server_close()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FakeLLM({self.base_url!r})"

    # ---- used by the handler

    def _models(self) -> list[dict[str, Any]]:
        """``GET /v1/models``: the model, then ``other_models``; vLLM's ``max_model_len``."""
        out = []
        for name in (self.model, *self.other_models):
            entry: dict[str, Any] = {
                "id": name,
                "object": "model",
                "created": 0,
                "owned_by": "fake",
            }
            if self.max_model_len is not None:
                entry["max_model_len"] = self.max_model_len
            out.append(entry)
        return out

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_concurrency = max(self._max_concurrency, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _wait(self, started: float, extra: float) -> None:
        remaining = started + self.latency + extra - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)

    def _attempt(self, body: dict[str, Any]) -> tuple[str, int]:
        key = self.key(body)
        with self._lock:
            n = self._attempts.get(key, 0) + 1
            self._attempts[key] = n
        return key, n

    def _record(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        raw_body: bytes,
        body: Any,
        key: str | None = None,
        attempt: int | None = None,
    ) -> None:
        rec = RecordedRequest(
            method=method,
            path=path,
            headers={k.lower(): v for k, v in headers.items()},
            body=body,
            raw=raw_body,
            arrived=time.monotonic(),
            key=key,
            attempt=attempt,
        )
        with self._lock:
            self._requests.append(rec)

    def _note_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _authorized(self, headers: Any) -> bool:
        if self.api_key is None:
            return True
        return bool(headers.get("Authorization", "") == f"Bearer {self.api_key}")

    def _auth_error(self) -> dict[str, Any]:
        return {
            "message": "Incorrect API key provided.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }

    def _error_body(self, status: int, error: Mapping[str, Any] | None) -> dict[str, Any]:
        inner: dict[str, Any] = {
            "message": f"HTTP {status}",
            "type": "server_error" if status >= 500 else "invalid_request_error",
            "param": None,
            "code": None,
        }
        inner.update(error or {})
        if self.error_style == "flat":
            return {"object": "error", **inner, "code": status}
        return {"error": inner}

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content
        out: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") if self._echo_model else self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "system_fingerprint": "fp_fake",
        }
        if reply.include_usage:
            prompt = reply.prompt_tokens
            if prompt is None:
                prompt = _tokens("".join(_all_texts(body)))
            completion = reply.completion_tokens
            if completion is None:
                completion = _tokens(content) if content else 0
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return out
