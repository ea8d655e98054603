"""A throwaway PostgreSQL cluster for the tests: ``initdb`` + ``pg_ctl`` on a socket in a temp dir.

The cluster is started once per test session, only when a test asks for it
(:func:`tests.conftest.pg_cluster`), and stopped at the end. It listens on
a Unix socket only (no port for eight test sessions to fight over) and
authenticates with a password (scram-sha-256), so the tests of a wrong
password meet the server's real refusal. Durability is switched off: the
data is thrown away.

PostgreSQL refuses to run as root, and CI runs as root: then the server runs
as the ``postgres`` user the Debian package creates (or ``nobody``), through
``runuser``, and the temp dir is handed to that user. Missing binaries make
the tests that need them fail, with one line saying what to install.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import psycopg

INSTALL_HINT = (
    "PostgreSQL's server binaries (initdb, pg_ctl) were not found: install the postgresql"
    " package (apt-get install -y --no-install-recommends postgresql)"
)

SUPERUSER = "repoherald"


def find_bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: ``pg_config --bindir``, else Debian's layout."""
    candidates: list[Path] = []
    if shutil.which("pg_config"):
        out = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if out:
            candidates.append(Path(out))
    candidates += [
        Path(p)
        for p in sorted(
            glob.glob("/usr/lib/postgresql/*/bin"),
            key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
            reverse=True,
        )
    ]
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    return None


def _server_user() -> str | None:
    """Who runs the server: None (this user) unless this is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise RuntimeError("running as root and no postgres or nobody user to run the server as")


@dataclass
class PgCluster:
    """A running cluster: its directory, socket, superuser password, and databases to hand out."""

    bindir: Path
    root: Path
    password: str
    user: str | None
    _numbers: count[int] = field(default_factory=lambda: count(1))

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def url(self, database: str, *, password: str | None = None) -> str:
        """A ``postgresql://`` URL of ``database`` here (with the right password by default)."""
        secret = urllib.parse.quote(self.password if password is None else password, safe="")
        host = urllib.parse.quote(str(self.socket_dir), safe="")
        return f"postgresql://{SUPERUSER}:{secret}@/{database}?host={host}"

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.url("postgres"), autocommit=True)

    def create_database(self, prefix: str = "store") -> str:
        """A new empty database; returns its name."""
        name = f"{prefix}_{os.getpid()}_{next(self._numbers)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def terminate(self, database: str) -> int:
        """End every backend connected to ``database`` (a lost connection); returns how many."""
        with self.admin() as conn:
            row = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            ).fetchone()
        return int(str(row[0])) if row else 0

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        data = self.root / "data"
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        self.socket_dir.mkdir()
        if self.user:
            entry = pwd.getpwnam(self.user)
            for path in (self.root, pwfile, self.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            "--auth=scram-sha-256",
            f"--pwfile={pwfile}",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-k {self.socket_dir} -c listen_addresses='' -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "start",
        )

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "stop")


def start_cluster(bindir: Path) -> PgCluster:
    """Create and start a cluster in a fresh temp dir (owned by the server's user)."""
    root = Path(tempfile.mkdtemp(prefix="repoherald-pg-"))
    cluster = PgCluster(bindir, root, secrets.token_hex(16), _server_user())
    try:
        cluster.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return cluster
