"""A repository-day fetched from a slow GitHub stops at ``[github] stage_timeout``, alone.

Every request of a slow server stays under its own deadline, so only the
stage's budget bounds the day: past it, that repository-day fails with one
line and the other repositories are reported. Outcomes are asserted, not
durations; the loopback server's delays only make the budget run out.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline.run import RunResult, run
from tests.gitfixture import GitFixture, run_repoherald
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub

DAY_FETCH = r"/repos/acme/alpha/(commits/[0-9a-f]{40}|git/)"
"""The requests of alpha's day (commit details, trees, blobs), not its history listing."""


@pytest.fixture
def github(tmp_path: Path) -> Any:
    with FakeGitHub() as gh:
        for name in ("alpha", "beta"):
            fx = GitFixture.init(tmp_path / f"{name}-src")
            mixed_day(fx)
            gh.add_repo(f"acme/{name}", fx.path)
        yield gh


def _config(tmp: Path, gh: FakeGitHub, github_extra: str) -> Path:
    cfg = tmp / "repoherald.toml"
    cfg.write_text(
        f'[report]\ntz = "{TZ_NAME}"\nlang = "en"\nname = "stack"\n\n'
        f'[github]\napi_url = "{gh.api_url}"\n{github_extra}\n'
        '[[repos]]\nsource = "github:acme/alpha"\nname = "alpha"\n\n'
        '[[repos]]\nsource = "github:acme/beta"\nname = "beta"\n',
        encoding="utf-8",
    )
    return cfg


def _report(tmp: Path, gh: FakeGitHub, github_extra: str) -> RunResult:
    cfg = _config(tmp, gh, github_extra)
    settings = build_settings(
        config=str(cfg), day=str(DAY), home=str(tmp / "home"), out=str(tmp / "out")
    )
    return run(settings)


def _sections(result: RunResult) -> dict[str, dict[str, Any]]:
    path = next(p for p in result.written if p.suffix == ".json")
    return {r["name"]: r for r in json.loads(path.read_text(encoding="utf-8"))["repos"]}


def test_a_slow_repository_day_fails_at_its_budget_and_the_others_are_reported(
    github: FakeGitHub, tmp_path: Path
) -> None:
    github.slow(DAY_FETCH, 0.5)
    result = _report(tmp_path, github, "stage_timeout = 1.5\n")
    sections = _sections(result)
    error = sections["alpha"]["error"]
    assert error.startswith(f"GitHub fetch of alpha {DAY} took longer than 1.5 s")
    assert "[github] stage_timeout" in error and sections["alpha"]["commits"] == []
    assert len(sections["beta"]["commits"]) == 10 and sections["beta"]["error"] is None
    assert result.failures == [error] and not result.ok


def test_a_wait_that_would_outlast_the_budget_is_not_started(
    github: FakeGitHub, tmp_path: Path
) -> None:
    """A secondary rate limit asking for 200 s (allowed by max_wait_seconds) ends the day at
    once when only 20 s of its budget are left, instead of sleeping past it."""
    github.fault(DAY_FETCH, "secondary", times=1, retry_after=200)
    started = time.monotonic()
    result = _report(tmp_path, github, "stage_timeout = 20\nmax_wait_seconds = 600\n")
    assert time.monotonic() - started < 150  # generous: the wait asked for is 200 s
    error = _sections(result)["alpha"]["error"]
    assert error.startswith(f"GitHub fetch of alpha {DAY} took longer than 20 s")
    assert "a wait of 200 s would not fit" in error
    assert len(_sections(result)["beta"]["commits"]) == 10


def test_run_says_one_line_for_the_slow_repository_and_reports_the_other(
    github: FakeGitHub, tmp_path: Path
) -> None:
    github.slow(DAY_FETCH, 0.5)
    _config(tmp_path, github, "stage_timeout = 1.5\n")
    proc = run_repoherald("run", "--date", str(DAY), "--home", str(tmp_path / "h"), cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "took longer than" in line]
    assert len(lines) == 1, proc.stderr
    assert f"GitHub fetch of alpha {DAY} took longer than 1.5 s" in lines[0]
    assert (tmp_path / f"reports/{DAY.year}/beta/{DAY}.en.json").is_file()
    assert not (tmp_path / f"reports/{DAY.year}/alpha/{DAY}.en.json").exists()
