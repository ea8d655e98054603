"""Shared fixtures: a real git repository, an isolated home, a real store on either backend.

Tests build what they need from these instead of carrying their own git
helpers; see :mod:`tests.gitfixture` for the repository builder.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture
from tests.pgcluster import INSTALL_HINT, PgCluster, find_bindir, start_cluster
from tests.storefixture import StoreAt


@pytest.fixture
def git_repo(tmp_path: Path) -> GitFixture:
    """An empty non-bare repository on branch ``main`` with pinned identities."""
    return GitFixture.init(tmp_path / "repo")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``REPOHERALD_HOME`` so no test touches the user's store or mirrors."""
    path = tmp_path / "home"
    monkeypatch.setenv("REPOHERALD_HOME", str(path))
    return path


@pytest.fixture
def memory_store() -> Iterator[Store]:
    """A migrated SQLite store that lives in memory for one test."""
    with Store.open(Path(":memory:")) as store:
        yield store


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A throwaway PostgreSQL cluster for the session (started on first use, then stopped)."""
    bindir = find_bindir()
    if bindir is None:
        pytest.fail(INSTALL_HINT, pytrace=False)
    cluster = start_cluster(bindir)
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.root, ignore_errors=True)


@pytest.fixture
def pg_database(pg_cluster: PgCluster) -> Iterator[str]:
    """A fresh, empty database on the session's cluster for one test; its name."""
    name = pg_cluster.create_database()
    yield name
    pg_cluster.drop_database(name)


@pytest.fixture(params=["sqlite", "postgres"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> StoreAt:
    """Where one test's store lives: an SQLite file, or a fresh PostgreSQL database.

    Tests of the store's behaviour take this, so they run on both backends.
    """
    path = tmp_path / "home" / "repoherald.db"
    if request.param == "sqlite":
        return StoreAt("sqlite", path)
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    name: str = request.getfixturevalue("pg_database")
    return StoreAt("postgres", path, cluster.url(name))
