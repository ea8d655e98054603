"""The model reads each file's own patch from a ``github:`` source.

GitHub sends every file's hunks with its file. When they were glued into one
git-style text and cut again at ``diff --git`` lines, a path holding a newline
and ``diff --git`` (git allows both) made extra cuts, and every later file was
paired with another file's hunks: the model read the wrong code under the right
name. Per-file patches as data cannot shift.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture
from tests.github_server import FakeGitHub
from tests.integration.test_llm import good
from tests.llm_server import FakeLLM, last_user_message

REPO = "acme/widget"
DAY = "2026-05-01"


def test_a_path_that_looks_like_a_diff_header_shifts_no_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    fx = GitFixture.init(tmp_path / "repo")
    fx.write("pkg/real.py", "def run(a):\n    return a\n")
    fx.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    fx.write("notes\ndiff --git a/x b/x", "just notes\n")
    fx.write("pkg/real.py", "def run(a, b=1):\n    return a + b  # THE CHANGE\n")
    fx.commit("Two files", when=f"{DAY}T01:00:00+00:00")
    with FakeGitHub() as gh, FakeLLM(lambda body, attempt: good(body)) as llm:
        gh.add_repo(REPO, fx.path)
        config = tmp_path / "repoherald.toml"
        config.write_text(
            f'[github]\napi_url = "{gh.api_url}"\n\n[llm]\nmax_retries = 0\n\n'
            f'[[repos]]\nsource = "github:{REPO}"\n',
            encoding="utf-8",
        )
        result = run(build_settings(
            config=str(config), day=DAY, tz="UTC", lang="en", out=str(tmp_path / "out"),
            home=str(tmp_path / "home"), cwd=tmp_path, llm_base_url=llm.base_url,
            llm_model="m", llm_concurrency=1,
        ))  # fmt: skip
        prompts = [last_user_message(r.body) for r in llm.requests if r.key]
    assert result.failures == []
    (prompt,) = [p for p in prompts if "Two files" in p]
    section = prompt.split("=== pkg/real.py (modified", 1)[1].split("\n===", 1)[0]
    assert "+    return a + b  # THE CHANGE" in section
    assert "just notes" not in section
