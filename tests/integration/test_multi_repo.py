"""Several repositories make one report; one broken repository costs only its section."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from repoherald.config import build_settings
from repoherald.pipeline import run

WHEN = "2026-04-02T10:00:00+00:00"


def make_repo(path: Path, title: str) -> None:
    path.mkdir()
    env = {
        **os.environ, "GIT_AUTHOR_DATE": WHEN, "GIT_COMMITTER_DATE": WHEN,
        "GIT_AUTHOR_NAME": "Bo", "GIT_AUTHOR_EMAIL": "bo@example.com",
        "GIT_COMMITTER_NAME": "Bo", "GIT_COMMITTER_EMAIL": "bo@example.com",
    }  # fmt: skip
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "app.py").write_text("def main(): return 1\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", title], check=True, env=env)


def test_one_report_one_section_per_repo(tmp_path: Path) -> None:
    make_repo(tmp_path / "alpha", "[Feature] Add alpha (#1)")
    make_repo(tmp_path / "beta", "[Bugfix] Fix beta crash (#2)")
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text(
        '[report]\ntz = "UTC"\nname = "stack"\n\n'
        '[[repos]]\nsource = "alpha"\nname = "org/alpha"\n'
        'web_url = "https://github.com/org/alpha"\n\n[[repos]]\nsource = "beta"\n',
        encoding="utf-8",
    )
    settings = build_settings(
        config=str(cfg), day="2026-04-02", home=str(tmp_path / "home"), cwd=tmp_path
    )
    result = run(settings)
    assert result.ok
    md_path = next(p for p in result.written if p.suffix == ".md")
    assert md_path == tmp_path / "reports" / "2026" / "stack" / "2026-04-02.md"
    md = md_path.read_text(encoding="utf-8")
    assert md.count("\n## ") == 2
    assert "## org/alpha" in md and "## beta" in md
    assert "https://github.com/org/alpha/commit/" in md
    assert "https://github.com/org/alpha/pull/1" in md
    twin = json.loads(md_path.with_suffix(".json").read_text(encoding="utf-8"))
    assert [r["name"] for r in twin["repos"]] == ["org/alpha", "beta"]
    assert [r["stats"]["commits"] for r in twin["repos"]] == [1, 1]


def test_broken_repo_is_marked_and_fails_the_run(tmp_path: Path) -> None:
    make_repo(tmp_path / "good", "Add things")
    bad_url = f"file://{tmp_path}/missing.git"
    proc = subprocess.run(
        [sys.executable, "-m", "repoherald", "report", "--repo", str(tmp_path / "good"),
         "--repo", bad_url, "--date", "2026-04-02", "--tz", "UTC",
         "--out", str(tmp_path / "out"), "--home", str(tmp_path / "home")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    (md_path,) = (tmp_path / "out").glob("*/*/*.md")
    md = md_path.read_text(encoding="utf-8")
    assert "Add things" in md, "the healthy repository is still reported"
    assert "❌" in md and "cannot clone" in md, "the failure is said on the page"
    twin = json.loads(md_path.with_suffix(".json").read_text(encoding="utf-8"))
    assert twin["repos"][1]["error"] and twin["repos"][1]["commits"] == []
