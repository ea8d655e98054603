"""Remote repositories: a shallow bare mirror, fetched incrementally, deepened on demand.

``file://`` URLs go through git's real transport (unlike plain paths), so
these tests exercise exactly what happens against GitHub, offline.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from repoherald.config import build_settings
from repoherald.pipeline import run

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", **(env or {})}
    out = subprocess.run(["git", *args], cwd=cwd, env=full, check=True, capture_output=True)
    return out.stdout.decode().strip()


def commit_on(repo: Path, day_index: int, name: str, lines: int) -> str:
    when = (START + timedelta(days=day_index)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    (repo / f"{name}.py").write_text(
        "".join(f"def f{i}(x): return x\n" for i in range(lines)), encoding="utf-8"
    )
    git(repo, "add", "-A")
    env = {
        "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
        "GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@example.com",
        "GIT_COMMITTER_NAME": "Ann", "GIT_COMMITTER_EMAIL": "ann@example.com",
    }  # fmt: skip
    git(repo, "commit", "-q", "-m", f"Add {name} (#{day_index + 1})", env=env)
    return git(repo, "rev-parse", "HEAD")


def make_upstream(tmp_path: Path, days: int) -> Path:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(days):
        commit_on(repo, i, f"mod{i % 7}", lines=i + 1)
    return repo


def report(tmp_path: Path, url: str, day: date) -> dict:
    settings = build_settings(
        repos=(url,), day=day.isoformat(), tz="UTC", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    json_path = next(p for p in result.written if p.suffix == ".json")
    return json.loads(json_path.read_text(encoding="utf-8"))


def mirror(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "home" / "mirrors").glob("*.git")
    return found


def test_shallow_mirror_has_only_recent_history(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path, 60)
    url = f"file://{upstream}"
    day = (START + timedelta(days=55)).date()
    twin = report(tmp_path, url, day)
    commits = twin["repos"][0]["commits"]
    assert [c["title"] for c in commits] == ["Add mod6 (#56)"]
    # The diff is against the real parent (fetched one generation deeper),
    # not "every file added": mod6.py grows from 49 to 56 lines (+7).
    facts = commits[0]["facts"]
    assert [(f["path"], f["status"], f["added"], f["deleted"]) for f in facts["files"]] == [
        ("mod6.py", "modified", 7, 0)
    ]
    count = int(git(mirror(tmp_path), "rev-list", "--count", "main"))
    assert count < 15, f"mirror fetched {count} of 60 commits: history should be shallow"
    assert (mirror(tmp_path) / "shallow").is_file()


def test_incremental_fetch_and_deepening(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path, 40)
    url = f"file://{upstream}"
    report(tmp_path, url, (START + timedelta(days=39)).date())
    before = int(git(mirror(tmp_path), "rev-list", "--count", "main"))

    new_sha = commit_on(upstream, 40, "late", lines=3)
    twin = report(tmp_path, url, (START + timedelta(days=40)).date())
    assert [c["sha"] for c in twin["repos"][0]["commits"]] == [new_sha]

    old = report(tmp_path, url, (START + timedelta(days=5)).date())
    assert [c["title"] for c in old["repos"][0]["commits"]] == ["Add mod5 (#6)"]
    after = int(git(mirror(tmp_path), "rev-list", "--count", "main"))
    assert before < after < 41


def test_unreachable_remote_is_a_runtime_error(tmp_path: Path) -> None:
    from repoherald.errors import SourceError

    settings = build_settings(
        repos=(f"file://{tmp_path}/nope.git",), day="2026-03-01", tz="UTC",
        out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip
    try:
        run(settings)
    except SourceError as exc:
        assert "cannot clone" in str(exc)
    else:
        raise AssertionError("expected SourceError")
    assert not list((tmp_path / "home" / "mirrors").glob("*")), "no half-made mirror left"
