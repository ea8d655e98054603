"""Small things a user hits on the command line and in the config file."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime
from pathlib import Path

from tests.gitfixture import GitFixture, run_repoherald

ROOT = Path(__file__).parents[2]


def _repo(tmp_path: Path) -> GitFixture:
    fx = GitFixture.init(tmp_path / "proj")
    fx.write("app.py", "def app():\n    pass\n")
    fx.commit("Add app", when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    return fx


def test_unknown_config_key_suggests_the_known_one(tmp_path: Path) -> None:
    _repo(tmp_path)
    (tmp_path / "repoherald.toml").write_text('[[repos]]\nsource = "proj"\nbrnach = "main"\n')
    proc = run_repoherald("report", "--home", str(tmp_path / "h"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("did you mean 'branch'?"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_name_and_web_url_flags_match_the_config_keys(tmp_path: Path) -> None:
    _repo(tmp_path)
    proc = run_repoherald(
        "report", "--repo", "proj", "--name", "acme/widgets", "--web-url",
        "https://github.com/acme/widgets", "--date", "2025-06-10", "--tz", "UTC",
        "--home", str(tmp_path / "h"), "--out", str(tmp_path / "out"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    twin = json.loads((tmp_path / "out/2025/widgets/2025-06-10.json").read_text())
    assert twin["repos"][0]["name"] == "acme/widgets"
    assert twin["repos"][0]["web_url"] == "https://github.com/acme/widgets"
    md = (tmp_path / "out/2025/widgets/2025-06-10.md").read_text()
    assert "https://github.com/acme/widgets/commit/" in md


def test_name_needs_exactly_one_repo(tmp_path: Path) -> None:
    _repo(tmp_path)
    proc = run_repoherald(
        "report", "--repo", "proj", "--repo", "proj2", "--name", "x", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "exactly one --repo" in proc.stderr


def test_bad_web_url_flag_is_a_usage_error(tmp_path: Path) -> None:
    _repo(tmp_path)
    proc = run_repoherald(
        "report", "--repo", "proj", "--web-url", "javascript:alert(1)", cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "--web-url" in proc.stderr


def test_future_day_exits_2_without_analysing(tmp_path: Path) -> None:
    _repo(tmp_path)
    proc = run_repoherald(
        "report", "--repo", "proj", "--date", "2999-01-01", "--home", str(tmp_path / "h"),
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "has not started yet" in proc.stderr
    assert not (tmp_path / "reports").exists()


def test_license_is_an_spdx_expression() -> None:
    """The table form stops working in setuptools after 2027-02-18."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "Apache-2.0"


def test_today_is_marked_partial_and_yesterday_is_not(tmp_path: Path) -> None:
    fx = GitFixture.init(tmp_path / "proj")
    fx.write("app.py", "x = 1\n")
    fx.commit("Add app", when=datetime.now(UTC))
    common = ("report", "--repo", "proj", "--tz", "UTC", "--home", str(tmp_path / "h"))
    today = run_repoherald(*common, "--date", "today", "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert today.returncode == 0, today.stderr
    md = next((tmp_path / "a").glob("*/*/*.md")).read_text()
    assert "今天尚未结束" in md
    assert json.loads(next((tmp_path / "a").glob("*/*/*.json")).read_text())["as_of"]
    older = run_repoherald(
        *common, "--date", "yesterday", "--out", str(tmp_path / "b"), cwd=tmp_path
    )
    assert older.returncode == 0, older.stderr
    assert "今天尚未结束" not in next((tmp_path / "b").glob("*/*/*.md")).read_text()
    assert json.loads(next((tmp_path / "b").glob("*/*/*.json")).read_text())["as_of"] is None


def test_damaged_store_says_rebuild_and_rebuild_recovers(tmp_path: Path) -> None:
    _repo(tmp_path)
    home = tmp_path / "h"
    common = (
        "report",
        "--repo",
        "proj",
        "--date",
        "2025-06-10",
        "--tz",
        "UTC",
        "--home",
        str(home),
    )
    assert run_repoherald(*common, cwd=tmp_path).returncode == 0
    (home / "repoherald.db").write_bytes(b"this is not a database" * 100)
    broken = run_repoherald(*common, cwd=tmp_path)
    assert broken.returncode == 1
    assert "--rebuild" in broken.stderr and "Traceback" not in broken.stderr
    rebuilt = run_repoherald(*common, "--rebuild", cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert list(home.glob("repoherald.db.broken-*"))


def test_no_cache_analyses_again(tmp_path: Path) -> None:
    _repo(tmp_path)
    common = ("report", "--repo", "proj", "--date", "2025-06-10", "--tz", "UTC",
              "--home", str(tmp_path / "h"))  # fmt: skip
    run_repoherald(*common, cwd=tmp_path)
    cached = run_repoherald(*common, cwd=tmp_path)
    assert "(0 analysed, 1 from cache)" in cached.stderr
    fresh = run_repoherald(*common, "--no-cache", cwd=tmp_path)
    assert "(1 analysed, 0 from cache)" in fresh.stderr, fresh.stderr


def test_misspelled_required_key_suggests_the_known_one(tmp_path: Path) -> None:
    _repo(tmp_path)
    (tmp_path / "repoherald.toml").write_text('[[repos]]\nsoruce = "proj"\n')
    proc = run_repoherald("report", "--home", str(tmp_path / "h"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "repos.0.soruce" in proc.stderr
    assert proc.stderr.strip().endswith("did you mean 'source'?"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_unknown_branch_lists_the_closest_names_first_and_the_default(tmp_path: Path) -> None:
    fx = _repo(tmp_path)
    for name in [f"feature-{c}" for c in "abcdefghijk"] + ["maint"]:
        fx.git("branch", name)  # eleven names sort before `main`
    proc = run_repoherald(
        "report", "--repo", "proj", "--branch", "mian", "--home", str(tmp_path / "h"),
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "unknown branch 'mian'" in line
    assert "did you mean 'main'?" in line
    assert "the default branch is 'main'" in line
    assert line.split("branches: ", 1)[1].startswith("main, maint, "), line
    assert line.endswith("and 3 more"), line


def test_progress_says_which_day_of_how_many(tmp_path: Path) -> None:
    fx = _repo(tmp_path)  # one commit on 2025-06-10
    for n, day in enumerate((11, 12)):
        fx.write(f"m{n}.py", f"X = {n}\n")
        fx.commit(f"Add m{n}", when=datetime(2025, 6, day, 9, tzinfo=UTC))
    proc = run_repoherald(
        "report", "--repo", "proj", "--since", "2025-06-10", "--until", "2025-06-12",
        "--tz", "UTC", "--home", str(tmp_path / "h"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    progress = [ln for ln in proc.stderr.splitlines() if "analysing" in ln]
    assert progress == [
        f"proj 2025-06-1{d} ({d + 1}/3): analysing 1 commit (0 cached)" for d in range(3)
    ], proc.stderr
