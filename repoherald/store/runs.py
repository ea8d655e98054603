"""The log of runs: who started each, how it ended, and runs that never ended.

A run killed with ``kill -9`` (or by the OOM killer, or a reboot) cannot
record its end. Each run therefore records its process id and host, and the
next run to open the store closes, as ``killed``, every ``running`` row
whose process is gone.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

from repoherald.redact import redact
from repoherald.store.sql import Conn

LEGACY_RUN_HOURS = 24
"""A ``running`` row without a pid (written before pids were recorded) is
closed once it is this old: no run lasts a day."""


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def this_host() -> str:
    return socket.gethostname()


_started_here: set[tuple[str, int]] = set()
"""(store, run id) of the runs this process started and has not finished."""


def process_gone(pid: int) -> bool:
    """True when no process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # it exists, owned by someone else
    return False


def start(conn: Conn, store: str, command: str) -> int:
    cur = conn.execute(
        "INSERT INTO runs (started_at, command, status, pid, host) VALUES (?, ?, 'running', ?, ?)"
        " RETURNING id",
        (now_text(), redact(command), os.getpid(), this_host()),
    )
    run_id = int(cur.fetchone()[0])
    _started_here.add((store, run_id))
    return run_id


def finish(
    conn: Conn,
    store: str,
    run_id: int,
    status: str,
    commits: int,
    analysed: int,
    failures: list[str],
) -> None:
    conn.execute(
        "UPDATE runs SET finished_at = ?, status = ?, commits = ?, analysed = ?, failures = ?"
        " WHERE id = ?",
        (
            now_text(),
            status,
            commits,
            analysed,
            json.dumps([redact(f) for f in failures], ensure_ascii=False),
            run_id,
        ),
    )
    _started_here.discard((store, run_id))


def _owner_gone(store: str, run_id: int, pid: int) -> bool:
    """Whether the process that started this run (on this host) has ended.

    A row carrying this process's own pid that this process did not start is
    left over from an earlier process with the same pid (pid 1 in a
    container, typically).
    """
    if pid == os.getpid():
        return (store, run_id) not in _started_here
    return process_gone(pid)


def stale(conn: Conn, store: str) -> list[tuple[int, str]]:
    """``running`` rows whose process is gone, with the reason to record."""
    host = this_host()
    legacy_cutoff = (datetime.now(UTC) - timedelta(hours=LEGACY_RUN_HOURS)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    out = []
    rows = conn.execute("SELECT id, pid, host, started_at FROM runs WHERE status = 'running'")
    for run_id, pid, run_host, started_at in rows.fetchall():
        if pid is None:
            if started_at < legacy_cutoff:
                out.append((int(run_id), "the run never finished (started by an older version)"))
        elif run_host == host and _owner_gone(store, int(run_id), int(pid)):
            out.append((int(run_id), f"process {pid} ended without finishing the run"))
    return out


def close(conn: Conn, found: list[tuple[int, str]]) -> None:
    """Mark ``found`` as killed, unless another run closed them first."""
    conn.executemany(
        "UPDATE runs SET status = 'killed', finished_at = ?, failures = ?"
        " WHERE id = ? AND status = 'running'",
        [(now_text(), json.dumps([why]), run_id) for run_id, why in found],
    )


def recent(conn: Conn, limit: int) -> list[dict[str, Any]]:
    cur = conn.execute(
        "SELECT id, started_at, finished_at, command, status, commits, analysed, failures,"
        " pid, host FROM runs ORDER BY id DESC LIMIT ?",
        (limit,),
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur]
