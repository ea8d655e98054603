"""Tests for bench.replay: replay recorded commit shapes into a real git repository."""

from __future__ import annotations

import ast
import subprocess
from datetime import date, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bench.replay import BASELINE_TITLE, build_repo, load_shapes

SAMPLE_SHAPES = Path(__file__).parents[1] / "data" / "shapes-2026-08-17_22.jsonl"


SEP = "\x1e"
FIELD = "\x1f"


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True).stdout


def read_log(repo: Path) -> list[dict[str, Any]]:
    """Oldest-first commits of ``main`` with their ``--numstat`` entries (read with -z)."""
    raw = git(
        repo,
        "-c",
        "diff.renames=true",
        "log",
        "--first-parent",
        "--reverse",
        "-M",
        "--numstat",
        "-z",
        "--no-color",
        f"--format={SEP}%H{FIELD}%an{FIELD}%cn{FIELD}%aI{FIELD}%cI{FIELD}%s",
        "main",
    ).decode("utf-8")
    commits = []
    for record in raw.split(SEP)[1:]:
        header, _, rest = record.partition("\0")
        sha, author, committer, author_date, committer_date, title = header.split(FIELD)
        files: dict[str, dict[str, Any]] = {}
        tokens = rest.split("\0")
        i = 0
        while i < len(tokens):
            token = tokens[i].lstrip("\n")
            i += 1
            if not token:
                continue
            added, deleted, path = token.split("\t", 2)
            old_path = None
            if not path:  # rename: "added<TAB>deleted<TAB>\0old\0new\0"
                old_path, path = tokens[i], tokens[i + 1]
                i += 2
            files[path] = {
                "old_path": old_path,
                "added": None if added == "-" else int(added),
                "deleted": None if deleted == "-" else int(deleted),
            }
        commits.append(
            {
                "sha": sha,
                "author": author,
                "committer": committer,
                "author_date": datetime.fromisoformat(author_date),
                "committer_date": datetime.fromisoformat(committer_date),
                "title": title,
                "files": files,
            }
        )
    return commits


@pytest.fixture(scope="module")
def slice_shapes() -> list[dict[str, Any]]:
    return load_shapes(SAMPLE_SHAPES, date(2026, 8, 20), date(2026, 8, 22))


def test_load_shapes_window_and_order(slice_shapes: list[dict[str, Any]]) -> None:
    assert slice_shapes, "slice should not be empty"
    days = {
        datetime.fromisoformat(s["committer_date"]).astimezone(ZoneInfo("Asia/Shanghai")).date()
        for s in slice_shapes
    }
    assert days <= {date(2026, 8, 20), date(2026, 8, 21)}
    # Oldest first: each commit's parent is the previous one.
    for prev, cur in pairwise(slice_shapes):
        assert cur["parents"] == [prev["sha"]]


def test_replay_matches_shapes(slice_shapes: list[dict[str, Any]], tmp_path: Path) -> None:
    dest = tmp_path / "repo"
    shas = build_repo(slice_shapes, dest, seed=0)
    assert len(shas) == len(slice_shapes)

    commits = read_log(dest)
    replayed = [c for c in commits if c["title"] != BASELINE_TITLE]
    # At most one extra commit: the baseline that creates pre-existing files.
    assert len(commits) - len(replayed) in (0, 1)
    if len(commits) != len(replayed):
        assert commits[0]["title"] == BASELINE_TITLE
    assert len(replayed) == len(slice_shapes)
    assert [c["sha"] for c in replayed] == shas
    assert git(dest, "rev-parse", "HEAD").decode().strip() == shas[-1]
    assert git(dest, "symbolic-ref", "HEAD").decode().strip() == "refs/heads/main"
    assert git(dest, "status", "--porcelain").strip() == b""

    renames = 0
    for shape, got in zip(slice_shapes, replayed, strict=True):
        assert got["title"] == shape["title"]
        assert got["author"] == shape["author"]
        assert got["committer"] == shape["committer"]
        assert got["author_date"] == datetime.fromisoformat(shape["author_date"])
        assert got["committer_date"] == datetime.fromisoformat(shape["committer_date"])
        assert (
            got["committer_date"].utcoffset()
            == datetime.fromisoformat(shape["committer_date"]).utcoffset()
        )
        assert set(got["files"]) == {f["path"] for f in shape["files"]}, shape["sha"]
        for fc in shape["files"]:
            entry = got["files"][fc["path"]]
            where = f"{shape['sha'][:10]} {fc['status']} {fc['path']}"
            if fc["status"] == "R":
                renames += 1
                assert entry["old_path"] == fc["old_path"], where
            else:
                assert entry["old_path"] is None, where
            if fc["binary"]:
                assert entry["added"] is None, where
            else:
                assert (entry["added"], entry["deleted"]) == (fc["added"], fc["deleted"]), where
    assert renames > 0, "the slice should contain renames"

    # Full messages survive.
    body = git(dest, "log", "-1", "--format=%B", shas[-1]).decode()
    last = slice_shapes[-1]
    assert body.rstrip("\n") == f"{last['title']}\n\n{last['body']}".rstrip("\n")

    # Python files parse and have module-level definitions.
    py_files = list(dest.rglob("*.py"))
    assert py_files
    defs = 0
    for path in py_files:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        defs += sum(isinstance(n, ast.FunctionDef | ast.ClassDef) for n in tree.body)
    assert defs > 0


