"""Nothing a repository source, a branch name or a repository's own config says can run a command.

Each attack is set up so that it *works* on a git backend that passes a value
where git reads options, or lets a transport run: the tests then show that the
marker file the payload would create never appears, and that the run either
works or refuses with one line.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.errors import UsageError
from repoherald.sources.git.mirror import Remote, deepen, ensure_mirror, parse_remote
from tests.gitfixture import GitFixture, run_git, run_repoherald

DAY = "2025-06-10"
WHEN = datetime(2025, 6, 10, 9, tzinfo=UTC)
# A source that git would take for an option, containing "://" so repoherald
# treats it as remote, and with a "/" before the first ":" so git reads the
# rest as a local path: a bundle placed there clones fine.
PAYLOAD_DIR = "--upload-pack=touch PWNED;cd /;x:"
HOSTILE = "--upload-pack=touch PWNED;cd /;x://proj.bundle"


def report(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_repoherald(
        "report", "--date", DAY, "--tz", "UTC", "--out", str(cwd / "out"),
        "--home", str(cwd / "home"), *args, cwd=cwd,
    )  # fmt: skip


def one_line(proc: subprocess.CompletedProcess[str], code: int, *fragments: str) -> str:
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("repoherald: error: "), lines
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def upstream(tmp_path: Path) -> GitFixture:
    fx = GitFixture.init(tmp_path / "upstream")
    fx.write("README.md", "# proj\n")
    fx.commit("Initial commit", when=datetime(2025, 6, 9, 9, tzinfo=UTC))
    fx.write("src/app.py", "def app():\n    pass\n")
    fx.commit("feat: app", when=WHEN)
    return fx


@pytest.fixture
def bundle_trap(tmp_path: Path, upstream: GitFixture) -> Path:
    """A working directory holding a git bundle at the path the hostile source names."""
    cwd = tmp_path / "checkout"
    (cwd / PAYLOAD_DIR).mkdir(parents=True)
    upstream.git("bundle", "create", "--quiet", str(cwd / PAYLOAD_DIR / "proj.bundle"), "main")
    return cwd


def test_option_shaped_source_is_refused_on_every_run(bundle_trap: Path) -> None:
    # The second run is where the incremental fetch used to run CMD.
    runs = [report(bundle_trap, "--repo", HOSTILE) for _ in range(2)]
    assert not (bundle_trap / "PWNED").exists()
    for proc in runs:
        one_line(proc, 2, "must not begin with '-'")
    assert not (bundle_trap / "out").exists()


def test_option_shaped_source_in_an_auto_loaded_config(bundle_trap: Path) -> None:
    """A checkout that ships ./repoherald.toml is enough to try this."""
    toml = f'[[repos]]\nsource = {json.dumps(HOSTILE)}\nbranch = "main"\n'
    (bundle_trap / "repoherald.toml").write_text(toml, encoding="utf-8")
    runs = [report(bundle_trap) for _ in range(2)]
    assert not (bundle_trap / "PWNED").exists()
    for proc in runs:
        one_line(proc, 2, "must not begin with '-'")


def test_same_path_written_as_a_path_works_twice_and_runs_nothing(bundle_trap: Path) -> None:
    for _ in range(2):  # clone from the bundle, then fetch from it
        proc = report(bundle_trap, "--repo", "./" + HOSTILE, "--branch", "main")
        assert proc.returncode == 0, proc.stderr
        assert not (bundle_trap / "PWNED").exists()
    (twin,) = (bundle_trap / "out").rglob(f"{DAY}.json")
    commits = json.loads(twin.read_text(encoding="utf-8"))["repos"][0]["commits"]
    assert [c["title"] for c in commits] == ["feat: app"]
    assert "1 from cache" in proc.stderr


def test_fetch_and_deepen_pass_the_url_as_an_operand(
    bundle_trap: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below the '-' check: even an option-shaped URL given to the mirror code stays a URL."""
    monkeypatch.chdir(bundle_trap)
    mirrors = bundle_trap / "home" / "mirrors"
    hostile = Remote(url=HOSTILE, display=HOSTILE, transport="file")
    since = int(WHEN.timestamp())
    repo = ensure_mirror(hostile, mirrors, "main", since)  # clone
    repo = ensure_mirror(hostile, mirrors, "main", since)  # fetch
    deepen(repo, hostile, "main", by=1)
    deepen(repo, hostile, "main", since=since - 30 * 86400)
    assert not (bundle_trap / "PWNED").exists()
    assert repo.resolve_branch("main") is not None


