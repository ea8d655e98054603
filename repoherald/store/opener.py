"""Which store a location names, opened: the one place that picks a backend.

Everything outside :mod:`repoherald.store` opens its store here and holds it
as a :class:`~repoherald.store.base.Store`. Today every location is an SQLite
file (or ``:memory:``); a PostgreSQL backend would add its scheme here and
its class in a module of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repoherald.store.base import Store
from repoherald.store.connect import DEFAULT_WAIT_SECONDS
from repoherald.store.db import SqliteStore


def open_store(
    location: Path,
    *,
    rebuild: bool = False,
    use_cache: bool = True,
    on_wait: Callable[[str], None] | None = None,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
) -> Store:
    """Open (creating and migrating if needed) the store at ``location``.

    See :meth:`repoherald.store.db.SqliteStore.open` for what ``rebuild``,
    ``use_cache``, ``on_wait`` and ``wait_seconds`` mean.
    """
    return SqliteStore.open(
        location,
        rebuild=rebuild,
        use_cache=use_cache,
        on_wait=on_wait,
        wait_seconds=wait_seconds,
    )
