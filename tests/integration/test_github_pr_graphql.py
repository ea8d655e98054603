"""A day's pull-request context in one GraphQL query, REST when GraphQL cannot answer.

Against the GitHub test server's ``POST /graphql``, which answers from the same pull
requests as its REST endpoints: the report is the same either way, only the requests
differ. GraphQL refused, an answer with ``errors``, a hostile node or no token: the
commits it did not settle are asked through REST, and the report does not change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import GitHubSettings, RepoConfig, build_settings
from repoherald.pipeline.run import run
from repoherald.sources import registry
from repoherald.sources.base import BatchedPullSource, SourceContext
from repoherald.store.etags import MemoryEtags
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub

REPO = "acme/widget"
TOKEN = "graphql-token-123456"


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> GitFixture:
    fx = GitFixture.init(tmp_path_factory.mktemp("pr-graphql") / "repo")
    mixed_day(fx)
    return fx


@pytest.fixture
def server(day: GitFixture) -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as gh:
        gh.add_repo(REPO, day.path)
        gh.add_pull(REPO, 101, [day.rev("main~8")], title="run() takes b", body="Why:\r\nb.",
                    labels=("breaking", "api"), merged_by="cid")  # fmt: skip
        gh.add_pull(REPO, 102, [day.rev("main~4")], title="clean() lowers", labels=("bug",))
        gh.add_pull(REPO, 99, [day.rev("main~4")], title="An open one", merged_by=None)
        yield gh


def _report(tmp: Path, tag: str, gh: FakeGitHub) -> list[dict[str, Any]]:
    cfg = tmp / f"{tag}.toml"
    cfg.write_text(
        f'[report]\ntz = "{TZ_NAME}"\n\n[github]\napi_url = "{gh.api_url}"\n\n'
        f'[[repos]]\nsource = "github:{REPO}"\nname = "{REPO}"\n',
        encoding="utf-8",
    )
    result = run(build_settings(config=str(cfg), day=str(DAY), home=str(tmp / f"home-{tag}"),
                                out=str(tmp / f"out-{tag}")))  # fmt: skip
    assert result.failures == []
    twin = next(p for p in result.written if p.suffix == ".json")
    commits: list[dict[str, Any]] = json.loads(twin.read_text("utf-8"))["repos"][0]["commits"]
    return [c["facts"]["pull_request"] for c in commits]


def _graphql(gh: FakeGitHub) -> int:
    return sum(r.path.endswith("/graphql") for r in gh.requests)


def _rest_pulls(gh: FakeGitHub) -> int:
    return sum("/pulls" in r.path for r in gh.requests)


def test_a_days_pull_requests_come_in_one_graphql_query(
    server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    pulls = _report(tmp_path, "graphql", server)
    assert (_graphql(server), _rest_pulls(server)) == (1, 0)
    found = [p for p in pulls if p]
    assert [(p["number"], p["labels"], p["merged_by"]) for p in found] == [
        (102, ["bug"], "maintainer"),
        (101, ["breaking", "api"], "cid"),
    ]
    assert found[1]["body"] == "Why:\nb."
    server.clear()
    monkeypatch.delenv("GITHUB_TOKEN")
    assert _report(tmp_path, "rest", server) == pulls, "REST tells the same"
    assert _graphql(server) == 0 and _rest_pulls(server) > 0


def _errors(_: Any) -> Any:
    return {"data": None, "errors": [{"type": "RATE_LIMITED", "message": "API rate limit"}]}


def _hostile(answer: Any) -> Any:
    for entry in answer["data"]["repository"].values():
        for node in (entry or {}).get("associatedPullRequests", {}).get("nodes", []):
            node["number"] = "1e400"
    return answer


def _no_list(answer: Any) -> Any:
    for entry in answer["data"]["repository"].values():
        if entry:
            entry["associatedPullRequests"] = {"nodes": "<script>"}
    return answer


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "status", "status": 403, "message": "Resource not accessible by integration"},
        {"kind": "edit", "edit": _errors},
        {"kind": "edit", "edit": _hostile},
        {"kind": "edit", "edit": _no_list},
        {"kind": "garbage"},
        {"kind": "secondary", "retry_after": 1},
        {"kind": "exhaust", "reset_in": 2},
    ],
    ids=["refused", "errors", "hostile-number", "not-a-list", "garbage", "secondary", "spent"],
)
def test_what_graphql_does_not_settle_is_asked_through_rest(
    server: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: dict[str, Any],
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    good = _report(tmp_path, "good", server)
    server.clear()
    kind = fault.pop("kind")
    server.fault("/graphql", kind, times=-1, **fault)
    assert _report(tmp_path, "faulty", server) == good
    # One query, not retried after a rate limit: REST has its own budget, and waiting
    # would have held every REST request of the repository too.
    assert _graphql(server) == 1 and _rest_pulls(server) > 0


def test_a_git_source_asks_graphql_too(
    day: GitFixture, server: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    ctx = SourceContext(
        mirrors_dir=tmp_path / "mirrors",
        earliest=0,
        github=GitHubSettings(api_url=server.api_url),
        etags=MemoryEtags(),
    )
    shas = [day.rev(f"main~{i}") for i in range(10)]
    with registry.open_source(RepoConfig(source=str(day.path), github=REPO), ctx) as source:
        assert isinstance(source, BatchedPullSource)
        source.pull_requests_ahead(shas)
        found: Callable[[int], Any] = lambda i: source.pull_request(shas[i])  # noqa: E731
        assert (found(8).number, found(4).number, found(0)) == (101, 102, None)
    assert (_graphql(server), _rest_pulls(server)) == (1, 0)


def test_github_enterprise_has_graphql_beside_api_v3(
    day: GitFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with FakeGitHub(token=TOKEN, prefix="/api/v3") as gh:
        gh.add_repo(REPO, day.path)
        gh.add_pull(REPO, 101, [day.rev("main~8")], title="run() takes b")
        pulls = _report(tmp_path, "ghe", gh)
        assert [p["number"] for p in pulls if p] == [101]
        assert [r.path for r in gh.requests if "graphql" in r.path] == ["/api/graphql"]
        assert _rest_pulls(gh) == 0
