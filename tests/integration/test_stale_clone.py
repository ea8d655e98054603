"""A local clone is never fetched: "no commits" on a day long after its newest commit says why."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.gitfixture import GitFixture, run_repoherald

NEWEST = datetime(2025, 6, 1, 9, tzinfo=UTC)


@pytest.fixture
def clone(tmp_path: Path) -> GitFixture:
    fx = GitFixture.init(tmp_path / "proj")
    fx.write("a.py", "x = 1\n")
    fx.commit("feat: a", when=datetime(2025, 5, 30, 9, tzinfo=UTC))
    fx.write("b.py", "y = 2\n")
    fx.commit("feat: b", when=NEWEST)
    return fx


def report(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_repoherald(
        "report", "--repo", source, "--tz", "UTC", "--out", str(tmp_path / "out"),
        "--home", str(tmp_path / "home"), *args, cwd=tmp_path,
    )  # fmt: skip


def notes(tmp_path: Path, day: str) -> list[str]:
    (twin,) = (tmp_path / "out").rglob(f"{day}*.json")  # .en.json for English
    notes: list[str] = json.loads(twin.read_text(encoding="utf-8"))["repos"][0]["notes"]
    return notes


def stale_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if "may be out of date" in ln]


def test_stale_local_clone_is_said_on_stderr_and_in_the_report(
    tmp_path: Path, clone: GitFixture
) -> None:
    proc = report(tmp_path, str(clone.path), "--date", "2025-06-10", "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    (line,) = stale_lines(proc)
    assert "2025-06-01" in line and "main" in line and "git pull" in line
    (note,) = notes(tmp_path, "2025-06-10")
    assert "2025-06-01" in note and "git pull" in note
    (md,) = (tmp_path / "out").rglob("2025-06-10.en.md")
    text = md.read_text(encoding="utf-8")
    heading = text.index("\n## proj\n")
    assert (
        text[heading:].split("\n")[3].startswith("> The newest commit on main is from 2025-06-01")
    )


def test_chinese_report_says_it_in_chinese(tmp_path: Path, clone: GitFixture) -> None:
    proc = report(tmp_path, str(clone.path), "--date", "2025-06-10")
    assert proc.returncode == 0, proc.stderr
    (note,) = notes(tmp_path, "2025-06-10")
    assert "2025-06-01" in note and "本地克隆" in note
    (md,) = (tmp_path / "out").rglob("2025-06-10.md")
    assert f"> {note[:10]}" in md.read_text(encoding="utf-8")


def test_range_says_it_once_and_only_on_days_well_after(tmp_path: Path, clone: GitFixture) -> None:
    proc = report(tmp_path, str(clone.path), "--since", "2025-06-01", "--until", "2025-06-05")
    assert proc.returncode == 0, proc.stderr
    assert len(stale_lines(proc)) == 1
    assert [bool(notes(tmp_path, f"2025-06-0{d}")) for d in range(1, 6)] == [
        False, False, False, True, True,
    ]  # fmt: skip


def test_recent_clone_and_fetched_mirror_say_nothing(tmp_path: Path, clone: GitFixture) -> None:
    recent = report(tmp_path, str(clone.path), "--date", "2025-06-03")
    assert recent.returncode == 0 and stale_lines(recent) == [], recent.stderr
    assert notes(tmp_path, "2025-06-03") == []
    fetched = report(tmp_path, clone.path.as_uri(), "--date", "2025-06-10", "--out", "out2")
    assert fetched.returncode == 0 and stale_lines(fetched) == [], fetched.stderr
