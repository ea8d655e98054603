"""What a local repository is called in its report, and the file the report goes to."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.config import RepoConfig, build_settings
from repoherald.pipeline import run
from repoherald.sources import registry
from repoherald.sources.base import SourceContext
from tests.gitfixture import GitFixture

DAY = "2025-06-10"


def project(path: Path, *, bare_at: Path | None = None) -> Path:
    """A repository with one commit on DAY; returns its path (or the bare copy's)."""
    fx = GitFixture.init(path)
    fx.write("a.py", "x = 1\n")
    fx.commit("feat: a", when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    if bare_at is None:
        return path
    bare = GitFixture.init(bare_at, bare=True)
    fx.git("push", "--quiet", str(bare.path), "main:main")
    return bare.path


def reported(tmp_path: Path, source: str, **kw: str) -> tuple[str, Path]:
    settings = build_settings(
        repos=(source,), day=DAY, tz="UTC", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, **kw,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    (md,) = [p for p in result.written if p.suffix == ".md"]
    twin = json.loads(md.with_suffix(".json").read_text(encoding="utf-8"))
    return twin["repos"][0]["name"], md.relative_to(tmp_path / "out")


def opened_name(source: str, tmp_path: Path) -> str:
    ctx = SourceContext(mirrors_dir=tmp_path / "home" / "mirrors", earliest=0)
    src = registry.open_source(RepoConfig(source=source), ctx)
    try:
        return src.info.name
    finally:
        src.close()


def test_dot_git_directory_is_named_after_its_work_tree(tmp_path: Path) -> None:
    work = project(tmp_path / "X")
    name, path = reported(tmp_path, str(work / ".git"))
    assert name == "X"
    assert path == Path("2025/X/2025-06-10.md")


def test_bare_mirror_called_repo_is_named_after_its_parent(tmp_path: Path) -> None:
    bare = project(tmp_path / "src", bare_at=tmp_path / "mirrors" / "foo" / "repo")
    name, path = reported(tmp_path, str(bare))
    assert name == "foo"
    assert path.parent.name == "foo"


def test_origin_url_names_the_repository(tmp_path: Path) -> None:
    bare = project(tmp_path / "src", bare_at=tmp_path / "mirrors" / "foo" / "repo")
    GitFixture(bare, bare=True).git(
        "config", "remote.origin.url", "https://user:tok3n-value@github.com/org/foo.git"
    )
    name, path = reported(tmp_path, str(bare))
    assert name == "org/foo"
    assert path.parent.name == "foo"
    (twin,) = (tmp_path / "out").glob("*/*/*.json")
    data = json.loads(twin.read_text(encoding="utf-8"))
    assert data["repos"][0]["web_url"] == "https://github.com/org/foo"
    assert "tok3n-value" not in twin.read_text(encoding="utf-8")


def test_configured_name_wins(tmp_path: Path) -> None:
    bare = project(tmp_path / "src", bare_at=tmp_path / "mirrors" / "foo" / "repo")
    GitFixture(bare, bare=True).git("config", "remote.origin.url", "https://github.com/org/foo")
    name, path = reported(tmp_path, str(bare), name="team/mine")
    assert name == "team/mine"
    assert path.parent.name == "mine"


@pytest.mark.parametrize("layout", ["dotgit", "repo", "origin"])
def test_name_without_opening_matches_the_opened_name(tmp_path: Path, layout: str) -> None:
    """A repository that fails is named (and its report filed) like one that opens."""
    if layout == "dotgit":
        source = project(tmp_path / "X") / ".git"
    else:
        source = project(tmp_path / "src", bare_at=tmp_path / "m" / "foo" / "repo")
        if layout == "origin":
            GitFixture(source, bare=True).git("config", "remote.origin.url", "git@h.io:o/foo.git")
    cfg = RepoConfig(source=str(source))
    assert registry.display_name(cfg) == opened_name(str(source), tmp_path)
