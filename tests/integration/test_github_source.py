"""The GitHub source against a real GitHub-shaped server on 127.0.0.1 serving a real repository.

The parity test is the contract: for the same day, a repository read through
the API and the same repository read with git give identical reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import GitHubSettings, RepoConfig, build_settings
from repoherald.models import CommitPatch, FileStatus
from repoherald.pipeline.run import RunResult, Window, run
from repoherald.sources import registry
from repoherald.sources.base import Source, SourceContext
from repoherald.sources.github import GitHubSource
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, at, baseline, mixed_day
from tests.github_server import FakeGitHub

REPO = "acme/widget"


@pytest.fixture
def server() -> Iterator[FakeGitHub]:
    with FakeGitHub(patch_limit=1_000_000) as gh:
        yield gh


@pytest.fixture(scope="module")
def mixed_repo(tmp_path_factory: pytest.TempPathFactory) -> GitFixture:
    """Built once: no test writes to it."""
    fx = GitFixture.init(tmp_path_factory.mktemp("github-source") / "repo")
    mixed_day(fx)
    return fx


@pytest.fixture
def mixed(mixed_repo: GitFixture, server: FakeGitHub) -> GitFixture:
    server.add_repo(REPO, mixed_repo.path)
    return mixed_repo


def write_config(path: Path, source: str, api_url: str, extra: str = "") -> Path:
    path.write_text(
        f'[report]\ntz = "{TZ_NAME}"\n\n[github]\napi_url = "{api_url}"\n{extra}\n'
        f'[[repos]]\nsource = "{source}"\nname = "{REPO}"\n'
        f'web_url = "https://github.com/{REPO}"\n',
        encoding="utf-8",
    )
    return path


def report(tmp: Path, tag: str, source: str, api_url: str, day: str = str(DAY)) -> RunResult:
    cfg = write_config(tmp / f"{tag}.toml", source, api_url)
    settings = build_settings(
        config=str(cfg), day=day, home=str(tmp / f"home-{tag}"), out=str(tmp / f"out-{tag}")
    )
    return run(settings)


def twin(result: RunResult) -> dict[str, Any]:
    """The JSON twin without what must differ: when it was made, and which source was read."""
    path = next(p for p in result.written if p.suffix == ".json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data.pop("generated_at")
    for repo in data["repos"]:
        repo.pop("source_id")
        # A git source without a token runs without PR context, and its report says so.
        repo["notes"] = [n for n in repo["notes"] if "GITHUB_TOKEN" not in n]
    return data


def source_ids(result: RunResult) -> list[str]:
    path = next(p for p in result.written if p.suffix == ".json")
    return [r["source_id"] for r in json.loads(path.read_text(encoding="utf-8"))["repos"]]


def markdown(result: RunResult) -> list[str]:
    path = next(p for p in result.written if p.suffix == ".md")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln and "生成" not in ln and "GITHUB_TOKEN" not in ln]


def open_source(server: FakeGitHub, **cfg: Any) -> Source:
    window = Window.for_day(DAY, build_settings(repos=(".",), tz=TZ_NAME).tz)
    ctx = SourceContext(
        mirrors_dir=Path("/nonexistent"),
        earliest=window.start_ts,
        github=GitHubSettings(api_url=server.api_url),
    )
    return registry.open_source(RepoConfig(source=f"github:{REPO}", **cfg), ctx)


def test_the_github_and_git_reports_of_a_day_are_identical(
    mixed: GitFixture, server: FakeGitHub, tmp_path: Path
) -> None:
    by_git = report(tmp_path, "git", str(mixed.path), server.api_url)
    by_api = report(tmp_path, "api", f"github:{REPO}", server.api_url)
    assert by_git.failures == [] and by_api.failures == []
    a, b = twin(by_git), twin(by_api)
    commits = a["repos"][0]["commits"]
    # The day really holds every awkward kind of change, and the side branch stays out.
    assert len(commits) == 10
    assert not any(c["title"].startswith("side:") for c in commits)
    files = [f for c in commits for f in c["facts"]["files"]]
    assert {f["new_mode"] for f in files} >= {"100644", "100755", "120000", "160000"}
    assert any(f["binary"] and f["size"] for f in files)
    assert any(f["status"] == "renamed" for f in files)
    assert any(c["facts"]["api_changes"] for c in commits)
    assert any(c["facts"]["dependency_changes"] for c in commits)
    assert a == b
    assert markdown(by_git) == markdown(by_api)
    # The one field that differs names what was read.
    assert source_ids(by_git) == [str(mixed.path)]
    assert source_ids(by_api) == [f"github:127.0.0.1/{REPO}"]


def test_a_day_costs_a_whole_tree_a_commit_and_a_blob_a_modified_file(
    mixed: GitFixture, server: FakeGitHub, tmp_path: Path
) -> None:
    """Each side's root tree comes whole in one request (a commit's parent tree is the
    previous commit's own), not one request per directory on each changed path; an added
    or deleted file's blob is its patch, and a modified file's other side is rebuilt
    from the patch."""
    result = report(tmp_path, "api", f"github:{REPO}", server.api_url)
    assert result.failures == []
    trees = [r.path for r in server.requests if "/git/trees/" in r.path]
    assert trees and all(p.endswith("?recursive=1") for p in trees)
    assert len(trees) <= 10 + 1  # the day's commits and the parent of the first
    read = {p.rsplit("/", 1)[1] for p in (r.path for r in server.requests) if "/git/blobs/" in p}
    modified = ("pkg/core.py", "requirements.txt", "pkg/util/text.py")
    raw = mixed.text("log", "--pretty=", "--raw", "--no-abbrev", "--", *modified)
    sides = {oid for line in raw.splitlines() for oid in line.split()[2:4]}
    assert read and read <= sides and len(read) <= len(modified)


def test_a_whole_tree_github_cuts_is_walked_to_the_same_report(
    mixed_repo: GitFixture, tmp_path: Path
) -> None:
    with FakeGitHub(patch_limit=1_000_000, tree_limit=3) as gh:
        gh.add_repo(REPO, mixed_repo.path)
        a = twin(report(tmp_path, "git", str(mixed_repo.path), gh.api_url))
        b = twin(report(tmp_path, "api", f"github:{REPO}", gh.api_url))
        trees = [r.path for r in gh.requests if "/git/trees/" in r.path]
    assert any("recursive" not in p for p in trees), "the cut answers were walked"
    assert a == b


def test_both_sources_return_the_same_per_file_patches(
    mixed: GitFixture, server: FakeGitHub
) -> None:
    """git's diff cut per file and GitHub's per-file patches are the same data."""
    shas = [mixed.rev(f"main~{i}") for i in range(1, 11)]
    ctx = SourceContext(mirrors_dir=Path("/nonexistent"), earliest=0)
    with registry.open_source(RepoConfig(source=str(mixed.path)), ctx) as by_git:
        want = {c.sha: by_git.patches(c) for c in by_git.read_commits(shas).values()}
    with open_source(server) as by_api:
        commits = by_api.read_commits(shas)
        by_api.file_changes(commits.values())
        got = {c.sha: by_api.patches(c) for c in commits.values()}
    assert {sha: _unscored(p) for sha, p in got.items()} == {
        sha: _unscored(p) for sha, p in want.items()
    }
    assert any(p.hunks for patch in got.values() for p in patch.files)


def _unscored(patch: CommitPatch) -> CommitPatch:
    """Without git's ``similarity index`` line, a score GitHub does not send."""
    files = tuple(
        replace(f, header=re.sub(r"(?m)^similarity index \d+%\n", "", f.header))
        for f in patch.files
    )
    return replace(patch, files=files)