@pytest.mark.parametrize("branch", ["--upload-pack=touch PWNED", "-x", " ", "a\nb"])
@pytest.mark.parametrize("remote", [False, True])
def test_option_shaped_branch_is_refused(
    tmp_path: Path, upstream: GitFixture, branch: str, remote: bool
) -> None:
    source = upstream.path.as_uri() if remote else str(upstream.path)
    proc = report(tmp_path, "--repo", source, "--branch", branch)
    one_line(proc, 2, "invalid branch name", "branch setting")
    assert not (tmp_path / "PWNED").exists()
    assert not (tmp_path / "home" / "mirrors").exists() or not any(
        (tmp_path / "home" / "mirrors").iterdir()
    )


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("ftp://127.0.0.1/x.git", "unsupported URL scheme 'ftp'"),
        ("foo://127.0.0.1/x.git", "unsupported URL scheme 'foo'"),
        ("-u://x", "must not begin with '-'"),
    ],
)
def test_sources_outside_the_allow_list(source: str, fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment.replace("'", ".")):
        parse_remote(source)


def test_transport_outside_the_allow_list_is_refused_by_git(tmp_path: Path) -> None:
    """A ``file`` fetch of a network URL's mirror: git itself refuses what is not allowed."""
    up = GitFixture.init(tmp_path / "up")
    up.write("a.txt", "a\n")
    up.commit("a", when=WHEN)
    remote = Remote(url=up.path.as_uri(), display=up.path.as_uri(), transport="https")
    with pytest.raises(Exception, match="transport 'file' not allowed"):
        ensure_mirror(remote, tmp_path / "mirrors", None, int(WHEN.timestamp()))


def _promisor_trap(tmp_path: Path) -> Path:
    """A bare repository, as plain files anyone can ship, whose config makes a read fetch.

    It claims to be a partial clone whose promisor remote is a local path with
    a custom upload-pack command, and allows every protocol itself. Its only
    commit points at a tree it does not have, so diffing it triggers the lazy
    fetch — which would run the command.
    """
    up = GitFixture.init(tmp_path / "up")
    up.write("a.txt", "a\n")
    up.commit("a", when=WHEN)
    evil = GitFixture.init(tmp_path / "evil", bare=True)
    raw = (
        f"tree {up.tree_of()}\nauthor A <a@example.com> {int(WHEN.timestamp())} +0000\n"
        f"committer A <a@example.com> {int(WHEN.timestamp())} +0000\n\nEvil\n"
    ).encode()
    sha = run_git(evil.path, "hash-object", "-w", "-t", "commit", "--literally", "--stdin",
                  input=raw).decode().strip()  # fmt: skip
    evil.git("update-ref", "refs/heads/main", sha)
    with (evil.path / "config").open("a", encoding="utf-8") as cfg:
        cfg.write(
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialClone = origin\n"
            f'[remote "origin"]\n\turl = {up.path.as_uri()}\n\tpromisor = true\n'
            f"\tuploadpack = touch {tmp_path / 'PWNED'}; git-upload-pack\n"
            '[protocol]\n\tallow = always\n[protocol "file"]\n\tallow = always\n'
        )
    return evil.path


def test_a_repositorys_own_config_cannot_make_a_read_fetch(tmp_path: Path) -> None:
    evil = _promisor_trap(tmp_path)
    proc = report(tmp_path, "--repo", str(evil))
    assert not (tmp_path / "PWNED").exists()
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr


def test_partial_clone_is_read_without_fetching_and_says_what_to_do(
    tmp_path: Path, upstream: GitFixture
) -> None:
    """The flip side of reads without transports: a blob-less clone is not filled in behind
    the user's back; the one line says to give the clone URL instead."""
    upstream.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    run_git(tmp_path, "clone", "--quiet", "--filter=blob:none", "--no-checkout",
            upstream.path.as_uri(), str(clone))  # fmt: skip
    proc = report(tmp_path, "--repo", str(clone))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("repoherald: error: ")]
    assert len(errors) == 1 and proc.stderr.splitlines()[-1] == errors[0], proc.stderr
    assert "partial clone" in errors[0] and "clone URL" in errors[0], errors[0]
