"""Every way the CLI can be misused or fail: exit status, one-line message, no traceback.

Exit status 2 is a usage error (the user can fix the command line or the
configuration), 1 a runtime failure (something could not be read or
written). Either way stderr carries one line starting ``repoherald: error:``
and never a traceback unless ``--debug`` asks for one.
"""

from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.cli import main
from tests.gitfixture import GitFixture, run_repoherald

DAY = "2025-06-10"
PROGRESS = re.compile(r"^\S.*: analysing \d+ commits? \(\d+ cached\)$")


@pytest.fixture
def repo(tmp_path: Path) -> GitFixture:
    fx = GitFixture.init(tmp_path / "proj")
    fx.write("README.md", "# proj\n")
    fx.commit("Initial commit", when=datetime(2025, 6, 9, 9, tzinfo=UTC))
    fx.write("src/app.py", "def app():\n    pass\n")
    fx.commit("feat: app", when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    return fx


def run(tmp_path: Path, *args: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_repoherald(
        "report",
        "--out",
        str(out or tmp_path / "out"),
        "--home",
        str(tmp_path / "home"),
        *args,
        cwd=tmp_path,
    )


def assert_error(
    proc: subprocess.CompletedProcess[str], code: int, *fragments: str, progress_ok: bool = False
) -> str:
    """Exit ``code``; stderr is exactly one ``repoherald: error:`` line; returns it."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    if progress_ok:
        assert all(PROGRESS.match(ln) for ln in lines[:-1]), lines
    else:
        assert len(lines) == 1, lines
    line = lines[-1]
    assert line.startswith("repoherald: error: "), line
    assert sum("repoherald: error:" in ln for ln in lines) == 1
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    assert proc.stdout == "", proc.stdout
    return line


def no_reports(out: Path) -> None:
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


# -- repositories ----------------------------------------------------------------------


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "does-not-exist"
    proc = run(tmp_path, "--repo", str(missing), "--date", DAY, "--tz", "UTC")
    assert_error(proc, 2, str(missing), "source")
    no_reports(tmp_path / "out")


def test_path_that_is_not_a_git_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("not a repo\n")
    proc = run(tmp_path, "--repo", str(plain), "--date", DAY, "--tz", "UTC")
    assert_error(proc, 2, str(plain), "not a git repository")
    no_reports(tmp_path / "out")


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("file:///nonexistent/repo.git", "does not appear to be a git repository"),
        ("http://127.0.0.1:9/x.git", "127.0.0.1"),
    ],
)
def test_unreachable_url(tmp_path: Path, url: str, cause: str) -> None:
    proc = run(tmp_path, "--repo", url, "--date", DAY, "--tz", "UTC")
    line = assert_error(proc, 1, url, cause)
    # The cause, not git's generic trailer, is what the user gets to read.
    assert not line.rstrip().endswith("and the repository exists.")
    no_reports(tmp_path / "out")
    mirrors = tmp_path / "home" / "mirrors"
    assert not mirrors.exists() or not list(mirrors.iterdir()), list(mirrors.iterdir())


def test_unknown_branch_local(tmp_path: Path, repo: GitFixture) -> None:
    proc = run(tmp_path, "--repo", str(repo.path), "--branch", "nope", "--date", DAY, "--tz", "UTC")
    assert_error(proc, 2, "'nope'", "main")
    no_reports(tmp_path / "out")


def test_unknown_branch_remote(tmp_path: Path, repo: GitFixture) -> None:
    url = repo.path.as_uri()
    proc = run(tmp_path, "--repo", url, "--branch", "nope", "--date", DAY, "--tz", "UTC")
    assert_error(proc, 2, "'nope'")
    no_reports(tmp_path / "out")


def test_branch_that_looks_like_an_option(tmp_path: Path, repo: GitFixture) -> None:
    proc = run(
        tmp_path, "--repo", str(repo.path), "--branch", "--upload-pack=touch x", "--date", DAY
    )
    assert_error(proc, 2, "branch")
    assert not (tmp_path / "x").exists()


def test_no_repository_given(tmp_path: Path) -> None:
    proc = run(tmp_path, "--date", DAY)
    assert_error(proc, 2, "--repo")


# -- dates and zones -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["2026-13-45", "yesterdayy", "2025-02-29", "10/06/2025", ""])
def test_malformed_date(tmp_path: Path, repo: GitFixture, value: str) -> None:
    proc = run(tmp_path, "--repo", str(repo.path), "--date", value, "--tz", "UTC")
    assert_error(proc, 2, "date")
    no_reports(tmp_path / "out")


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "../../etc/passwd", "UTC+8"])
def test_unknown_time_zone(tmp_path: Path, repo: GitFixture, zone: str) -> None:
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", zone)
    assert_error(proc, 2, "time zone", repr(zone))


def test_date_with_since(tmp_path: Path, repo: GitFixture) -> None:
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--since", "2025-06-01")
    assert_error(proc, 2, "--date", "--since")


def test_until_before_since(tmp_path: Path, repo: GitFixture) -> None:
    proc = run(tmp_path, "--repo", str(repo.path), "--since", "2025-06-10", "--until", "2025-06-01")
    assert_error(proc, 2, "--until")


# -- configuration -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        (b"[report\ntz = 'UTC'\n", ("not valid TOML",)),
        (b"[report]\ntz = 'UTC'\nbogus = 1\n", ("report.bogus",)),
        (b"[[repos]]\nsource = '.'\nbrnach = 'main'\n", ("repos.0.brnach",)),
        (b"[report]\nlang = 'fr'\n", ("report.lang",)),
        (b"[report]\ntz = '\xff\xfe'\n", ("UTF-8",)),
    ],
    ids=["invalid-toml", "unknown-key", "unknown-repo-key", "bad-value", "not-utf8"],
)
def test_bad_config_file(
    tmp_path: Path, repo: GitFixture, content: bytes, fragments: tuple[str, ...]
) -> None:
    cfg = tmp_path / "repoherald.toml"
    cfg.write_bytes(content)
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--config", str(cfg))
    assert_error(proc, 2, str(cfg), *fragments)
    no_reports(tmp_path / "out")


def test_bad_config_file_found_in_working_directory(tmp_path: Path, repo: GitFixture) -> None:
    (tmp_path / "repoherald.toml").write_text("[report]\nnope = true\n")
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY)
    assert_error(proc, 2, "report.nope")


def test_missing_config_file(tmp_path: Path, repo: GitFixture) -> None:
    cfg = tmp_path / "nowhere" / "repoherald.toml"
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--config", str(cfg))
    assert_error(proc, 2, str(cfg), "does not exist")


# -- flags click itself rejects -------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["--lang", "fr"], ["--bogus-flag"], ["--repo"]],
    ids=["bad-choice", "unknown-option", "missing-value"],
)
def test_flag_errors_use_the_same_one_line_format(
    tmp_path: Path, repo: GitFixture, args: list[str]
) -> None:
    proc = run(tmp_path, "--date", DAY, *args)
    assert_error(proc, 2)


# -- --debug ---------------------------------------------------------------------------


def test_debug_shows_the_traceback(tmp_path: Path, repo: GitFixture) -> None:
    proc = run(tmp_path, "--repo", str(repo.path), "--branch", "nope", "--date", DAY, "--debug")
    assert proc.returncode == 2
    assert "Traceback (most recent call last)" in proc.stderr
    assert "UsageError" in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("repoherald: error: ")]
    assert len(errors) == 1 and "'nope'" in errors[0]


def test_in_process_main_exits_with_status(
    tmp_path: Path, repo: GitFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "report",
                "--repo",
                str(repo.path),
                "--date",
                "2026-13-45",
                "--home",
                str(tmp_path / "home"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "repoherald: error: invalid date '2026-13-45' for --date: no such calendar day"
    ]


# -- runtime failures while writing ------------------------------------------------------


def _make_unwritable(path: Path, request: pytest.FixtureRequest) -> None:
    """Make ``path`` (a directory) unwritable even for root (chattr +i when running as root).

    This fails rather than skips where it cannot be done: a skipped test would
    hide that atomic writes went unchecked.
    """
    path.chmod(0o555)
    request.addfinalizer(lambda: path.chmod(0o755))
    if os.access(path, os.W_OK):  # root ignores permission bits
        proc = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
        if proc.returncode != 0:
            pytest.fail(f"cannot make {path} read-only as root: chattr +i failed: {proc.stderr!r}")
        request.addfinalizer(
            lambda: subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        )
    probe = path / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return
    probe.unlink()
    pytest.fail(f"{path} stayed writable: this test cannot check unwritable output here")


def _leftovers(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]


def test_read_only_out_dir(
    tmp_path: Path, repo: GitFixture, request: pytest.FixtureRequest
) -> None:
    out = tmp_path / "ro-out"
    out.mkdir()
    _make_unwritable(out, request)
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", "UTC", out=out)
    assert_error(proc, 1, "cannot write", str(out), progress_ok=True)
    assert list(out.iterdir()) == []


def test_failed_rewrite_leaves_old_report_intact(
    tmp_path: Path, repo: GitFixture, request: pytest.FixtureRequest
) -> None:
    out = tmp_path / "out"
    first = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", "UTC", out=out)
    assert first.returncode == 0, first.stderr
    (md,) = out.glob("*/*/*.md")
    before = {p: p.read_bytes() for p in md.parent.iterdir()}
    # A later commit of the same day changes the report, so it must be rewritten
    # (an unchanged report is left alone and would not try).
    repo.write("src/app.py", "def app():\n    return 1\n")
    repo.commit("fix: app returns 1", when=datetime(2025, 6, 10, 10, tzinfo=UTC))
    _make_unwritable(md.parent, request)
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", "UTC", out=out)
    assert_error(proc, 1, "cannot write", progress_ok=True)
    assert {p: p.read_bytes() for p in md.parent.iterdir()} == before
    assert _leftovers(out) == []


def test_rename_failure_removes_temp_file(tmp_path: Path, repo: GitFixture) -> None:
    """The temp file is written, then cannot replace the target: it must not stay behind."""
    out = tmp_path / "out"
    target = out / "2025" / "proj" / f"{DAY}.md"
    target.mkdir(parents=True)  # a directory where the report should go
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", "UTC", out=out)
    assert_error(proc, 1, "cannot write", str(target), progress_ok=True)
    assert _leftovers(out) == []
    assert not (target.parent / f"{DAY}.json").exists()
    assert list(target.iterdir()) == []


def test_out_path_under_a_file(tmp_path: Path, repo: GitFixture) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("I am a file\n")
    proc = run(
        tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", "UTC", out=blocker / "out"
    )
    assert_error(proc, 1, "cannot write", progress_ok=True)
    assert blocker.read_text() == "I am a file\n"


def test_home_is_a_file(tmp_path: Path, repo: GitFixture) -> None:
    home = tmp_path / "home"
    home.write_text("not a directory\n")
    proc = run(tmp_path, "--repo", str(repo.path), "--date", DAY, "--tz", "UTC")
    assert_error(proc, 1, str(home))
    no_reports(tmp_path / "out")


def test_one_unreadable_repository_among_several(tmp_path: Path, repo: GitFixture) -> None:
    """The readable repository is still reported; the run fails (exit 1) and says why."""
    bad = "file:///nonexistent/other.git"
    proc = run(tmp_path, "--repo", str(repo.path), "--repo", bad, "--date", DAY, "--tz", "UTC")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    failed = [ln for ln in proc.stderr.splitlines() if ln.startswith("repoherald: failed: ")]
    assert len(failed) == 1 and bad in failed[0]
    (md,) = (tmp_path / "out").glob("*/*/*.md")
    text = md.read_text(encoding="utf-8")
    assert "本日共 1 个提交" in text
    assert "无法读取该仓库" in text
