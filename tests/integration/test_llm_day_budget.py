"""``token_budget_per_day``: each repository-day has its own allowance, within the run's budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repoherald.config import build_settings
from repoherald.pipeline import run
from repoherald.pipeline.run import RunResult
from tests.gitfixture import GitFixture
from tests.integration.test_llm import good
from tests.llm_server import FakeLLM

DAYS = ("2026-05-01", "2026-05-02")
ALLOWANCE = 4000
"""More than one of these commits' requests reserves, less than three."""


def two_days(repo: GitFixture) -> None:
    for day in DAYS:
        for i in range(3):
            repo.write(f"src/app/mod_{day}_{i}.py", f"def f_{i}(x):\n    return x + {i}\n")
            repo.commit(f"Add module {i} of {day}", when=f"{day}T0{i + 1}:00:00+00:00")


def report(tmp_path: Path, repo: GitFixture, server: FakeLLM, toml: str) -> RunResult:
    config = tmp_path / "repoherald.toml"
    config.write_text(f"[llm]\nmax_retries = 0\n{toml}", encoding="utf-8")
    settings = build_settings(
        repos=(str(repo.path),), since=DAYS[0], until=DAYS[1], tz="UTC", lang="en",
        config=str(config), out=str(tmp_path / "out"), home=str(tmp_path / "home"),
        cwd=tmp_path, llm_base_url=server.base_url, llm_model="m", llm_concurrency=1,
    )  # fmt: skip
    return run(settings)


def by_day(result: RunResult) -> dict[str, list[dict[str, Any]]]:
    """Each day's commit analyses."""
    out = {}
    for path in (p for p in result.written if p.suffix == ".json"):
        twin = json.loads(path.read_text(encoding="utf-8"))
        out[twin["date"]] = [c["analysis"] for c in twin["repos"][0]["commits"]]
    return out


def test_each_day_gets_its_own_allowance(git_repo: GitFixture, tmp_path: Path) -> None:
    two_days(git_repo)
    with FakeLLM(lambda body, attempt: good(body)) as server:
        result = report(tmp_path, git_repo, server, f"token_budget_per_day = {ALLOWANCE}\n")
        sent = len(server.chat_requests)
    days = by_day(result)
    for day in DAYS:
        modelled = [a for a in days[day] if a["analyser"].startswith("llm/")]
        refused = [a for a in days[day] if "repository-day" in a["llm_error"]]
        assert 0 < len(modelled) < 3, day
        assert len(modelled) + len(refused) == 3, day
        assert sum(sum(a["usage"]) for a in modelled) <= ALLOWANCE
    assert sent == sum(1 for d in days.values() for a in d if a["analyser"].startswith("llm/"))
    assert result.llm_requests == sent, "the days' requests are counted in the run's"
    assert sum(result.llm_tokens) == sum(sum(a["usage"]) for d in days.values() for a in d)
    assert not result.ok, "commits left without their model analysis fail the run"


def test_the_run_budget_still_bounds_the_days(git_repo: GitFixture, tmp_path: Path) -> None:
    """The run's budget spent on the first day leaves the second none, allowance or not."""
    two_days(git_repo)
    toml = f"token_budget = {ALLOWANCE}\ntoken_budget_per_day = {ALLOWANCE}\n"
    with FakeLLM(lambda body, attempt: good(body)) as server:
        result = report(tmp_path, git_repo, server, toml)
    days = by_day(result)
    assert any(a["analyser"].startswith("llm/") for a in days[DAYS[0]])
    assert not any(a["analyser"].startswith("llm/") for a in days[DAYS[1]])
    assert sum(result.llm_tokens) <= ALLOWANCE
