"""Shared fixtures: a real git repository, an isolated home, a real (in-memory) store.

Tests build what they need from these instead of carrying their own git
helpers; see :mod:`tests.gitfixture` for the repository builder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture


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
