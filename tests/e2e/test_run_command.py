"""``repoherald run``: every [[repos]] entry, one report per repository-day, contained failures."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.pipeline.service import Shard, catch_up_days, run_all, select_repos
from tests.gitfixture import GitFixture, run_repoherald

TODAY = datetime.now(UTC).date()
YESTERDAY = TODAY - timedelta(days=1)


def _repo(path: Path, title: str, days_ago: list[int]) -> GitFixture:
    fx = GitFixture.init(path)
    for i, ago in enumerate(sorted(days_ago, reverse=True)):
        fx.write(f"mod_{i}.py", f"def f{i}():\n    return {i}\n")
        when = datetime.combine(TODAY - timedelta(days=ago), datetime.min.time(), UTC)
        fx.commit(f"{title} {i}", when=when + timedelta(hours=12))
    return fx


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    _repo(tmp_path / "alpha", "Alpha change", [1, 2, 3])
    _repo(tmp_path / "beta", "Beta change", [1])
    (tmp_path / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\n\n'
        '[[repos]]\nsource = "alpha"\n\n'
        '[[repos]]\nsource = "beta"\nlang = "en"\n\n'
        '[[repos]]\nsource = "missing-dir"\nname = "ghost"\n',
        encoding="utf-8",
    )
    return tmp_path


def _run(ws: Path, *args: str) -> tuple[int, str, str]:
    proc = run_repoherald("run", "--home", str(ws / "home"), *args, cwd=ws)
    return proc.returncode, proc.stdout, proc.stderr


def test_one_report_per_repository_day_and_a_broken_repository_is_contained(
    workspace: Path,
) -> None:
    code, out, err = _run(workspace)
    assert code == 1, err
    year = YESTERDAY.year
    alpha = workspace / f"reports/{year}/alpha/{YESTERDAY}.md"
    beta = workspace / f"reports/{year}/beta/{YESTERDAY}.en.md"  # not the main language
    assert alpha.is_file() and beta.is_file()
    assert str(alpha) in out and str(beta) in out
    assert "ghost" in err and "failed" in err
    # Per-repository language: beta asked for English.
    assert json.loads(beta.with_suffix(".json").read_text())["lang"] == "en"
    assert json.loads(alpha.with_suffix(".json").read_text())["lang"] == "zh"
    assert "Traceback" not in err


def test_catch_up_reports_missed_days_then_is_up_to_date(workspace: Path) -> None:
    _run(workspace, "--only", "alpha", "--date", (TODAY - timedelta(days=3)).isoformat())
    code, _, err = _run(workspace, "--only", "alpha")
    assert code == 0, err
    folder = workspace / f"reports/{YESTERDAY.year}/alpha"
    days = sorted(p.stem for p in folder.glob("*.md"))
    wanted = sorted((TODAY - timedelta(days=n)).isoformat() for n in (3, 2, 1))
    assert [d for d in days if d in wanted] == wanted
    code, _, err = _run(workspace, "--only", "alpha")
    assert code == 0
    assert "alpha: up to date" in err


def test_only_names_an_unknown_repository(workspace: Path) -> None:
    code, _, err = _run(workspace, "--only", "gamma")
    assert code == 2
    assert "--only 'gamma' is not a configured repository" in err


def test_shards_partition_the_repositories(workspace: Path) -> None:
    settings = build_settings(cwd=workspace, home=str(workspace / "home"))
    names = [
        {
            r.config.source.rsplit("/", 1)[-1]
            for r in select_repos(settings.repos, shard=Shard(i, 3))
        }
        for i in (1, 2, 3)
    ]
    assert sum(len(n) for n in names) == 3
    assert set().union(*names) == {"alpha", "beta", "missing-dir"}
    assert Shard.parse("2/3") == Shard(2, 3)


def test_shards_deal_the_repositories_evenly(workspace: Path) -> None:
    """Dealt round-robin after a stable sort, not hashed to a slot: with two repositories
    and two shards, each shard gets one (by name hash, 1/2 got none and 2/2 both)."""
    settings = build_settings(cwd=workspace, home=str(workspace / "home"))
    for repos in (settings.repos[:2], settings.repos):
        for count in range(1, len(repos) + 2):
            sizes = [len(select_repos(repos, shard=Shard(i, count))) for i in range(1, count + 1)]
            assert sum(sizes) == len(repos)
            assert max(sizes) - min(sizes) <= 1, (len(repos), count, sizes)


@pytest.mark.parametrize("bad", ["0/3", "4/3", "x", "1/0"])
def test_bad_shard_is_a_usage_error(workspace: Path, bad: str) -> None:
    code, _, err = _run(workspace, "--shard", bad)
    assert code == 2
    assert "--shard" in err


def test_catch_up_is_capped_and_says_what_it_skipped() -> None:
    days, note = catch_up_days(date(2026, 8, 1), date(2026, 8, 20), 7)
    assert days[0] == date(2026, 8, 13) and days[-1] == date(2026, 8, 19)
    assert note is not None and "--since 2026-08-02 --until 2026-08-12" in note
    assert catch_up_days(None, date(2026, 8, 20), 7) == ((date(2026, 8, 19),), None)
    assert catch_up_days(date(2026, 8, 19), date(2026, 8, 20), 7) == ((), None)


def test_library_run_all_contains_failures(workspace: Path) -> None:
    settings = build_settings(cwd=workspace, home=str(workspace / "home"))
    result = run_all(settings, catch_up=True)
    assert [o.name for o in result.outcomes] == ["alpha", "beta", "ghost"]
    assert not result.ok
    missing = workspace / "missing-dir"
    assert result.failures == [
        f"ghost: repository path {missing} does not exist: check the repository's source setting"
    ]
