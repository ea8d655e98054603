"""The report's header says who judged importance: the rules alone, or how many commits a model.

A rules-only 🔴 must not pass for a model's: with no [llm], with --no-llm, or
when every request failed, the header says the rules judged alone; when a
model analysed some commits, it says how many of how many, and which model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture
from tests.integration.test_llm import good
from tests.llm_server import FakeLLM, Reply, last_user_message, server_error

DAY = "2026-05-01"


def three_commits(repo: GitFixture) -> None:
    for i, title in enumerate(("Add the parser", "Fix the loader", "Speed up the cache")):
        repo.write(f"src/app/mod_{i}.py", f"def f_{i}(x):\n    return x + {i}\n")
        repo.commit(title, when=f"{DAY}T0{i + 1}:00:00+00:00")


def report(tmp_path: Path, repo: GitFixture, lang: str, **kw: Any) -> tuple[str, dict[str, Any]]:
    settings = build_settings(
        repos=(str(repo.path),), day=DAY, tz="UTC", lang=lang, out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, **kw,
    )  # fmt: skip
    result = run(settings)
    md = next(p for p in result.written if p.suffix == ".md").read_text("utf-8")
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    return md.splitlines()[2], twin


def test_without_a_model_the_header_says_rules_alone(git_repo: GitFixture, tmp_path: Path) -> None:
    three_commits(git_repo)
    header, twin = report(tmp_path, git_repo, "en")
    assert "**" not in header and "Analysis: importance judged by rules alone (rules/" in header
    assert "); no model ran" in header
    assert twin["judged_by"] == {
        "rules_only": True, "models": [], "model_commits": 0, "commits": 3,
    }  # fmt: skip


def test_no_llm_says_rules_alone_in_chinese(git_repo: GitFixture, tmp_path: Path) -> None:
    three_commits(git_repo)
    config = tmp_path / "repoherald.toml"
    config.write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n', "utf-8")
    header, twin = report(tmp_path, git_repo, "zh", config=str(config), no_llm=True)
    assert "分析方式：重要性仅由规则判断（rules/" in header and "未运行模型" in header
    assert twin["judged_by"]["rules_only"] is True


def test_a_model_for_some_commits_says_how_many_of_how_many(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    three_commits(git_repo)
    config = tmp_path / "repoherald.toml"
    config.write_text("[llm]\nmax_retries = 0\n", "utf-8")

    def answer(body: dict[str, Any], attempt: int) -> Reply:
        return server_error(500) if "Fix the loader" in last_user_message(body) else good(body)

    with FakeLLM(answer) as server:
        header, twin = report(
            tmp_path, git_repo, "zh", config=str(config), llm_base_url=server.base_url,
            llm_model="Qwen/Qwen2.5-7B-Instruct",
        )  # fmt: skip
    assert "分析方式：规则 + 模型：3 个提交中 2 个由 Qwen/Qwen2.5-7B-Instruct 判断" in header
    assert "1 个提交没有模型分析" in header
    assert twin["judged_by"] == {
        "rules_only": False, "models": ["Qwen/Qwen2.5-7B-Instruct"], "model_commits": 2,
        "commits": 3,
    }  # fmt: skip