def test_a_patch_github_withholds_is_the_one_difference_and_it_is_marked(
    mixed: GitFixture, tmp_path: Path
) -> None:
    with FakeGitHub(patch_limit=20_000) as gh:
        gh.add_repo(REPO, mixed.path)
        a = twin(report(tmp_path, "git", str(mixed.path), gh.api_url))
        b = twin(report(tmp_path, "api", f"github:{REPO}", gh.api_url))
    withheld = [
        (c["short_sha"], f["path"])
        for c in b["repos"][0]["commits"]
        for f in c["facts"]["files"]
        if f["patch_withheld"]
    ]
    assert [p for _, p in withheld] == ["pkg/big.py"]
    for c in b["repos"][0]["commits"]:
        for f in c["facts"]["files"]:
            f["patch_withheld"] = False
        c["patches_withheld"] = []
    assert a == b


def test_commit_list_pages_are_followed_and_the_first_parent_chain_rebuilt(
    mixed: GitFixture, tmp_path: Path
) -> None:
    with FakeGitHub(per_page_cap=3) as gh:
        gh.add_repo(REPO, mixed.path)
        with open_source(gh) as source:
            history = source.history()
        pages = [r for r in gh.requests if "/commits?" in r.path]
    chain = mixed.text("rev-list", "--first-parent", "main").split()
    assert [sha for sha, _ in history] == chain[: len(history)]
    assert len(history) >= 11  # the day and the morning after, back past the window start
    assert len(pages) >= 5  # 14 listed commits, 3 a page