def test_replay_is_deterministic_and_supports_bare(
    slice_shapes: list[dict[str, Any]], tmp_path: Path
) -> None:
    shapes = slice_shapes[:8]
    first = build_repo(shapes, tmp_path / "a", seed=3)
    second = build_repo(shapes, tmp_path / "b.git", bare=True, seed=3)
    assert first == second
    bare = tmp_path / "b.git"
    assert git(bare, "rev-parse", "--is-bare-repository").strip() == b"true"
    assert git(bare, "rev-parse", "HEAD").decode().strip() == second[-1]
    other = build_repo(shapes, tmp_path / "c", seed=4)
    assert other != first


def _shape(sha: str, title: str, files: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "sha": sha * 40,
        "parents": [],
        "author": 'Zoë "Q" O\'Neil',
        "author_date": "2026-01-02T03:04:05-05:30",
        "committer": "赵可瑞",
        "committer_date": "2026-01-02T10:00:00+08:00",
        "title": title,
        "body": "",
        "files": files,
    }


def _fc(
    status: str, path: str, added: int | None, deleted: int | None, **kw: Any
) -> dict[str, Any]:
    binary = added is None
    return {
        "path": path,
        "old_path": kw.get("old_path"),
        "status": status,
        "added": added,
        "deleted": deleted,
        "binary": binary,
    }


def test_odd_paths_binary_and_baseline(tmp_path: Path) -> None:
    odd = 'docs/a "quoted" name with spaces/ünïcødé\tfile.py'
    back = "weird\\dir/new\nline.md"
    shapes = [
        _shape(
            "1",
            "add odd paths",
            [
                _fc("A", odd, 10, 0),
                _fc("A", back, 3, 0),
                _fc("A", "img/logo.png", None, None),
                _fc("M", "pre/existing.py", 4, 6),
            ],
        ),
        _shape(
            "2",
            "rename and delete",
            [
                _fc("R", "moved/ünïcødé file.py", 1, 1, old_path=odd),
                _fc("D", back, 0, 3),
                _fc("R", "img/moved logo.png", None, None, old_path="img/logo.png"),
                _fc("D", "pre/existing.py", 0, 30),
            ],
        ),
    ]
    dest = tmp_path / "odd"
    shas = build_repo(shapes, dest)
    commits = read_log(dest)
    assert [c["title"] for c in commits] == [BASELINE_TITLE, "add odd paths", "rename and delete"]
    assert [c["sha"] for c in commits[1:]] == shas
    first, second = commits[1]["files"], commits[2]["files"]
    assert first[odd] == {"old_path": None, "added": 10, "deleted": 0}
    assert first[back]["added"] == 3
    assert first["img/logo.png"]["added"] is None  # binary
    assert first["pre/existing.py"] == {"old_path": None, "added": 4, "deleted": 6}
    assert second["moved/ünïcødé file.py"] == {"old_path": odd, "added": 1, "deleted": 1}
    assert second["img/moved logo.png"]["old_path"] == "img/logo.png"
    # The baseline sized pre/existing.py so that it has 30 lines when deleted.
    assert second["pre/existing.py"] == {"old_path": None, "added": 0, "deleted": 30}
    assert commits[1]["author"] == 'Zoë "Q" O\'Neil'
    assert commits[1]["committer"] == "赵可瑞"
    assert commits[1]["author_date"].isoformat() == "2026-01-02T03:04:05-05:30"
    assert b"\0" in (dest / "img" / "moved logo.png").read_bytes()
    assert ast.parse((dest / "moved" / "ünïcødé file.py").read_text()).body
