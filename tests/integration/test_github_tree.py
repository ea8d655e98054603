"""The GitHub source lists a commit's whole tree like ``git ls-tree -r`` does.

The downstream check finds the upstream's packages and re-exports in that
list, so it must be the same list through the API as through git: symlinks
and submodules out, every file in, also when GitHub cuts the recursive
answer (``truncated``) and the walk has to go down directory by directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repoherald.config import GitHubSettings, RepoConfig
from repoherald.sources import registry
from repoherald.sources.base import Source, SourceContext, TreeSource
from tests.gitfixture import GitFixture
from tests.github_day import at, mixed_day
from tests.github_server import FakeGitHub

REPO = "acme/widget"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> GitFixture:
    fx = GitFixture.init(tmp_path_factory.mktemp("github-tree") / "repo")
    mixed_day(fx)
    fx.write("pkg/util/deep/er/leaf.py", "X = 1\n")
    fx.write("pkg/util/deep/er/twin/leaf.py", "X = 1\n")
    fx.write("pkg/a-b.py", "")
    fx.write("pkg/a0.py", "")
    fx.commit("Nested and oddly sorted names", when=at(20))
    return fx


def _ctx(api_url: str) -> SourceContext:
    return SourceContext(
        mirrors_dir=Path("/nonexistent"), earliest=0, github=GitHubSettings(api_url=api_url)
    )


@pytest.fixture
def by_git(mixed: GitFixture) -> Iterator[Source]:
    with registry.open_source(RepoConfig(source=str(mixed.path)), _ctx("http://unused")) as s:
        yield s


def _open(server: FakeGitHub, repo: GitFixture) -> Source:
    server.add_repo(REPO, repo.path)
    return registry.open_source(RepoConfig(source=f"github:{REPO}"), _ctx(server.api_url))


def _listing(source: Source, sha: str) -> list[tuple[str, str]]:
    assert isinstance(source, TreeSource)
    return source.list_files(sha)


@pytest.mark.parametrize("rev", ["HEAD", "HEAD~1", "HEAD~4"])
def test_the_whole_tree_is_the_git_listing(mixed: GitFixture, by_git: Source, rev: str) -> None:
    sha = mixed.rev(rev)
    expected = _listing(by_git, sha)
    paths = [p for p, _ in expected]
    assert "pkg/latest.py" not in paths, "a symlink is not a file"
    assert not any(p.startswith("vendor/lib") for p in paths), "nor is a submodule"
    with FakeGitHub() as server, _open(server, mixed) as source:
        server.clear()
        assert _listing(source, sha) == expected
        # The commit's tree, then the tree itself, whole.
        assert [r.path.rsplit("/", 2)[-2:][0] for r in server.requests] == ["commits", "trees"]
        assert server.requests[1].path.endswith("?recursive=1")


def test_a_truncated_answer_is_completed_directory_by_directory(
    mixed: GitFixture, by_git: Source
) -> None:
    sha = mixed.rev()
    expected = _listing(by_git, sha)
    with FakeGitHub(tree_limit=4) as server, _open(server, mixed) as source:
        assert _listing(source, sha) == expected
        plain = [r.path for r in server.requests if "/git/trees/" in r.path and "?" not in r.path]
        assert plain, "directories that came cut were listed one by one"
        assert len(plain) == len(set(plain)), "each directory at most once"


def test_empty_files_are_read_without_a_request(mixed: GitFixture) -> None:
    sha = mixed.rev()
    with FakeGitHub() as server, _open(server, mixed) as source:
        files = dict(_listing(source, sha))
        before = len(server.requests)
        assert source.read_blob(files["pkg/__init__.py"], 1000) == b""
        core = (mixed.path / "pkg/core.py").read_bytes()
        assert source.read_blob(files["pkg/core.py"], 1000) == core
        assert len(server.requests) == before + 1


def test_many_blobs_at_once_are_the_git_sources_blobs(mixed: GitFixture, by_git: Source) -> None:
    sha = mixed.rev()
    oids = [oid for path, oid in _listing(by_git, sha) if path.startswith("pkg/")]
    absent = "0" * 39 + "1"
    assert isinstance(by_git, TreeSource)
    expected = by_git.read_blobs([*oids, absent], 1000)
    large = {o for o in oids if int(mixed.git("cat-file", "-s", o)) > 1000}
    assert large and set(expected) == set(oids) - large, "pkg/big.py is over the limit"
    with FakeGitHub() as server, _open(server, mixed) as source:
        assert isinstance(source, TreeSource)
        _listing(source, sha)
        server.clear()
        assert source.read_blobs([*oids, absent, *oids], 1000) == expected
        fetched = [r.path.rsplit("/", 1)[-1] for r in server.requests]
        empty = {o for o in oids if expected.get(o) == b""}
        assert empty and not empty & set(fetched), "empty files cost no request"
        assert len(fetched) == len(set(fetched)), "each blob once"
