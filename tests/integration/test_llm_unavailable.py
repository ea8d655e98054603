"""A dead LLM endpoint (a closed port on 127.0.0.1): stop calling it, fall back, say it once.

The port is real and closed: a socket is bound to an ephemeral port and
closed again, so connecting to it is refused by the kernel, as with a server
that is not running. Nothing is timed; the tests count what the run did.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.llm.analyser import BREAKER_THRESHOLD
from repoherald.pipeline import run
from repoherald.pipeline.service import ServiceResult, run_all
from tests.gitfixture import GitFixture
from tests.integration.test_llm import good
from tests.llm_server import FakeLLM

DAY = "2026-05-01"
COMMITS = 21
CONCURRENCY = 4
MAX_SENT = CONCURRENCY + BREAKER_THRESHOLD - 1
"""Attempts that can be under way or failed before the breaker opens; retries add none."""


@pytest.fixture
def dead_url() -> str:
    """The base URL of an endpoint nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def build_day(repo: GitFixture, day: str, count: int) -> None:
    for i in range(count):
        repo.write(f"src/app/mod_{day}_{i}.py", f"def f_{i}(x):\n    return x + {i}\n")
        when = datetime.fromisoformat(f"{day}T08:{i:02d}:00+00:00").astimezone(UTC)
        repo.commit(f"Add module {i} of {day}", when=when)


def test_dead_endpoint_cli_says_it_once_and_keeps_every_commit(
    git_repo: GitFixture, tmp_path: Path, dead_url: str
) -> None:
    build_day(git_repo, DAY, COMMITS)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "repoherald", "report", "--repo", str(git_repo.path),
         "--date", DAY, "--tz", "UTC", "--lang", "en", "--out", str(out),
         "--home", str(tmp_path / "home"), "--llm-base-url", dead_url, "--llm-model", "m",
         "--llm-concurrency", str(CONCURRENCY)],
        capture_output=True, text=True, check=False, cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "REPOHERALD_HOME"},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count(dead_url) == 1, proc.stderr
    (failed,) = [line for line in proc.stderr.splitlines() if line.startswith("repoherald: failed")]
    assert "unavailable" in failed and f"{COMMITS} commits keep their rules analysis" in failed
    assert "21/21 commits analysed" not in proc.stderr
    assert "0 of 21 commits analysed by the model; 21 keep their rules analysis" in proc.stderr
    sent = re.search(r"LLM: (\d+) requests", proc.stderr)
    assert sent is not None, proc.stderr
    assert 1 <= int(sent.group(1)) <= MAX_SENT, "not 21 commits x 5 attempts"
    assert f"{COMMITS} commits kept the rules analysis" in proc.stderr

    md = next(out.glob("*/*/*.md")).read_text(encoding="utf-8")
    twin = json.loads(next(out.glob("*/*/*.json")).read_text(encoding="utf-8"))
    header = next(line for line in md.splitlines() if "Analysis" in line)
    assert "rules + model" not in header
    assert "importance judged by rules alone (rules/" in header and "no model ran" in header
    assert twin["judged_by"] == {
        "rules_only": True, "models": [], "model_commits": 0, "commits": COMMITS,
    }  # fmt: skip
    assert f"{COMMITS} commits have no model analysis" in header
    assert "LLM usage" not in md
    marker = "LLM unavailable (the endpoint could not be reached)"
    assert md.count(f"⚠️ {marker}; the rule analysis is shown instead.") == COMMITS
    assert [a for a in twin["analysers"] if a.startswith("llm/")] == []
    commits = twin["repos"][0]["commits"]
    assert len(commits) == COMMITS
    for c in commits:
        assert c["analysis"]["analyser"].startswith("rules/")
        assert c["analysis"]["llm_error"] == marker
        assert c["analysis"]["reasons"], "the rules analysis itself is kept"


def test_breaker_spans_the_days_of_a_run(
    git_repo: GitFixture, tmp_path: Path, dead_url: str
) -> None:
    for day in ("2026-05-01", "2026-05-02", "2026-05-03"):
        build_day(git_repo, day, 6)
    settings = build_settings(
        repos=(str(git_repo.path),), since="2026-05-01", until="2026-05-03", tz="UTC",
        lang="zh", out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
        llm_base_url=dead_url, llm_model="m", llm_concurrency=CONCURRENCY,
    )  # fmt: skip
    messages: list[str] = []
    result = run(settings, events=lambda e: messages.append(e.message) if e.message else None)
    assert not result.ok
    assert len(result.failures) == 1 and dead_url in result.failures[0]
    assert "18 commits keep their rules analysis" in result.failures[0]
    assert 1 <= result.llm_requests <= MAX_SENT, "days two and three send nothing"
    assert result.llm_fallbacks == 18
    assert sum("6 keep their rules analysis" in m for m in messages) == 3
    for path in (p for p in result.written if p.suffix == ".md"):
        md = path.read_text(encoding="utf-8")
        assert "规则 + 模型" not in md and "重要性仅由规则判断（rules/" in md
        assert "6 个提交没有模型分析" in md
        assert md.count("LLM 不可用（无法连接模型服务）；以下为规则分析。") == 6


