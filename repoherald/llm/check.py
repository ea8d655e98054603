"""``repoherald llm check``: one tiny request that says what works before the morning run.

A misconfigured endpoint otherwise shows up as a night of commits that kept
their rule analysis. The check asks the server for its models
(``GET /models``: is it there, is the key accepted, is the model served, how
long a context does it take) and sends one chat completion of a few tokens
with the same structured-output request the analyser makes, falling back to
``json_object`` as the analyser does. Every finding is one line; the key is
never part of one (all text is redacted, and the key only travels in the
``Authorization`` header).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from repoherald.httppolicy import LLM, HttpPolicyError, asend, loads
from repoherald.llm.answer import strip_fence
from repoherald.llm.client import ChatClient, ChatReply, LlmError, LlmUnavailable, SchemaRejected
from repoherald.llm.settings import LlmSettings
from repoherald.redact import redact, strip_userinfo

Status = Literal["ok", "warn", "fail", "info"]

CHECK_OUTPUT_TOKENS = 64
"""Room for the tiny answer (a reasoning model may spend some of it thinking)."""
CHECK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")
"""Where servers put a model's context size in ``GET /models`` (vLLM and SGLang first)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the check: what was looked at, how it went, in words."""

    topic: str
    status: Status
    text: str


@dataclass
class CheckResult:
    """What the check found; ``usable`` means a run would get model analyses."""

    endpoint: str
    findings: list[Finding] = field(default_factory=list)
    usable: bool = False
    needs_config: bool = False
    """The settings are incomplete (no model): a usage error, not a broken endpoint."""

    def add(self, topic: str, status: Status, text: str) -> None:
        self.findings.append(Finding(topic, status, redact(text)))


@dataclass(frozen=True, slots=True)
class _Models:
    """The answer to ``GET /models``: its status and what it lists."""

    status: int
    ids: tuple[str, ...] = ()
    context: dict[str, int] = field(default_factory=dict)


def check_endpoint(
    cfg: LlmSettings, *, transport: httpx.AsyncBaseTransport | None = None
) -> CheckResult:
    """Probe the endpoint ``cfg`` names; never raises for what the server does."""
    return asyncio.run(_check(cfg, transport))


async def _check(cfg: LlmSettings, transport: httpx.AsyncBaseTransport | None) -> CheckResult:
    result = CheckResult(strip_userinfo(cfg.base_url))
    key = cfg.api_key()
    timeout = httpx.Timeout(min(cfg.timeout, 60.0), connect=min(cfg.timeout, 10.0))
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as http:
        models = await _list_models(http, cfg, key, result)
        if models is None:
            return result
        if not cfg.model:
            _no_model(models, result)
            return result
        _model_known(cfg, models, result)
        client = ChatClient(
            cfg.base_url, cfg.model, api_key=key, api_key_env=cfg.api_key_env,
            timeout=cfg.timeout, max_retries=min(cfg.max_retries, 1), concurrency=1,
            temperature=0.0, http=http,
        )  # fmt: skip
        await _chat(client, cfg, result)
        _context(cfg, models, result)
    return result


