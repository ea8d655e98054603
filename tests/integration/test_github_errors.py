"""Bad input and bad answers: one line naming the repository, and the others still reported.

Each case runs the real pipeline over two repositories, a healthy git one and
a GitHub one that something is wrong with, against the loopback GitHub server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import Settings, build_settings
from repoherald.errors import SourceError
from repoherald.pipeline.run import RunResult, run
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub

GOOD = "good-lib"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Built once: no test writes to them."""
    base = tmp_path_factory.mktemp("github-errors")
    repo = GitFixture.init(base / "repo")
    mixed_day(repo)
    return repo.path, GitFixture.init(base / "empty").path


@pytest.fixture
def world(repos: tuple[Path, Path]) -> Iterator[tuple[FakeGitHub, Path]]:
    repo, empty = repos
    with FakeGitHub() as gh:
        gh.add_repo("acme/widget", repo)
        gh.add_repo("acme/secret", repo, private=True)
        gh.add_repo("acme/empty", empty)
        yield gh, repo


def settings_for(
    tmp: Path, api_url: str, git_path: Path, source: str, repo_extra: str = "", gh_extra: str = ""
) -> Settings:
    cfg = tmp / "repoherald.toml"
    cfg.write_text(
        f'[report]\ntz = "{TZ_NAME}"\n\n[github]\napi_url = "{api_url}"\n{gh_extra}\n'
        f'[[repos]]\nsource = "{git_path}"\nname = "{GOOD}"\n\n'
        f'[[repos]]\nsource = "{source}"\n{repo_extra}\n',
        encoding="utf-8",
    )
    settings = build_settings(config=str(cfg), day=str(DAY), home=str(tmp / "home"))
    fast = settings.github.model_copy(update={"retry_backoff": 0.01, "secondary_wait": 0.2})
    return replace(settings, github=fast)


def sections(result: RunResult) -> dict[str, Any]:
    path = next(p for p in result.written if p.suffix == ".json")
    return {r["name"]: r for r in json.loads(path.read_text(encoding="utf-8"))["repos"]}


CASES = [
    ("gitlab:acme/widget", "", "", "unknown source scheme 'gitlab'"),
    ("github:acme", "", "", "'acme' is not a GitHub owner/name"),
    ("github:../etc", "", "", "is not a GitHub owner/name"),
    ("github:acme/widget", "", 'token_env = "RH_TEST_UNSET_TOKEN"', "RH_TEST_UNSET_TOKEN"),
    ("github:acme/widget", "", 'api_url = "ftp://example.com"', "is not an http(s) URL"),
    ("github:acme/secret", "", "", "not found on GitHub (HTTP 404"),
    ("github:acme/nothere", "", "", "not found on GitHub (HTTP 404"),
    ("github:acme/empty", "", "", "the repository is empty (HTTP 409)"),
    ("github:acme/widget", 'branch = "nope"', "", "branch 'nope' does not exist on GitHub"),
]


