"""Which store a run uses, opened: the one place that picks a backend.

Everything outside :mod:`repoherald.store` opens its store here and holds it
as a :class:`~repoherald.store.base.Store`. The store is the embedded SQLite
file at ``location`` (or ``:memory:``) unless ``[store] url_env`` names an
environment variable and that variable holds a ``postgresql://`` URL: then
it is that PostgreSQL database, shared by every worker given the same URL.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from repoherald.errors import ConfigError
from repoherald.redact import secret_env
from repoherald.store.base import Store
from repoherald.store.connect import DEFAULT_WAIT_SECONDS
from repoherald.store.db import SqliteStore


def open_store(
    location: Path,
    *,
    url_env: str | None = None,
    rebuild: bool = False,
    use_cache: bool = True,
    on_wait: Callable[[str], None] | None = None,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
) -> Store:
    """Open (creating and migrating if needed) the store the run is to use.

    ``url_env``: the NAME of the variable that may hold a PostgreSQL URL
    (``[store] url_env``); its value is a secret. See
    :meth:`repoherald.store.db.SqliteStore.open` and
    :meth:`repoherald.store.postgres.PostgresStore.open` for what ``rebuild``,
    ``use_cache``, ``on_wait`` and ``wait_seconds`` mean.
    """
    url = secret_env(url_env) if url_env and os.environ.get(url_env) else None
    if url is not None:
        if urllib.parse.urlsplit(url).scheme not in ("postgresql", "postgres"):
            raise ConfigError(
                f"the variable {url_env} ([store] url_env) does not hold a postgresql:// URL:"
                " set it to postgresql://USER:PASSWORD@HOST:PORT/DATABASE, or unset it"
            )
        from repoherald.store.postgres import PostgresStore  # psycopg loads only when used

        return PostgresStore.open(url, rebuild=rebuild, use_cache=use_cache)
    return SqliteStore.open(
        location,
        rebuild=rebuild,
        use_cache=use_cache,
        on_wait=on_wait,
        wait_seconds=wait_seconds,
    )
