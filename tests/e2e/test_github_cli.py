"""The README's three-repository setup through the real CLI: one via the GitHub API, two via git."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gitfixture import GitFixture, run_repoherald
from tests.github_day import DAY, TZ_NAME, busy_day, mixed_day
from tests.github_server import FakeGitHub


def test_run_reports_github_and_git_repositories_and_names_the_one_that_failed(
    tmp_path: Path,
) -> None:
    widget = GitFixture.init(tmp_path / "widget-src")
    mixed_day(widget)
    busy_day(GitFixture.init(tmp_path / "alpha"), 4)
    (tmp_path / "repoherald.toml").write_text(
        f'[report]\ntz = "{TZ_NAME}"\n\n'
        '[github]\napi_url = "{api}"\n\n'
        '[[repos]]\nsource = "github:acme/widget"\nname = "widget"\n\n'
        '[[repos]]\nsource = "alpha"\nlang = "en"\n\n'
        '[[repos]]\nsource = "github:acme/ghost"\nname = "ghost"\n\n'
        '[[repos]]\nsource = "github:acme/spook"\n',
        encoding="utf-8",
    )
    with FakeGitHub() as gh:
        gh.add_repo("acme/widget", widget.path)
        cfg = tmp_path / "repoherald.toml"
        cfg.write_text(cfg.read_text().replace("{api}", gh.api_url))
        home = str(tmp_path / "h")
        proc = run_repoherald("run", "--date", str(DAY), "--home", home, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    year = DAY.year
    got = json.loads((tmp_path / f"reports/{year}/widget/{DAY}.json").read_text())
    assert len(got["repos"][0]["commits"]) == 10
    assert (tmp_path / f"reports/{year}/alpha/{DAY}.en.md").is_file()  # lang = "en"
    failed = [ln for ln in proc.stderr.splitlines() if "failed:" in ln]
    # Each line names its repository once: as configured, else as owner/name.
    fix = "check owner/name, or set $GITHUB_TOKEN to a token that can see it"
    assert failed == [
        f"repoherald: failed: {name}: not found on GitHub (HTTP 404 for /repos/{path}): {fix}"
        for name, path in (("ghost", "acme/ghost"), ("acme/spook", "acme/spook"))
    ]
    assert "4 repositories: 2 report(s)" in proc.stderr
    assert "60 requests/hour" in proc.stderr  # the one warning about anonymous access