@pytest.mark.parametrize(("source", "repo_extra", "gh_extra", "expected"), CASES)
def test_bad_configuration_names_the_repository_and_spares_the_others(
    world: tuple[FakeGitHub, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    repo_extra: str,
    gh_extra: str,
    expected: str,
) -> None:
    gh, git_path = world
    monkeypatch.delenv("RH_TEST_UNSET_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    api_url = gh.api_url
    if "api_url" in gh_extra:
        gh_extra, api_url = "", gh_extra.split('"')[1]
    result = run(settings_for(tmp_path, api_url, git_path, source, repo_extra, gh_extra))
    (line,) = result.failures
    assert expected in line and "\n" not in line
    name = source.partition(":")[2] if source.startswith("github:") else source
    assert line.startswith(name + ":")
    assert len(sections(result)[GOOD]["commits"]) == 10


ANSWERS = [
    (r"^/repos/acme/widget$", "html", {}, "is not JSON (text/html"),
    (r"/branches/", "garbage", {}, "is not valid JSON"),
    (r"/branches/", "truncate", {"times": -1}, "was cut off mid-body 5 times"),
    (r"/commits\?", "loop", {"times": -1}, "leads back to a page already read"),
    (r"^/repos/acme/widget$", "status", {"status": 403}, "refused access"),
    (r"/commits\?", "status", {"status": 422}, "(HTTP 422"),
    (r"/commits/[0-9a-f]{40}", "status", {"status": 502, "times": -1}, "HTTP 502"),
]


@pytest.mark.parametrize(("pattern", "kind", "kw", "expected"), ANSWERS)
def test_bad_answers_name_the_repository_and_spare_the_others(
    world: tuple[FakeGitHub, Path],
    tmp_path: Path,
    pattern: str,
    kind: str,
    kw: dict[str, Any],
    expected: str,
) -> None:
    gh, git_path = world
    gh.fault(pattern, kind, **kw)
    result = run(settings_for(tmp_path, gh.api_url, git_path, "github:acme/widget"))
    (line,) = result.failures
    assert line.startswith("acme/widget: ") and expected in line and "\n" not in line
    assert len(sections(result)[GOOD]["commits"]) == 10


def test_a_rejected_token_says_which_variable_to_fix(
    world: tuple[FakeGitHub, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gh, git_path = world
    gh.token = "the-right-token-1234"
    monkeypatch.setenv("RH_TEST_TOKEN", "a-wrong-token-5678")
    extra = 'token_env = "RH_TEST_TOKEN"'
    result = run(settings_for(tmp_path, gh.api_url, git_path, "github:acme/widget", "", extra))
    (line,) = result.failures
    assert "rejected the token in $RH_TEST_TOKEN (HTTP 401" in line
    assert "a-wrong-token" not in line
    assert {r.authorization for r in gh.requests} == {"Bearer a-wrong-token-5678"}


def test_a_token_reads_a_private_repository(
    world: tuple[FakeGitHub, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gh, git_path = world
    gh.token = "the-right-token-1234"
    monkeypatch.setenv("GITHUB_TOKEN", "the-right-token-1234")
    result = run(settings_for(tmp_path, gh.api_url, git_path, "github:acme/secret"))
    assert result.failures == []
    assert len(sections(result)["acme/secret"]["commits"]) == 10


def test_secondary_limits_are_waited_out_and_retried(
    world: tuple[FakeGitHub, Path], tmp_path: Path
) -> None:
    gh, git_path = world
    gh.fault(r"/branches/", "secondary", retry_after=1)
    gh.fault(r"/commits\?", "secondary429", retry_after=1)
    gh.fault(r"/git/trees/", "secondary_message")
    gh.fault(r"/commits/[0-9a-f]{40}", "status", status=503)
    result = run(settings_for(tmp_path, gh.api_url, git_path, "github:acme/widget"))
    assert result.failures == []
    statuses = gh.statuses()
    assert statuses[403] == 2 and statuses[429] == 1 and statuses[503] == 1
    assert len(sections(result)["acme/widget"]["commits"]) == 10


def test_a_primary_limit_that_resets_soon_is_waited_for(
    world: tuple[FakeGitHub, Path], tmp_path: Path
) -> None:
    gh, git_path = world
    gh.fault(r"/commits/[0-9a-f]{40}", "exhaust", reset_in=1)
    result = run(settings_for(tmp_path, gh.api_url, git_path, "github:acme/widget"))
    assert result.failures == []
    assert gh.statuses()[403] == 1


def test_a_used_up_limit_stops_with_when_to_resume_and_the_rerun_continues(
    world: tuple[FakeGitHub, Path], tmp_path: Path
) -> None:
    gh, git_path = world
    gh.fault(r"/git/trees/", "exhaust", reset_in=7200)
    settings = settings_for(tmp_path, gh.api_url, git_path, "github:acme/widget")
    result = run(settings)
    (line,) = result.failures
    assert line.startswith("acme/widget: ") and "rate limit" in line and "re-run after" in line
    assert " UTC" in line
    # Blobs are not kept in the store (only trees, lists and commits are).
    fetched = {r.path for r in gh.requests if r.status == 200 and "/git/blobs/" not in r.path}
    gh.clear()
    again = run(settings)
    assert again.failures == []
    revalidated = [r for r in gh.requests if r.path in fetched]
    assert revalidated and all(r.status == 304 for r in revalidated)


def test_source_errors_are_runtime_errors_not_usage_errors() -> None:
    from repoherald.config import RepoConfig
    from repoherald.sources import registry
    from repoherald.sources.base import SourceContext

    ctx = SourceContext(mirrors_dir=Path("/nonexistent"), earliest=0)
    with pytest.raises(SourceError) as info:
        registry.open_source(RepoConfig(source="github:not a repo"), ctx)
    assert info.value.exit_code == 1
