"""A commit dated at the edge of time (year 9999 or 10000 in its own zone) is shown, not fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture


@pytest.mark.parametrize(
    "author_date", ["@253402300799 +1400", "@253402300799 -1200", "@99999999999999 +0000"]
)
def test_a_commit_authored_at_the_end_or_start_of_time_is_reported(
    tmp_path: Path, author_date: str
) -> None:
    fx = GitFixture.init(tmp_path / "repo")
    fx.write("a.py", "A = 1\n")
    fx.commit("Initial import", when="2026-03-01T10:00:00+00:00")
    fx.write("b.py", "B = 1\n")
    fx.commit("From the far future", when=author_date, committed="2026-03-01T11:00:00+00:00")
    settings = build_settings(
        day="2026-03-01", tz="Asia/Shanghai", lang="en", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, no_llm=True, repos=(str(fx.path),),
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    titles = [c["title"] for c in twin["repos"][0]["commits"]]
    assert titles == ["From the far future", "Initial import"]