async def _list_models(
    http: httpx.AsyncClient, cfg: LlmSettings, key: str | None, result: CheckResult
) -> _Models | None:
    """Ask for the models; None when the check cannot go on (unreachable, key refused)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    request = http.build_request("GET", f"{cfg.base_url}/models", headers=headers)
    try:
        response = await asend(http, request, LLM.with_deadline(min(cfg.timeout, 60.0)))
    except (httpx.TransportError, HttpPolicyError) as exc:
        result.add(
            "reachable", "fail",
            f"{result.endpoint} cannot be reached ({type(exc).__name__}): check that the server"
            " is running and that the base URL is right",
        )  # fmt: skip
        return None
    if response.status_code in (401, 403):
        _key_refused(cfg, response.status_code, result)
        return None
    result.add("reachable", "ok", f"{result.endpoint} answers")
    if response.status_code != 200:
        return _Models(response.status_code)
    try:
        data = loads(response.content).get("data")
        listed = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    except (ValueError, AttributeError, TypeError):
        return _Models(response.status_code)
    context = {}
    for m in listed:
        size = next((m[k] for k in CONTEXT_KEYS if isinstance(m.get(k), int) and m[k] > 0), None)
        if size is not None:
            context[m["id"]] = size
    return _Models(200, tuple(m["id"] for m in listed), context)


def _key_refused(cfg: LlmSettings, status: int, result: CheckResult) -> None:
    if cfg.api_key_env:
        text = f"HTTP {status}: the server refused the key in ${cfg.api_key_env}: check it"
    else:
        text = f"HTTP {status}: the server wants a key: set api_key_env (or --llm-api-key-env)"
    result.add("key", "fail", text)


def _no_model(models: _Models, result: CheckResult) -> None:
    result.needs_config = True
    served = ", ".join(models.ids[:10]) if models.ids else ""
    where = f"the server serves: {served}" if served else "the server does not list its models"
    result.add("model", "fail", f"no model set; {where}: set model in [llm] or --llm-model")


def _model_known(cfg: LlmSettings, models: _Models, result: CheckResult) -> None:
    if not models.ids:
        why = f"GET /models: HTTP {models.status}" if models.status != 200 else "an empty list"
        result.add("model", "info", f"{cfg.model}: the server does not list its models ({why})")
    elif cfg.model in models.ids:
        result.add("model", "ok", f"{cfg.model} is served")
    else:
        served = ", ".join(models.ids[:10])
        result.add("model", "warn", f"{cfg.model} is not in the server's list ({served})")


async def _chat(client: ChatClient, cfg: LlmSettings, result: CheckResult) -> None:
    """The tiny request: structured output, else the analyser's json_object fallback."""
    messages = [
        {"role": "system", "content": "Answer with a JSON object only."},
        {"role": "user", "content": 'Reply with {"ok": true}.'},
    ]
    fallback = ""
    reply: ChatReply | None = None
    started = 0.0
    for _ in range(2):  # json_schema, then json_object if the server refused the schema
        started = time.monotonic()
        try:
            reply = await client.complete(
                messages, max_tokens=CHECK_OUTPUT_TOKENS, schema_name="check", schema=CHECK_SCHEMA
            )
            break
        except SchemaRejected as exc:
            fallback = str(exc)
        except LlmUnavailable as exc:
            result.add("chat", "fail", f"the chat request could not be sent: {exc}")
            return
        except LlmError as exc:
            text = str(exc)
            if text.startswith(("HTTP 401", "HTTP 403")):
                _key_refused(cfg, int(text[5:8]), result)
            else:
                result.add("chat", "fail", f"the chat request failed: {text}")
            return
    if reply is None:
        result.add("output", "fail", f"neither json_schema nor json_object works: {fallback}")
        return
    latency = time.monotonic() - started
    if cfg.api_key_env:
        result.add("key", "ok", f"accepted (${cfg.api_key_env})")
    _output(reply, fallback, result)
    result.add("latency", "info", f"{latency:.2f} s for a {reply.completion_tokens}-token answer")


def _output(reply: ChatReply, fallback: str, result: CheckResult) -> None:
    if fallback:
        mode = "json_schema rejected; json_object with the schema in the prompt (the fallback)"
    else:
        mode = "json_schema structured output supported"
    if reply.finish_reason == "length":
        result.add(
            "output", "warn",
            f"{mode}, but the answer was cut at {CHECK_OUTPUT_TOKENS} tokens (a reasoning"
            " model?): raise max_output_tokens so analyses are not cut",
        )  # fmt: skip
        result.usable = True
        return
    try:
        answer = json.loads(strip_fence(reply.content))
    except ValueError:
        result.add(
            "output", "fail",
            f"{mode}, but the answer is not JSON ({reply.content[:60]!r}): its analyses would"
            " be refused; try another model",
        )  # fmt: skip
        return
    if not isinstance(answer, dict):
        result.add("output", "fail", f"{mode}, but the answer is not a JSON object")
        return
    result.add("output", "warn" if fallback else "ok", mode)
    result.usable = True


def _context(cfg: LlmSettings, models: _Models, result: CheckResult) -> None:
    size = models.context.get(cfg.model)
    if size is None:
        result.add(
            "context", "info",
            f"not reported by the server; context_tokens = {cfg.context_tokens} is assumed",
        )  # fmt: skip
    elif size < cfg.context_tokens:
        result.add(
            "context", "warn",
            f"{size} tokens, less than context_tokens = {cfg.context_tokens}: set"
            f" context_tokens = {size} in [llm], or long diffs will be refused",
        )  # fmt: skip
    else:
        result.add("context", "ok", f"{size} tokens (context_tokens = {cfg.context_tokens})")
