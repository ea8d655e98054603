"""The LLM key never leaves the process: not through echoing proxies, not through a typo.

Some proxies answer errors with the request's headers in the body. The
server here does exactly that, on 127.0.0.1, for every request: a JSON 400
for one commit and a plain-text 500 for the other. After the run, every byte
the run wrote (stdout, stderr, the report, its JSON twin, the SQLite store
and its side files) is searched for the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.gitfixture import GitFixture

KEY = "rh-echo-Zq81Lk0Pw5Nm7Xs2Tb4Vc9"
"""No well-known token shape: only the registered secret masks it."""
DAY = "2026-05-01"


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        bare = auth.split()[-1] if auth else ""
        words = f"invalid request: you sent Authorization: {auth} (key {bare})"
        if b"[json-400]" in body:
            status, ctype = 400, "application/json"
            data = json.dumps({"error": {"message": words, "type": "invalid_request"}}).encode()
        else:
            status, ctype = 500, "text/plain"
            data = f"upstream failed; request headers: Authorization={auth}; {bare}".encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def echo_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def cli(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repoherald", "report", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if k != "REPOHERALD_HOME"}, **env},
    )


def test_echoed_key_is_masked_everywhere(
    git_repo: GitFixture, tmp_path: Path, echo_url: str
) -> None:
    for i, tag in enumerate(("[json-400]", "[text-500]")):
        git_repo.write(f"src/app/m{i}.py", f"def f():\n    return {i}\n")
        git_repo.commit(f"{tag} Add module {i}", when=datetime(2026, 5, 1, 8 + i, tzinfo=UTC))
    config = tmp_path / "repoherald.toml"
    config.write_text("[llm]\nmax_retries = 1\n", encoding="utf-8")
    out, home = tmp_path / "out", tmp_path / "home"
    proc = cli(
        tmp_path, "--repo", str(git_repo.path), "--date", DAY, "--tz", "UTC", "--lang", "en",
        "--config", str(config), "--out", str(out), "--home", str(home), "--debug",
        "--llm-base-url", echo_url, "--llm-model", "m", "--llm-api-key-env", "RH_ECHO_KEY",
        env={"RH_ECHO_KEY": KEY},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    md = next(out.glob("*/*/*.md")).read_text(encoding="utf-8")
    assert "HTTP 400: invalid request: you sent Authorization" in md, "the echo was exercised"
    assert "HTTP 500: upstream failed" in md
    twin = json.loads(next(out.glob("*/*/*.json")).read_text(encoding="utf-8"))
    errors = [c["analysis"]["llm_error"] for c in twin["repos"][0]["commits"]]
    assert all("Bearer *** (key ***)" in e or "Bearer ***; ***" in e for e in errors), errors
    assert "HTTP 400" in proc.stderr

    written = [p for p in tmp_path.rglob("*") if p.is_file() and git_repo.path not in p.parents]
    assert any(p.name == "repoherald.db" for p in written)
    assert any(p.suffix == ".json" for p in written)
    leaked = [p for p in written if KEY.encode() in p.read_bytes()]
    assert leaked == []
    assert KEY not in proc.stdout and KEY not in proc.stderr


@pytest.mark.parametrize(
    "pasted",
    [
        "gsk_" + "Q7xK2mP9vL4nR8sT1wY6zB3cD5fG0hJ",  # fits the variable-name pattern
        "sk-proj-Q7xK2mP9vL4nR8sT1wY6zB3cD5fG0hJ",  # does not
        "Q7xK2mP9vL4nR8sT1wY6zB3cD5fG0hJ",  # no prefix: a generated-looking token
    ],
    ids=["gsk", "sk-proj", "bare"],
)
def test_key_pasted_as_variable_name_is_refused_without_echo(tmp_path: Path, pasted: str) -> None:
    proc = cli(
        tmp_path, "--repo", str(tmp_path), "--llm-base-url", "http://127.0.0.1:9/v1",
        "--llm-model", "m", "--llm-api-key-env", pasted, env={},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "looks like a key, not a variable name" in proc.stderr
    assert "NAME of an environment variable" in proc.stderr
    assert pasted[4:14] not in proc.stderr + proc.stdout
    assert len(proc.stderr.strip().splitlines()) == 1


def test_key_pasted_in_the_config_file_is_refused_without_echo(tmp_path: Path) -> None:
    pasted = "gsk_" + "Q7xK2mP9vL4nR8sT1wY6zB3cD5fG0hJ"
    config = tmp_path / "repoherald.toml"
    config.write_text(
        f'[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "{pasted}"\n',
        encoding="utf-8",
    )
    proc = cli(tmp_path, "--repo", str(tmp_path), env={})
    assert proc.returncode == 2
    assert "looks like a key, not a variable name" in proc.stderr
    assert pasted[4:14] not in proc.stderr