def test_without_retries_every_refused_commit_is_still_unavailable(
    git_repo: GitFixture, tmp_path: Path, dead_url: str
) -> None:
    """Commits refused before the breaker opened are marked alike and not listed one by one."""
    build_day(git_repo, DAY, 5)
    config = tmp_path / "repoherald.toml"
    config.write_text("[llm]\nmax_retries = 0\n", encoding="utf-8")
    settings = build_settings(
        repos=(str(git_repo.path),), day=DAY, tz="UTC", lang="en", config=str(config),
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
        llm_base_url=dead_url, llm_model="m", llm_concurrency=1,
    )  # fmt: skip
    result = run(settings)
    assert result.llm_requests == BREAKER_THRESHOLD, "one attempt each until the breaker opened"
    (line,) = result.failures
    assert line.startswith(f"LLM endpoint {dead_url} unavailable after 3 consecutive failures")
    assert "5 commits keep their rules analysis" in line
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    errors = {c["analysis"]["llm_error"] for c in twin["repos"][0]["commits"]}
    assert errors == {"LLM unavailable (the endpoint could not be reached)"}


def test_one_refused_commit_without_breaker_opening_is_said_once(
    git_repo: GitFixture, tmp_path: Path, dead_url: str
) -> None:
    build_day(git_repo, DAY, 1)
    config = tmp_path / "repoherald.toml"
    config.write_text("[llm]\nmax_retries = 0\n", encoding="utf-8")
    settings = build_settings(
        repos=(str(git_repo.path),), day=DAY, tz="UTC", lang="en", config=str(config),
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
        llm_base_url=dead_url, llm_model="m",
    )  # fmt: skip
    result = run(settings)
    assert result.llm_requests == 1
    (line,) = result.failures
    assert line.startswith(f"LLM endpoint {dead_url} could not be reached: ConnectError: ")
    assert line.endswith(
        "(gave up after 1 attempts); 1 commits keep their rules analysis:"
        " check that the server is running and that the base URL is right"
    )


def test_a_working_endpoint_after_a_dead_one_is_not_affected(
    git_repo: GitFixture, tmp_path: Path, dead_url: str
) -> None:
    """The breaker belongs to one run: the next run tries the endpoint again."""
    build_day(git_repo, DAY, 2)
    kwargs: dict[str, Any] = {
        "repos": (str(git_repo.path),), "day": DAY, "tz": "UTC", "lang": "en",
        "out": str(tmp_path / "out"), "home": str(tmp_path / "home"), "cwd": tmp_path,
        "llm_model": "m",
    }  # fmt: skip
    first = run(build_settings(llm_base_url=dead_url, **kwargs))
    assert first.llm_fallbacks == 2
    with FakeLLM(lambda body, attempt: good(body)) as server:
        second = run(build_settings(llm_base_url=server.base_url, **kwargs))
        assert len(server.chat_requests) == 2
    assert second.ok and second.llm_fallbacks == 0
    md = next(p for p in second.written if p.suffix == ".md").read_text(encoding="utf-8")
    assert "rules + model" in md and "no model analysis" not in md


def _three_repos(tmp_path: Path, url: str) -> Path:
    """A config with three repositories of 4 commits each and a one-at-a-time LLM at ``url``."""
    entries = []
    for name in ("alpha", "beta", "gamma"):
        repo = GitFixture.init(tmp_path / name)
        build_day(repo, DAY, 4)
        entries.append(f'[[repos]]\nsource = "{repo.path}"\nname = "{name}"\n')
    config = tmp_path / "repoherald.toml"
    config.write_text(
        f'[report]\ntz = "UTC"\nlang = "en"\nout = "out"\n\n[llm]\nbase_url = "{url}"\n'
        'model = "m"\nmax_retries = 0\nconcurrency = 1\n\n' + "\n".join(entries),
        encoding="utf-8",
    )
    return config


def test_one_breaker_serves_every_repository_of_a_run(tmp_path: Path, dead_url: str) -> None:
    """The first repository finds the endpoint dead; the two after it do not try it again."""
    config = _three_repos(tmp_path, dead_url)

    def run_repos(home: str, *only: str) -> ServiceResult:
        settings = build_settings(config=str(config), day=DAY, home=str(tmp_path / home))
        return run_all(settings, catch_up=False, only=only)

    (alone,) = run_repos("home-alone", "alpha").outcomes
    assert alone.result is not None
    one_repository = alone.result.llm_requests
    assert one_repository == BREAKER_THRESHOLD

    result = run_repos("home-all")
    sent = [o.result.llm_requests for o in result.outcomes if o.result is not None]
    assert sent == [one_repository, 0, 0]
    assert not result.ok
    assert len(result.failures) == 3
    for name, line in zip(("alpha", "beta", "gamma"), result.failures, strict=True):
        down = f"{name}: LLM endpoint {dead_url} unavailable after 3 consecutive failures"
        assert line.startswith(down), "each repository's line names it"
        assert "4 commits keep their rules analysis" in line
    marker = "LLM unavailable (the endpoint could not be reached)"
    for outcome in result.outcomes:
        assert outcome.result is not None
        md = next(p for p in outcome.result.written if p.suffix == ".md")
        text = md.read_text(encoding="utf-8")
        assert text.count(f"⚠️ {marker}; the rule analysis is shown instead.") == 4, outcome.name
        assert "4 commits have no model analysis" in text
        commits = json.loads(md.with_suffix(".json").read_text("utf-8"))["repos"][0]["commits"]
        assert [c["analysis"]["llm_error"] for c in commits] == [marker] * 4
