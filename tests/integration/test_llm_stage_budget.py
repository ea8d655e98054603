"""``[llm] stage_timeout``: the LLM stage of a run stops when its time is used up.

A slow endpoint answers every request within its deadline; only the stage's
budget bounds their sum. The commits it does not reach keep their rules
analysis, marked, like a used-up token budget. The loopback server's latency
makes the budget run out; the tests assert outcomes, not durations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture, run_repoherald
from tests.integration.test_llm import good
from tests.integration.test_llm_day_budget import DAYS, by_day, two_days
from tests.llm_server import FakeLLM

LATENCY = 0.6
BUDGET = 1.5
"""Less than the first day's three requests in a row take (3 x 0.6 s)."""
MARK = f"LLM stage time budget of {BUDGET:g} s used up"


def test_commits_past_the_stage_budget_keep_their_rules_analysis(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    two_days(git_repo)
    config = tmp_path / "repoherald.toml"
    config.write_text(f"[llm]\nmax_retries = 0\nstage_timeout = {BUDGET}\n", encoding="utf-8")
    with FakeLLM(lambda body, attempt: good(body), latency=LATENCY) as server:
        settings = build_settings(
            repos=(str(git_repo.path),), since=DAYS[0], until=DAYS[1], tz="UTC", lang="en",
            config=str(config), out=str(tmp_path / "out"), home=str(tmp_path / "home"),
            cwd=tmp_path, llm_base_url=server.base_url, llm_model="m", llm_concurrency=1,
        )  # fmt: skip
        result = run(settings)
        sent = len(server.chat_requests)
    days = by_day(result)
    first, second = days[DAYS[0]], days[DAYS[1]]
    assert any(MARK in a["llm_error"] for a in first), first  # cut on the first day
    assert all(a["analyser"].startswith("llm/") or MARK in a["llm_error"] for a in first)
    assert all(not a["analyser"].startswith("llm/") and MARK in a["llm_error"] for a in second)
    assert sent <= 3, "nothing is sent once the stage's time is used up"
    assert any(MARK in line for line in result.failures) and not result.ok


def _repo(path: Path) -> GitFixture:
    """Two days of commits; a first commit naming the repository makes its SHAs its own."""
    fx = GitFixture.init(path)
    fx.write("README.md", f"# {path.name}\n")
    fx.commit(f"Start {path.name}", when="2026-04-01T01:00:00+00:00")
    two_days(fx)
    return fx


def _analyses(tmp: Path, name: str) -> list[dict[str, Any]]:
    twin = tmp / f"reports/2026/{name}/{DAYS[0]}.en.json"
    return [c["analysis"] for c in json.loads(twin.read_text("utf-8"))["repos"][0]["commits"]]


def test_run_shares_the_budget_across_repositories(tmp_path: Path) -> None:
    """The budget bounds the whole `run`: the repository after the one that used it up
    sends the endpoint nothing."""
    for name in ("alpha", "beta"):
        _repo(tmp_path / name)
    with FakeLLM(lambda body, attempt: good(body), latency=LATENCY) as server:
        (tmp_path / "repoherald.toml").write_text(
            f'[report]\ntz = "UTC"\nlang = "en"\n\n'
            f'[llm]\nbase_url = "{server.base_url}"\nmodel = "m"\nconcurrency = 1\n'
            f"max_retries = 0\nstage_timeout = {BUDGET}\n\n"
            '[[repos]]\nsource = "alpha"\n\n[[repos]]\nsource = "beta"\n',
            encoding="utf-8",
        )
        proc = run_repoherald("run", "--date", DAYS[0], "--home", str(tmp_path / "h"), cwd=tmp_path)
        sent = len(server.chat_requests)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    alpha, beta = _analyses(tmp_path, "alpha"), _analyses(tmp_path, "beta")
    assert any(MARK in a["llm_error"] for a in alpha)
    assert all(MARK in a["llm_error"] for a in beta) and len(beta) == 3
    assert sent <= 3
    assert MARK in proc.stderr
