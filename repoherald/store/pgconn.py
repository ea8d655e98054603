"""Connecting to a PostgreSQL store, speaking its SQL, and naming what went wrong.

The store's modules write their SQL once (:mod:`repoherald.store.sql`);
:class:`PgConn` runs it on a psycopg connection after :func:`to_postgres`
has respelled the two things PostgreSQL says differently. Every psycopg
error becomes one :class:`~repoherald.errors.StoreError` line that says
what to do, and never carries the URL's password: the URL is registered
as a secret before anything can print it, and is shown only without it.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import psycopg

from repoherald.errors import StoreError
from repoherald.redact import redact, register

CONNECT_TIMEOUT_SECONDS = 10
"""How long opening a connection may take before the server counts as unreachable."""

_AS_BLOB = re.compile(r"CAST\((?P<column>[\w.]+) AS BLOB\)")


@lru_cache(maxsize=512)
def to_postgres(sql: str) -> str:
    """The store's SQL in PostgreSQL's spelling: ``%s`` placeholders (a literal ``%``
    doubled), and a text column's UTF-8 bytes where SQLite says ``CAST(x AS BLOB)``."""
    sql = sql.replace("%", "%%")
    sql = _AS_BLOB.sub(r"convert_to(\g<column>, 'UTF8')", sql)
    return sql.replace("?", "%s")


class PgConn:
    """A psycopg connection that runs the store's shared SQL (see :class:`~.sql.Conn`).

    It is in autocommit mode: a statement outside :meth:`transaction` is its
    own transaction, as in the SQLite store's connection.
    """

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        return self.raw.execute(to_postgres(sql), parameters)

    def executemany(
        self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /
    ) -> psycopg.Cursor[Any]:
        cur = self.raw.cursor()
        cur.executemany(to_postgres(sql), seq_of_parameters)
        return cur

    def close(self) -> None:
        self.raw.close()


def shown(url: str) -> str:
    """The URL as messages show it: scheme, user, host, port and database, no password."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    socket_dir = urllib.parse.parse_qs(parts.query).get("host", [""])[0]
    where = f" (socket in {socket_dir})" if socket_dir.startswith("/") else ""
    return redact(f"{parts.scheme}://{netloc}{parts.path}{where}")


def register_url(url: str) -> None:
    """Make the URL and its password secrets every later :func:`redact` masks."""
    register(url)
    password = urllib.parse.urlsplit(url).password
    if password:
        register(password)
        register(urllib.parse.unquote(password))


def connect(url: str) -> PgConn:
    """Open an autocommit connection to ``url``; one :class:`StoreError` line if it fails."""
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except psycopg.Error as exc:
        raise connect_error(url, exc) from None
    return PgConn(raw)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line.removeprefix("connection failed: ").strip()


def connect_error(url: str, exc: psycopg.Error) -> StoreError:
    """Why ``url`` could not be opened, and what to check, on one line."""
    reason = _first_line(exc)
    lowered = str(exc).lower()
    where = shown(url)
    if "password authentication failed" in lowered or exc.sqlstate == "28P01":
        advice = "check the password in the URL the store's url_env variable holds"
    elif "does not exist" in lowered:
        advice = "create the database and role, or correct the URL the store's url_env names"
    else:
        advice = (
            "check that the server is running and reachable from here, and the host and port"
            " of the URL the store's url_env names"
        )
    return StoreError(redact(f"cannot connect to the PostgreSQL store {where}: {reason}; {advice}"))


def is_lost(exc: psycopg.Error) -> bool:
    """Whether the connection itself failed (server gone, backend terminated, network)."""
    return isinstance(exc, psycopg.OperationalError) or exc.sqlstate in (
        "57P01",  # admin_shutdown: pg_terminate_backend, a server shutting down
        "57P02",
        "57P03",
    )


def use_error(url: str, exc: psycopg.Error) -> StoreError:
    """The one-line :class:`StoreError` for a failure while the store is in use."""
    where = shown(url)
    if is_lost(exc):
        return StoreError(
            redact(
                f"lost the connection to the PostgreSQL store {where} ({_first_line(exc)});"
                " what this run had not committed was rolled back: check the server, then re-run"
            )
        )
    return StoreError(
        redact(
            f"cannot use the PostgreSQL store {where}: {_first_line(exc)}; check that its role"
            " may create and write tables in the database"
        )
    )
