"""What GitHub did not send is said in the report: withheld patches and a cut file list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline.run import RunResult, run
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, at, baseline
from tests.github_server import FakeGitHub

REPO = "acme/widget"


def report(tmp: Path, api_url: str, lang: str, extra: str = "") -> RunResult:
    cfg = tmp / f"{lang}.toml"
    cfg.write_text(
        f'[report]\ntz = "{TZ_NAME}"\nlang = "{lang}"\n\n[github]\napi_url = "{api_url}"\n\n'
        f'[[repos]]\nsource = "github:{REPO}"\nname = "{REPO}"\n'
        f'web_url = "https://github.com/{REPO}"\n{extra}',
        encoding="utf-8",
    )
    settings = build_settings(
        config=str(cfg), day=str(DAY), home=str(tmp / "home"), out=str(tmp / f"out-{lang}")
    )
    return run(settings)


def written(result: RunResult, suffix: str) -> str:
    return next(p for p in result.written if p.suffix == suffix).read_text(encoding="utf-8")


def commits(result: RunResult) -> dict[str, dict[str, Any]]:
    data = json.loads(written(result, ".json"))
    return {c["title"]: c for c in data["repos"][0]["commits"]}


@pytest.fixture
def day(git_repo: GitFixture) -> GitFixture:
    baseline(git_repo)
    git_repo.write_many({f"gen/f{i:04d}.txt": f"{i}\n" for i in range(3005)})
    git_repo.commit("Generate 3,005 files", when=at(9))
    git_repo.write("pkg/big.py", "".join(f"V{i} = {i}\n" for i in range(5000)))
    git_repo.write("pkg/small.py", "X = 1\n")
    git_repo.commit("One large file", when=at(10))
    return git_repo


@pytest.mark.parametrize(
    ("lang", "withheld", "cut"),
    [
        ("en", "GitHub sent no patch for 1 file", "at most 3,000 files"),
        ("zh", "未提供 1 个", "最多列出一个提交的 3,000"),
    ],
)
def test_withheld_patches_and_a_cut_file_list_are_named_per_commit(
    day: GitFixture, tmp_path: Path, lang: str, withheld: str, cut: str
) -> None:
    with FakeGitHub(patch_limit=20_000, files_per_page=3000) as gh:
        gh.add_repo(REPO, day.path)
        result = report(tmp_path, gh.api_url, lang)
    by_title = commits(result)
    large, many = by_title["One large file"], by_title["Generate 3,005 files"]
    assert (large["patches_withheld"], large["files_truncated"]) == (["pkg/big.py"], False)
    assert (many["patches_withheld"], many["files_truncated"]) == ([], True)
    text = written(result, ".md")
    large_part = text.split("#### One large file")[1].split("####")[0]
    many_part = text.split("#### Generate 3,005 files")[1].split("####")[0]
    assert withheld in large_part and "pkg/big.py" in large_part and cut not in large_part
    assert cut in many_part and withheld not in many_part


def test_a_complete_commit_has_no_such_note(git_repo: GitFixture, tmp_path: Path) -> None:
    baseline(git_repo)
    git_repo.write("pkg/big.py", "".join(f"V{i} = {i}\n" for i in range(5000)))
    git_repo.commit("One large file", when=at(10))
    with FakeGitHub(patch_limit=1_000_000) as gh:
        gh.add_repo(REPO, git_repo.path)
        result = report(tmp_path, gh.api_url, "en")
    for c in commits(result).values():
        assert (c["patches_withheld"], c["files_truncated"]) == ([], False)
    assert "GitHub sent no patch" not in written(result, ".md")
    assert "at most 3,000 files" not in written(result, ".md")
