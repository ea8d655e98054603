"""A third-party plugin used from the CLI: the example package's source and publisher.

The package in ``tests/data/plugin_example`` declares its entry points in its
own ``pyproject.toml``; it is made importable through a ``.dist-info`` on
PYTHONPATH (:mod:`tests.plugin_site`) rather than pip, so the test needs
no network and no build.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.gitfixture import GitFixture, run_repoherald
from tests.plugin_site import install_example, write_dist

DAY = datetime(2026, 3, 4, tzinfo=UTC).date()
NOON = int(datetime(2026, 3, 4, 12, tzinfo=UTC).timestamp())


def _history(path: Path) -> None:
    """Two commits on DAY (the newest first), and one the day before."""
    commits = [
        {
            "sha": f"{n}" * 40,
            "time": NOON + n * 60 - (86400 if n == 1 else 0),
            "author": "Ann Example",
            "email": "ann@example.org",
            "message": title,
            "patch": f"--- a/{f}\n+++ b/{f}\n@@ -0,0 +1 @@\n+x = 1\n",
            "files": [{"path": f, "status": "added", "added": 1, "deleted": 0}],
        }
        for n, title, f in [
            (3, "Add the example exporter", "pkg/exporter.py"),
            (2, "Fix the example parser on empty input", "pkg/parser.py"),
            (1, "Initial import", "pkg/__init__.py"),
        ]
    ]
    path.write_text(json.dumps({"name": "jsonrepo", "commits": commits}), encoding="utf-8")


def test_report_reads_a_repository_through_a_plugin_source(tmp_path: Path) -> None:
    _history(tmp_path / "commits.json")
    paths = install_example(tmp_path / "site")
    args = ("--repo", "example:commits.json", "--date", str(DAY), "--tz", "UTC", "--lang", "en")
    proc = run_repoherald(
        "report", *args, "--home", str(tmp_path / "home"), cwd=tmp_path, pythonpath=paths
    )
    assert proc.returncode == 0, proc.stderr
    report = tmp_path / f"reports/{DAY.year}/jsonrepo/{DAY}.en.md"
    text = report.read_text(encoding="utf-8")
    assert "Add the example exporter" in text and "Fix the example parser" in text
    assert "Initial import" not in text  # the day before
    twin = json.loads(report.with_suffix(".json").read_text(encoding="utf-8"))
    assert [r["name"] for r in twin["repos"]] == ["jsonrepo"]


def test_run_delivers_through_a_plugin_publisher(tmp_path: Path) -> None:
    _history(tmp_path / "commits.json")
    paths = install_example(tmp_path / "site")
    (tmp_path / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\nlang = "en"\n\n'
        '[[repos]]\nsource = "example:commits.json"\n\n'
        '[[publish]]\ntype = "example"\npath = "delivered.txt"\nprefix = "daily"\n',
        encoding="utf-8",
    )
    home = str(tmp_path / "home")
    proc = run_repoherald("run", "--date", str(DAY), "--home", home, cwd=tmp_path, pythonpath=paths)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "delivered.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    prefix, name, day, lang, size = lines[0].split()
    assert (prefix, name, day, lang) == ("daily", "jsonrepo", str(DAY), "en")
    report = tmp_path / f"reports/{DAY.year}/jsonrepo/{DAY}.en.md"
    assert int(size) == len(report.read_text(encoding="utf-8"))


def test_a_broken_plugin_is_one_line_and_the_builtins_still_work(tmp_path: Path) -> None:
    fx = GitFixture.init(tmp_path / "repo")
    fx.write("a.py", "x = 1\n")
    fx.commit("Add a", when=datetime(2026, 3, 4, 12, tzinfo=UTC))
    site = tmp_path / "site"
    write_dist(
        site,
        "repoherald-broken",
        "0.3",
        {
            "repoherald.sources": {"broken": "repoherald_no_such_module:Backend"},
            "repoherald.publishers": {"git": "json:JSONDecoder"},
            "repoherald.analysers": {"rules": "json:JSONDecoder"},
        },
    )
    args = ("--repo", "repo", "--name", "repo", "--date", str(DAY), "--tz", "UTC", "--lang", "en")
    proc = run_repoherald(
        "report", *args, "--home", str(tmp_path / "home"), cwd=tmp_path, pythonpath=[site]
    )
    assert proc.returncode == 0, proc.stderr
    assert "Add a" in (tmp_path / f"reports/{DAY.year}/repo/{DAY}.en.md").read_text("utf-8")
    assert "Traceback" not in proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "repoherald-broken" in line]
    assert len(warned) == 2, proc.stderr  # the source, the analyser; the publisher is not loaded
    [source] = [line for line in warned if "repoherald.sources" in line]
    [analyser] = [line for line in warned if "repoherald.analysers" in line]
    assert "plugin broken (repoherald.sources" in source
    assert "ModuleNotFoundError" in source and "fix or uninstall it" in source
    assert "plugin rules (repoherald.analysers" in analyser
    assert "already provided by repoherald: rename it" in analyser


def test_an_unknown_scheme_is_one_line_naming_the_known_ones(tmp_path: Path) -> None:
    proc = run_repoherald(
        "report",
        "--repo",
        "example:commits.json",
        "--date",
        str(DAY - timedelta(days=1)),
        "--home",
        str(tmp_path / "home"),
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "unknown source scheme 'example': use github:owner/name" in proc.stderr
    assert "Traceback" not in proc.stderr
