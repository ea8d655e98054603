"""The pipeline asks for each new commit's pull request and the report shows it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline.run import RunResult, run
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub

REPO = "acme/widget"
TOKEN = "pr-token-123456"


@pytest.fixture
def server(git_repo: GitFixture) -> Iterator[FakeGitHub]:
    mixed_day(git_repo)
    with FakeGitHub(token=TOKEN) as gh:
        gh.add_repo(REPO, git_repo.path)
        gh.add_pull(
            REPO,
            101,
            [git_repo.rev("main~1")],
            title="Add a table",
            labels=("performance", "needs *review*"),
        )
        yield gh


def report(tmp: Path, repo: GitFixture, gh: FakeGitHub, lang: str = "en") -> RunResult:
    cfg = tmp / "cfg.toml"
    cfg.write_text(
        f'[report]\ntz = "{TZ_NAME}"\nlang = "{lang}"\n\n[github]\napi_url = "{gh.api_url}"\n\n'
        f'[[repos]]\nsource = "{repo.path}"\nname = "{REPO}"\ngithub = "{REPO}"\n'
        f'web_url = "https://github.com/{REPO}"\n',
        encoding="utf-8",
    )
    settings = build_settings(
        config=str(cfg), day=str(DAY), home=str(tmp / "home"), out=str(tmp / f"out-{lang}")
    )
    return run(settings)


def written(result: RunResult, suffix: str) -> str:
    return next(p for p in result.written if p.suffix == suffix).read_text(encoding="utf-8")


def by_sha(result: RunResult) -> dict[str, dict[str, Any]]:
    data = json.loads(written(result, ".json"))
    return {c["sha"]: c for c in data["repos"][0]["commits"]}


def test_the_pull_request_is_fetched_stored_and_shown_with_its_labels(
    git_repo: GitFixture, server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    first = report(tmp_path, git_repo, server)
    assert first.failures == []
    c = by_sha(first)[git_repo.rev("main~1")]
    assert c["pr_number"] == 101 and c["pr_url"].endswith("/web/acme/widget/pull/101")
    assert c["pr_labels"] == ["performance", "needs *review*"]
    assert c["facts"]["pull_request"]["title"] == "Add a table"
    assert by_sha(first)[git_repo.rev("main~2")]["facts"]["pull_request"] is None
    text = written(first, ".md")
    assert f"[PR #101]({c['pr_url']})" in text
    assert "**Labels**: `performance`, `needs *review*`" in text
    assert "Pull-request context" not in text
    # A re-run reads the PR with the facts from the store and asks GitHub nothing.
    server.clear()
    again = report(tmp_path, git_repo, server)
    assert server.requests == []
    assert by_sha(again)[git_repo.rev("main~1")]["pr_labels"] == c["pr_labels"]


def test_a_failed_pull_request_fetch_costs_only_the_context_and_is_named(
    git_repo: GitFixture, server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    # GraphQL refused, so the context goes through REST, which answers garbage.
    server.fault(r"/graphql", "status", status=403, times=1)
    server.fault(r"/commits/[0-9a-f]{40}/pulls", "garbage", times=1)
    first = report(tmp_path, git_repo, server)
    (failure,) = first.failures
    assert "pull request context missing for 10 commits" in failure
    commits = by_sha(first)
    assert len(commits) == 10 and not any(c["analysis"]["error"] for c in commits.values())
    assert all(c["facts"]["pull_request"] is None for c in commits.values())
    # Those commits were not cached without their PR: the next run asks again.
    again = report(tmp_path, git_repo, server)
    assert again.failures == []
    assert by_sha(again)[git_repo.rev("main~1")]["pr_labels"] == ["performance", "needs *review*"]


@pytest.mark.parametrize(
    ("lang", "line"), [("en", "Pull-request context"), ("zh", "拉取请求上下文")]
)
def test_without_a_token_the_report_says_it_ran_without_pr_context(
    git_repo: GitFixture,
    server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    line: str,
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    result = report(tmp_path, git_repo, server, lang)
    assert server.requests == []
    text = written(result, ".md")
    assert text.count(line) == 1
    assert "GITHUB_TOKEN" in text
    assert all(c["pr_labels"] == [] for c in by_sha(result).values())
