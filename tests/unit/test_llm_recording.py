"""The benchmark's recordings: request ids, prompt files, answers and the pack, round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from bench.goldset import GoldCommit
from bench.llm_recording import HELPER, Recording, depth_of, pack, prompt_text, request_id
from tests.llm_server import FakeLLM

SHA = "a" * 40
COMMIT = GoldCommit(
    "o/r", SHA, "2026-08-03T01:00:00+00:00", "Fix the loader", "bugfix", "medium", ""
)


def _body(title: str = "Fix the loader", full: bool = True, model: str = "m") -> dict[str, Any]:
    props = {"importance": {"type": "string"}} | ({"impact": {"type": "array"}} if full else {})
    return {
        "model": model,
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": "You analyse commits."},
            {"role": "user", "content": f"Title: {title}"},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "commit_analysis", "schema": {"properties": props}},
        },
    }


def test_a_request_id_ignores_the_model_and_sampling_but_not_the_messages() -> None:
    assert request_id(_body(model="a")) == request_id(_body(model="b"))
    assert request_id(_body()) != request_id(_body(title="Fix the saver"))
    assert request_id(_body(full=True)) != request_id(_body(full=False))


def test_depth_is_read_from_the_schema() -> None:
    assert depth_of(_body(full=True)) == "full"
    assert depth_of(_body(full=False)) == "short"


def test_the_prompt_file_holds_every_message_and_the_schema() -> None:
    text = prompt_text(_body())
    assert "=== system ===\nYou analyse commits." in text
    assert "=== user ===\nTitle: Fix the loader" in text
    assert '"impact"' in text
    assert "Answer with one JSON object matching this schema" in text


def _ask(server: FakeLLM, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=30)


def test_an_unanswered_request_is_pending_then_answered_then_packed(tmp_path: Path) -> None:
    rec = Recording.open(tmp_path, "s", "2", [COMMIT])
    with FakeLLM(responder=rec.responder()) as server:
        assert _ask(server, _body()).status_code == 503
    rid = request_id(_body())
    assert rec.pending == [rid]
    written = json.loads((tmp_path / "pending" / f"{rid}.json").read_text("utf-8"))
    assert (written["repo"], written["sha"], written["depth"]) == ("o/r", SHA, "full")

    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / f"{rid}.json").write_text('{"importance": "high"}\n', "utf-8")
    _path, count = pack(Recording.open(tmp_path, "s", "2", [COMMIT]))
    assert count == 1
    for folder in ("answers", "pending"):
        for p in (tmp_path / folder).iterdir():
            p.unlink()

    replayed = Recording.open(tmp_path, "s", "3", [COMMIT])
    assert replayed.older_versions() == {"2": 1}
    with FakeLLM(responder=replayed.responder()) as server:
        reply = _ask(server, _body())
        other = _ask(server, _body(title="Not a labelled commit"))
    assert reply.json()["choices"][0]["message"]["content"] == '{"importance": "high"}'
    assert replayed.entries[rid].answered_by == HELPER
    assert other.status_code == 503
    assert replayed.unlabelled == 1
    assert replayed.stale() == []
