"""A clone URL with credentials, against a real git server on 127.0.0.1 that demands them.

The token must work (first run clones, second fetches, a rotated token reuses
the mirror) and must never be written anywhere: not in the mirror (its
``config`` or any other file), the store, the reports, stdout or stderr, nor
on any process's command line while git talks to the server.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import stat
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.config import RepoConfig
from repoherald.sources import registry
from repoherald.sources.base import SourceContext
from repoherald.sources.git.mirror import mirror_path
from tests.gitfixture import GitFixture, run_git, run_repoherald
from tests.httpgit import GitHttpServer, serve

DAY = "2025-06-10"
USER = "alice"


@pytest.fixture
def token() -> str:
    return "tok_" + secrets.token_hex(16)


@pytest.fixture
def upstream(tmp_path: Path) -> GitFixture:
    fx = GitFixture.init(tmp_path / "work")
    fx.write("README.md", "# proj\n")
    fx.commit("Initial commit", when=datetime(2025, 6, 9, 9, tzinfo=UTC))
    fx.write("src/app.py", "def app():\n    pass\n")
    fx.commit("feat: app", when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    publish(fx, tmp_path)
    return fx


def publish(fx: GitFixture, tmp_path: Path) -> None:
    bare = tmp_path / "srv" / "proj.git"
    if not bare.exists():
        run_git(tmp_path, "init", "--quiet", "--bare", str(bare))
        run_git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    fx.git("push", "--quiet", "--force", str(bare), "main:main")


@pytest.fixture
def server(tmp_path: Path, upstream: GitFixture, token: str) -> Iterator[GitHttpServer]:
    srv = GitHttpServer(tmp_path / "srv", {USER: token}, watch=(token.encode(),))
    with serve(srv) as running:
        yield running


def report(tmp_path: Path, *repos: str, home: str = "home") -> subprocess.CompletedProcess[str]:
    """The URLs go in a config file, as they would in production (not on a command line)."""
    config = tmp_path / f"{home}.toml"
    config.write_text("".join(f"[[repos]]\nsource = {json.dumps(r)}\n\n" for r in repos))
    try:
        return run_repoherald(
            "report", "--config", str(config), "--date", DAY, "--tz", "UTC",
            "--out", str(tmp_path / "out"), "--home", str(tmp_path / home), cwd=tmp_path,
        )  # fmt: skip
    finally:
        config.unlink()


def files_containing(root: Path, needle: str) -> list[Path]:
    data = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


def assert_nowhere(tmp_path: Path, secret: str, *procs: subprocess.CompletedProcess[str]) -> None:
    for proc in procs:
        assert secret not in proc.stdout + proc.stderr, proc.stderr
    for where in ("home", "home2", "out"):
        if (tmp_path / where).exists():
            assert files_containing(tmp_path / where, secret) == []


def mirrors(tmp_path: Path, home: str = "home") -> list[Path]:
    return sorted((tmp_path / home / "mirrors").iterdir())


def twin(tmp_path: Path) -> dict:
    (path,) = (tmp_path / "out").rglob(f"{DAY}.json")
    return json.loads(path.read_text(encoding="utf-8"))


def test_token_works_and_is_written_nowhere(
    tmp_path: Path, upstream: GitFixture, server: GitHttpServer, token: str
) -> None:
    url = server.url("proj.git", USER, token)
    first = report(tmp_path, url)
    assert first.returncode == 0, first.stderr
    assert [c["title"] for c in twin(tmp_path)["repos"][0]["commits"]] == ["feat: app"]
    assert server.record.refused >= 1, "the server asked for credentials"
    assert server.record.users and set(server.record.users) == {USER}

    upstream.write("src/more.py", "x = 1\n")
    upstream.commit("feat: more", when=datetime(2025, 6, 10, 11, tzinfo=UTC))
    publish(upstream, tmp_path)
    second = report(tmp_path, url)
    assert second.returncode == 0, second.stderr
    assert [c["title"] for c in twin(tmp_path)["repos"][0]["commits"]] == [
        "feat: more",
        "feat: app",
    ]

    (mirror,) = mirrors(tmp_path)
    clean = server.url("proj.git")
    assert run_git(mirror, "config", "--get", "remote.origin.url").decode().strip() == clean
    assert stat.S_IMODE((tmp_path / "home" / "mirrors").stat().st_mode) == 0o700
    assert server.record.cmdline_leaks == []
    assert_nowhere(tmp_path, token, first, second)


def test_wrong_password_is_one_line_without_it(
    tmp_path: Path, server: GitHttpServer, token: str
) -> None:
    wrong = "wrong_" + secrets.token_hex(12)
    assert report(tmp_path, server.url("proj.git", USER, token)).returncode == 0

    for home in ("home", "home2"):  # an existing mirror (fetch) and a fresh home (clone)
        proc = report(tmp_path, server.url("proj.git", USER, wrong), home=home)
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("repoherald: error: "), lines
        assert "Authentication failed" in lines[0], lines[0]
        assert server.url("proj.git") in lines[0]
        assert_nowhere(tmp_path, wrong, proc)
        assert_nowhere(tmp_path, token, proc)
    assert not (tmp_path / "home2" / "mirrors").exists() or mirrors(tmp_path, "home2") == []


def test_failure_published_in_report_and_runs_table_is_redacted(
    tmp_path: Path, upstream: GitFixture, server: GitHttpServer, token: str
) -> None:
    """With two repositories, a failed one is reported on the page: its URL without the token."""
    wrong = "wrong_" + secrets.token_hex(12)
    proc = report(tmp_path, str(upstream.path), server.url("proj.git", USER, wrong))
    assert proc.returncode == 1, proc.stderr
    (md,) = (tmp_path / "out").rglob(f"{DAY}.md")
    assert "Authentication failed" in md.read_text(encoding="utf-8")
    assert server.url("proj.git") in md.read_text(encoding="utf-8")
    assert_nowhere(tmp_path, wrong, proc)


def test_rotated_token_reuses_the_mirror(tmp_path: Path, server: GitHttpServer, token: str) -> None:
    assert report(tmp_path, server.url("proj.git", USER, token)).returncode == 0
    before = mirrors(tmp_path)
    rotated = "tok_" + secrets.token_hex(16)
    server.accounts[USER] = rotated
    server.watch = (token.encode(), rotated.encode())
    proc = report(tmp_path, server.url("proj.git", USER, rotated))
    assert proc.returncode == 0, proc.stderr
    assert mirrors(tmp_path) == before
    assert server.record.cmdline_leaks == []
    assert_nowhere(tmp_path, rotated, proc)


def test_token_as_user_name(tmp_path: Path, server: GitHttpServer) -> None:
    """``https://TOKEN@host/…`` (GitHub's form): the user name is the secret."""
    bare_token = "ghs_" + secrets.token_hex(16)
    server.accounts[bare_token] = ""
    server.watch = (bare_token.encode(),)
    proc = report(tmp_path, f"http://{bare_token}@127.0.0.1:{server.port}/proj.git")
    assert proc.returncode == 0, proc.stderr
    assert bare_token in server.record.users
    assert server.record.cmdline_leaks == []
    assert_nowhere(tmp_path, bare_token, proc)


