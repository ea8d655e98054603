"""``repoherald llm check`` against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from repoherald.cli import main
from tests.llm_server import FakeLLM, Reply, ok

KEY = "sk-check-0123456789abcdef"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exited:
        main(["llm", "check", *args])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    code = exited.value.code
    return int(code) if isinstance(code, int) else 0, out, err


@pytest.fixture(autouse=True)
def _no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ./repoherald.toml of the developer's is read."""
    monkeypatch.chdir(tmp_path)


def test_a_good_endpoint_says_everything_that_works(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHECK_KEY", KEY)
    with FakeLLM(
        lambda body, attempt: ok({"ok": True}), model="m", api_key=KEY, max_model_len=65536
    ) as server:
        code, out, err = check(
            capsys, "--llm-base-url", server.base_url, "--llm-model", "m",
            "--llm-api-key-env", "CHECK_KEY",
        )  # fmt: skip
        (chat,) = server.chat_requests
    assert code == 0, out + err
    assert chat.body["response_format"]["type"] == "json_schema"
    assert chat.body["max_tokens"] <= 64, "a tiny request"
    lines = out.splitlines()
    assert lines[0] == f"LLM endpoint {server.base_url}, model m"
    assert f"✓ reachable {server.base_url} answers" in lines
    assert "✓ model     m is served" in lines
    assert "✓ key       accepted ($CHECK_KEY)" in lines
    assert "✓ output    json_schema structured output supported" in lines
    assert "✓ context   65536 tokens (context_tokens = 32768)" in lines
    assert any(line.startswith("· latency ") and "-token answer" in line for line in lines)
    assert lines[-1] == "usable: yes"
    assert KEY not in out + err


def test_a_server_without_json_schema_is_usable_through_the_fallback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(
        lambda body, attempt: ok({"ok": True}), model="m", reject_json_schema=True
    ) as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url, "--llm-model", "m")
        formats = [r.body["response_format"]["type"] for r in server.chat_requests]
    assert code == 0, out
    assert formats == ["json_schema", "json_object"]
    assert "! output    json_schema rejected; json_object with the schema in the prompt" in out
    assert "· context   not reported by the server; context_tokens = 32768 is assumed" in out


def test_a_refused_key_is_named_and_never_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHECK_KEY", KEY)
    with FakeLLM(model="m", api_key="sk-the-right-one-0123456789") as server:
        code, out, err = check(
            capsys, "--llm-base-url", server.base_url, "--llm-model", "m",
            "--llm-api-key-env", "CHECK_KEY",
        )  # fmt: skip
        assert server.chat_requests == [], "no chat request once the key is refused"
    assert code == 1
    assert "✗ key       HTTP 401: the server refused the key in $CHECK_KEY: check it" in out
    assert out.splitlines()[-1] == "usable: no"
    assert KEY not in out + err


def test_a_key_refused_only_by_the_chat_route_is_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Servers that list models openly still guard completions."""
    with FakeLLM(lambda body, attempt: Reply(status=403), model="m") as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url, "--llm-model", "m")
    assert code == 1
    assert "✗ key       HTTP 403: the server wants a key: set api_key_env" in out


def test_prose_instead_of_json_is_not_usable(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeLLM(lambda body, attempt: ok("Sure! Everything is ok."), model="m") as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url, "--llm-model", "m")
    assert code == 1
    assert "but the answer is not JSON ('Sure! Everything is ok.')" in out


def test_a_small_context_and_an_unlisted_model_are_warned_about(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(
        lambda body, attempt: ok({"ok": True}), model="served-model", max_model_len=8192
    ) as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url, "--llm-model", "mine")
    assert code == 0, out
    assert "! model     mine is not in the server's list (served-model)" in out
    assert "· context   not reported by the server" in out, "the size is of another model"


def test_context_smaller_than_configured_says_what_to_set(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(lambda body, attempt: ok({"ok": True}), model="m", max_model_len=8192) as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url, "--llm-model", "m")
    assert code == 0, out
    assert (
        "! context   8192 tokens, less than context_tokens = 32768: set context_tokens = 8192"
        in out
    )


def test_no_model_lists_what_the_server_serves_and_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(model="Qwen/Qwen2.5-7B-Instruct", other_models=("qwen-lora",)) as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url)
        assert server.chat_requests == []
    assert code == 2
    assert (
        "✗ model     no model set; the server serves: Qwen/Qwen2.5-7B-Instruct, qwen-lora:"
        " set model in [llm] or --llm-model" in out
    )


def test_an_unreachable_endpoint_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    code, out, _ = check(capsys, "--llm-base-url", url, "--llm-model", "m")
    assert code == 1
    assert out.splitlines() == [
        f"LLM endpoint {url}, model m",
        f"✗ reachable {url} cannot be reached (ConnectError): check that the server is running"
        " and that the base URL is right",
        "usable: no",
    ]


def test_no_endpoint_configured_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys)
    assert code == 2 and out == ""
    assert err.startswith("repoherald: error: no LLM configured")


def test_a_server_without_a_models_route_is_still_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeLLM(lambda body, attempt: ok({"ok": True}), model="m", list_models=False) as server:
        code, out, _ = check(capsys, "--llm-base-url", server.base_url, "--llm-model", "m")
    assert code == 0, out
    assert "· model     m: the server does not list its models (GET /models: HTTP 404)" in out
