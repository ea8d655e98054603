"""GitHub's ETags kept by the store: across runs, from the client's threads, pruned when old."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from repoherald.store.base import Cached
from repoherald.store.etags import KEEP_DAYS
from repoherald.store.opener import open_store
from tests.storefixture import StoreAt

URL = "https://api.example.test/repos/acme/widget"


def test_an_answer_kept_by_one_run_is_read_by_the_next(store_at: StoreAt) -> None:
    with store_at.open() as store:
        store.etags.put(URL, '"v1"', b'{"n": 1}', '<x?page=2>; rel="next"')
    with store_at.open() as store:
        assert store.etags.get(URL) == Cached('"v1"', b'{"n": 1}', '<x?page=2>; rel="next"')
        assert store.etags.get(URL + "/other") is None


def test_answers_unused_for_longer_than_the_keep_days_are_dropped(store_at: StoreAt) -> None:
    with store_at.open() as store:
        store.etags.put(URL, '"old"', b"{}", "")
        store.etags.put(URL + "/fresh", '"new"', b"{}", "")
    old = datetime.now(UTC) - timedelta(days=KEEP_DAYS + 1)
    store_at.sql(
        "UPDATE github_etags SET used_at = ? WHERE url = ?",
        (old.strftime("%Y-%m-%dT%H:%M:%SZ"), URL),
    )
    with store_at.open() as store:
        assert store.etags.get(URL) is None
        assert store.etags.get(URL + "/fresh") == Cached('"new"', b"{}", "")


def test_the_clients_worker_threads_share_the_stores_cache(store_at: StoreAt) -> None:
    def fetch(i: int) -> Cached | None:
        store.etags.put(f"{URL}/{i}", f'"{i}"', b"[]", "")
        store.etags.touch(f"{URL}/{i}")
        return store.etags.get(f"{URL}/{i}")

    with store_at.open() as store, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(fetch, range(40)))
    assert got == [Cached(f'"{i}"', b"[]", "") for i in range(40)]


def test_an_in_memory_store_keeps_them_in_memory() -> None:
    with open_store(Path(":memory:")) as store:
        store.etags.put(URL, '"m"', b"1", "")
        assert store.etags.get(URL) == Cached('"m"', b"1", "")
