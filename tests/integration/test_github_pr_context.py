"""Pull-request context for a git source, through the same GitHub client and test server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repoherald.config import GitHubSettings, RepoConfig
from repoherald.sources import registry
from repoherald.sources.base import SourceContext
from repoherald.store.etags import MemoryEtags
from tests.gitfixture import GitFixture
from tests.github_day import mixed_day
from tests.github_server import FakeGitHub


@pytest.fixture
def server(git_repo: GitFixture) -> Iterator[FakeGitHub]:
    mixed_day(git_repo)
    with FakeGitHub(token="pr-token-123456") as gh:
        gh.add_repo("acme/widget", git_repo.path)
        gh.add_pull(
            "acme/widget",
            101,
            [git_repo.rev("main~1")],
            title="Add a table",
            labels=("performance",),
            merged_by="cid",
        )
        yield gh


def context(server: FakeGitHub, tmp_path: Path) -> SourceContext:
    return SourceContext(
        mirrors_dir=tmp_path / "mirrors",
        earliest=0,
        github=GitHubSettings(api_url=server.api_url),
        etags=MemoryEtags(),
    )


@pytest.mark.parametrize(
    "extra",
    [{"github": "acme/widget"}, {"web_url": "http://127.0.0.1/acme/widget"}],
)
def test_a_git_source_finds_the_pull_request_with_a_token(
    git_repo: GitFixture,
    server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, str],
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "pr-token-123456")
    cfg = RepoConfig(source=str(git_repo.path), **extra)
    with registry.open_source(cfg, context(server, tmp_path)) as source:
        assert source.info.pr_context
        pr = source.pull_request(git_repo.rev("main~1"))
        assert source.pull_request(git_repo.rev("main~2")) is None
    assert pr is not None and (pr.number, pr.labels, pr.merged_by) == (101, ("performance",), "cid")
    assert {r.authorization for r in server.requests} == {"Bearer pr-token-123456"}


def test_without_a_token_a_git_source_runs_without_pr_context(
    git_repo: GitFixture, server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    cfg = RepoConfig(source=str(git_repo.path), github="acme/widget")
    with registry.open_source(cfg, context(server, tmp_path)) as source:
        assert not source.info.pr_context
        assert source.pull_request(git_repo.rev("main~1")) is None
    assert server.requests == []


def test_a_git_source_that_names_no_github_repository_has_no_pr_context(
    git_repo: GitFixture, server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "pr-token-123456")
    cfg = RepoConfig(source=str(git_repo.path), web_url="https://gitlab.com/acme/widget")
    with registry.open_source(cfg, context(server, tmp_path)) as source:
        assert not source.info.pr_context
        assert source.pull_request(git_repo.rev("main~1")) is None
    assert server.requests == []
