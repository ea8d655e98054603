"""Day windows are local calendar days, including the 23- and 25-hour ones."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

from repoherald.config import build_settings
from repoherald.pipeline import Window, run

NY = ZoneInfo("America/New_York")


def test_dst_days_are_23_and_25_hours() -> None:
    spring = Window.for_day(date(2026, 3, 8), NY)
    autumn = Window.for_day(date(2026, 11, 1), NY)
    assert spring.end_ts - spring.start_ts == 23 * 3600
    assert autumn.end_ts - autumn.start_ts == 25 * 3600


def test_commits_in_the_repeated_hour_belong_to_the_day(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    # 01:30 happens twice on 2026-11-01 in New York (EDT then EST); 23:30 is
    # the last half hour of that 25-hour day; 00:10 the next day is outside.
    stamps = [
        "2026-11-01T05:30:00+00:00",
        "2026-11-01T06:30:00+00:00",
        "2026-11-02T04:30:00+00:00",
        "2026-11-02T05:10:00+00:00",
    ]
    for i, when in enumerate(stamps):
        (repo / "f.txt").write_text(str(i), encoding="utf-8")
        env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
               "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
               "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}  # fmt: skip
        subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(repo), "commit", "-qm", f"c{i}"], check=True, env=env)
    settings = build_settings(
        repos=(str(repo),), day="2026-11-01", tz="America/New_York", lang="en",
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    result = run(settings)
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    assert [c["title"] for c in twin["repos"][0]["commits"]] == ["c2", "c1", "c0"]
    assert twin["window"] == {
        "start": "2026-11-01T00:00:00-04:00",
        "end": "2026-11-02T00:00:00-05:00",
    }
