"""GitHub's ETags kept by the store: across runs, from the client's threads, pruned when old."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repoherald.store.base import Cached
from repoherald.store.etags import KEEP_DAYS
from repoherald.store.opener import open_store

URL = "https://api.example.test/repos/acme/widget"


def test_an_answer_kept_by_one_run_is_read_by_the_next(tmp_path: Path) -> None:
    db = tmp_path / "repoherald.db"
    with open_store(db) as store:
        store.etags.put(URL, '"v1"', b'{"n": 1}', '<x?page=2>; rel="next"')
    with open_store(db) as store:
        assert store.etags.get(URL) == Cached('"v1"', b'{"n": 1}', '<x?page=2>; rel="next"')
        assert store.etags.get(URL + "/other") is None


def test_answers_unused_for_longer_than_the_keep_days_are_dropped(tmp_path: Path) -> None:
    db = tmp_path / "repoherald.db"
    with open_store(db) as store:
        store.etags.put(URL, '"old"', b"{}", "")
        store.etags.put(URL + "/fresh", '"new"', b"{}", "")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE github_etags SET used_at = datetime('now', ?) WHERE url = ?",
            (f"-{KEEP_DAYS + 1} days", URL),
        )
    conn.close()
    with open_store(db) as store:
        assert store.etags.get(URL) is None
        assert store.etags.get(URL + "/fresh") == Cached('"new"', b"{}", "")


def test_the_clients_worker_threads_share_the_stores_cache(tmp_path: Path) -> None:
    def fetch(i: int) -> Cached | None:
        store.etags.put(f"{URL}/{i}", f'"{i}"', b"[]", "")
        store.etags.touch(f"{URL}/{i}")
        return store.etags.get(f"{URL}/{i}")

    with open_store(tmp_path / "repoherald.db") as store, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(fetch, range(40)))
    assert got == [Cached(f'"{i}"', b"[]", "") for i in range(40)]


def test_an_in_memory_store_keeps_them_in_memory() -> None:
    with open_store(Path(":memory:")) as store:
        store.etags.put(URL, '"m"', b"1", "")
        assert store.etags.get(URL) == Cached('"m"', b"1", "")