def test_mirror_made_by_an_older_version_is_adopted_and_scrubbed(
    tmp_path: Path, server: GitHttpServer, token: str
) -> None:
    """Older versions keyed the mirror by the URL with its token and kept that URL in config."""
    url = server.url("proj.git", USER, token)
    mirrors_dir = tmp_path / "home" / "mirrors"
    new = mirror_path(mirrors_dir, server.url("proj.git"))
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    legacy = new.with_name(f"{new.name.rsplit('-', 1)[0]}-{digest}.git")
    run_git(tmp_path, "clone", "--quiet", "--bare", url, str(legacy))
    assert files_containing(legacy, token), "the old layout kept the token in config"

    proc = report(tmp_path, url)
    assert proc.returncode == 0, proc.stderr
    assert mirrors(tmp_path) == [new]
    assert_nowhere(tmp_path, token, proc)


def test_source_identity_and_name_carry_no_credentials(
    tmp_path: Path, server: GitHttpServer, token: str
) -> None:
    cfg = RepoConfig(source=server.url("proj.git", USER, token))
    since = int(datetime(2025, 6, 10, tzinfo=UTC).timestamp())
    ctx = SourceContext(mirrors_dir=tmp_path / "mirrors", earliest=since)
    source = registry.open_source(cfg, ctx)
    try:
        assert source.info.identity == server.url("proj.git")
        assert source.info.name == "proj"
        assert registry.display_name(cfg) == "proj"
        assert [sha for sha, _ in source.history()]
    finally:
        source.close()
    assert server.record.cmdline_leaks == []
