"""Synthetic cache rows for store tests, and the child processes of the safety tests.

The safety tests need real processes (a lock is per process, ``kill -9`` is
per process), so the children live here, importable by ``multiprocessing``
and runnable as ``python -m tests.storefixture ROLE DB``:

* ``fill DB``: start a run, then save batches of rows for ever, printing
  ``saving N`` before and ``saved N`` after each transaction (to be killed);
* ``save-twice DB``: save two batches, printing every wait message it is
  given as ``WAIT <message>``, then ``saved`` after each batch.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import psycopg

from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    Facts,
    FileChange,
    FileStatus,
    Importance,
    Person,
)
from repoherald.store.db import SqliteStore as Store
from repoherald.store.pgconn import to_postgres
from repoherald.store.postgres import PostgresStore

EXTRACTOR = "facts/test"
ANALYSER = "rules/test"


@dataclass(frozen=True, slots=True)
class StoreAt:
    """Where a test's store lives, on either backend (the ``store_at`` fixture).

    :meth:`open` opens it afresh each time, as successive runs would;
    :meth:`sql` runs SQL (``?`` placeholders) on a connection of its own, for a
    test that must age, edit or inspect rows behind the store's back.
    """

    backend: str
    path: Path
    url: str | None = None

    def open(self, *, rebuild: bool = False, use_cache: bool = True) -> Store | PostgresStore:
        if self.url is not None:
            return PostgresStore.open(self.url, rebuild=rebuild, use_cache=use_cache)
        return Store.open(self.path, rebuild=rebuild, use_cache=use_cache)

    def sql(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self.url is not None:
            with psycopg.connect(self.url, autocommit=True) as pg:
                cur = pg.execute(to_postgres(sql), params)
                return list(cur.fetchall()) if cur.description else []
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            return list(conn.execute(sql, params).fetchall())
        finally:
            conn.close()


def sample(i: int, analyser: str = ANALYSER) -> tuple[Commit, Facts, Analysis]:
    """Commit number ``i``, with facts and an analysis; the same every time."""
    sha = f"{i:040x}"
    who = Person("Ada", "ada@example.com")
    commit = Commit(
        sha=sha,
        parents=(f"{i + 1:040x}",),
        author=who,
        author_time=1_770_000_000 + i,
        author_offset=480,
        committer=who,
        commit_time=1_770_000_000 + i,
        commit_offset=480,
        message=f"[Bugfix] Fix crash number {i} in the scheduler\n\nLonger text {i}.\n",
    )
    files = (FileChange(f"src/mod{i}.py", FileStatus.MODIFIED, added=i % 7, deleted=1),)
    facts = Facts(
        files=files,
        added=i % 7,
        deleted=1,
        areas=("src",),
        pr_number=i,
        tags=("bugfix",),
        conventional_type=None,
        conventional_scope=None,
        breaking_marker=False,
        is_revert=False,
        reverted_sha=None,
        co_authors=(),
        kinds={"source": 1},
        api_changes=(),
        dependency_changes=(),
    )
    analysis = Analysis(
        analyser=analyser,
        change_type=ChangeType.BUGFIX,
        importance=Importance.HIGH,
        reasons=("crash in the title",),
        summary=f"Fixes crash number {i}.",
    )
    return commit, facts, analysis


def samples(start: int, n: int) -> list[tuple[Commit, Facts, Analysis]]:
    return [sample(i) for i in range(start, start + n)]


def garble_table(db: Path, table: str = "analyses") -> None:
    """Overwrite the root page of ``table``: a bad disk block under the cache."""
    conn = sqlite3.connect(db)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    (page,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with db.open("r+b") as f:
        f.seek((root - 1) * page)
        f.write(bytes([0xA5]) * page)


def first_run_worker(barrier: Barrier, homes: list[str], results: Queue[object]) -> None:
    """For each fresh home, at the same moment as the other worker: a whole first run."""
    for home in homes:
        barrier.wait()
        waits: list[str] = []
        try:
            with Store.open(Path(home) / "repoherald.db", on_wait=waits.append) as store:
                run_id = store.start_run("report")
                store.save("org/repo", samples(0, 20), EXTRACTOR)
                loaded = store.load([sample(i)[0].sha for i in range(20)], EXTRACTOR, ANALYSER)
                store.finish_run(run_id, "ok", 20, 20, [])
            results.put(("ok", len(loaded), waits))
        except Exception as exc:  # the parent asserts on whatever happened
            results.put(("error", f"{type(exc).__name__}: {exc}", waits))


def _fill(db: Path) -> None:
    with Store.open(db) as store:
        store.start_run("fill")
        n = 0
        while True:
            print(f"saving {n}", flush=True)
            store.save("org/repo", samples(n * 50, 50), EXTRACTOR)
            print(f"saved {n}", flush=True)
            n += 1


def _save_twice(db: Path) -> None:
    def say(message: str) -> None:
        print(f"WAIT {message}", flush=True)

    with Store.open(db, on_wait=say) as store:
        for n in range(2):
            store.save("org/repo", samples(n * 10, 10), EXTRACTOR)
            print("saved", flush=True)


if __name__ == "__main__":
    role, db = sys.argv[1], Path(sys.argv[2])
    {"fill": _fill, "save-twice": _save_twice}[role](db)