def test_files_are_paged_and_a_list_cut_at_3000_is_marked(
    git_repo: GitFixture, server: FakeGitHub
) -> None:
    server.patch_limit = 20_000
    baseline(git_repo)
    git_repo.write_many({f"gen/f{i:04d}.txt": f"{i}\n" for i in range(3005)})
    big = git_repo.commit("Generate 3,005 files", when=at(9))
    git_repo.write("pkg/big.py", "".join(f"V{i} = {i}\n" for i in range(5000)))
    large = git_repo.commit("One large file", when=at(10))
    server.add_repo(REPO, git_repo.path)
    with open_source(server) as source:
        assert isinstance(source, GitHubSource)
        commits = source.read_commits([big, large])
        changes = source.file_changes(commits.values())
        patch = source.patches(commits[big])
    assert commits[big].files_truncated and not commits[large].files_truncated
    assert len(changes[big]) == 3000 and patch.cut
    assert [p.path for p in patch.files] == [f.path for f in changes[big]]
    pages = [r for r in server.requests if f"/commits/{big}" in r.path]
    assert len(pages) == 10
    (only,) = changes[large]
    assert only.patch_withheld and only.added == 5000 and not only.binary
    assert not any(f.patch_withheld for f in changes[big])


def test_a_rerun_is_all_304s_and_sends_no_more_requests(
    mixed: GitFixture, server: FakeGitHub, tmp_path: Path
) -> None:
    cfg = write_config(tmp_path / "c.toml", f"github:{REPO}", server.api_url)

    def once() -> RunResult:
        settings = build_settings(config=str(cfg), day=str(DAY), home=str(tmp_path / "home"))
        return run(settings)

    assert once().failures == []
    first = server.requests
    server.clear()
    assert once().failures == []
    again = server.requests
    assert 0 < len(again) <= len(first)
    assert all(r.status == 304 and r.if_none_match for r in again)


def test_merge_commits_are_diffed_against_their_first_parent(
    mixed: GitFixture, server: FakeGitHub
) -> None:
    merge = mixed.rev("main~3")
    assert len(mixed.cat(merge).split(b"\nparent ")) == 3
    with open_source(server) as source:
        commits = source.read_commits([merge])
        (files,) = source.file_changes(commits.values()).values()
    assert [(f.path, f.status) for f in files] == [("pkg/side.py", FileStatus.ADDED)]
    assert files[0].new_blob == mixed.text("rev-parse", f"{merge}:pkg/side.py")


def test_pull_request_context_with_labels_and_merger(mixed: GitFixture, server: FakeGitHub) -> None:
    sha = mixed.rev("main~4")
    server.add_pull(REPO, 7, ["b" * 40], title="Other", merged_by=None)
    server.add_pull(
        REPO,
        102,
        [sha],
        title="Fix clean()",
        body="It lost case.\r\n",
        labels=("bug", "ready"),
        author="ada",
        merged_by="cid",
        merge_commit_sha=sha,
    )
    with open_source(server) as source:
        assert source.info.pr_context
        pr = source.pull_request(sha)
        none = source.pull_request(mixed.rev("main~1"))
    assert pr is not None and none is None
    assert (pr.number, pr.title, pr.labels, pr.author, pr.merged_by) == (
        102,
        "Fix clean()",
        ("bug", "ready"),
        "ada",
        "cid",
    )
    assert pr.body == "It lost case.\n" and pr.url.endswith("/pull/102")


def test_read_blob_returns_file_text_and_respects_the_size_limit(
    mixed: GitFixture, server: FakeGitHub
) -> None:
    sha = mixed.rev("main~1")  # pkg/big.py added
    with open_source(server) as source:
        (files,) = source.file_changes(source.read_commits([sha]).values()).values()
        blob = files[0].new_blob
        text = source.read_blob(blob, 1_000_000)
        small = source.read_blob(blob, 10)
        absent = source.read_blob("0" * 39 + "1", 1_000_000)
    assert text is not None and text.startswith(b"VALUE_0 = 0\n")
    assert small is None and absent is None


def test_github_enterprise_layout_and_concurrency_cap(mixed: GitFixture, tmp_path: Path) -> None:
    with FakeGitHub(prefix="/api/v3", latency=0.02) as gh:
        gh.add_repo(REPO, mixed.path)
        extra = "concurrency = 2\n"
        cfg = write_config(tmp_path / "ghe.toml", f"github:{REPO}", gh.api_url, extra)
        settings = build_settings(config=str(cfg), day=str(DAY), home=str(tmp_path / "h"))
        result = run(settings)
        assert result.failures == []
        assert all(r.path.startswith("/api/v3/") for r in gh.requests)
        assert gh.max_in_flight <= 2
    assert len(twin(result)["repos"][0]["commits"]) == 10


def test_latest_finds_the_same_day_through_either_source(
    mixed: GitFixture, server: FakeGitHub, tmp_path: Path
) -> None:
    # The fixture's days are long past, so the API's default window is empty and
    # the source must look at the branch tip's own days instead.
    by_git = report(tmp_path, "git", str(mixed.path), server.api_url, day="latest")
    by_api = report(tmp_path, "api", f"github:{REPO}", server.api_url, day="latest")
    a, b = twin(by_git), twin(by_api)
    assert a["date"] == b["date"] == str(DAY.replace(day=DAY.day + 1))
    assert a == b and len(a["repos"][0]["commits"]) == 1
