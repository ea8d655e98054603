"""Leases on repository-days in a real store, opened by several workers at once, on both
backends (an SQLite file, a PostgreSQL database on a throwaway cluster)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import date, timedelta

import pytest

from repoherald.store.base import Store
from repoherald.store.leases import LeaseState, Verdict
from tests.storefixture import StoreAt

DAY = date(2026, 8, 18)
LONG = 3600.0
"""A lease that cannot run out during a test."""
GONE = 0.0
"""A lease that has run out as soon as it is taken."""
NOW = time.time() - 1
"""When the tests' run started: before anything they do."""


@pytest.fixture
def open_store(store_at: StoreAt) -> Iterator[Callable[[], Store]]:
    """Opens another connection to one store (SQLite file or PostgreSQL database), as
    another worker would."""
    opened: list[Store] = []

    def opener() -> Store:
        store = store_at.open()
        opened.append(store)
        return store

    yield opener
    for store in opened:
        store.close()


def test_a_live_lease_keeps_the_day_from_other_workers(open_store: Callable[[], Store]) -> None:
    a, b = open_store(), open_store()
    assert a.claim_repo_day("a", "vllm", DAY, inputs="x", lease_s=LONG) is Verdict.CLAIMED
    assert b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG) is Verdict.HELD
    redo = b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG, started=NOW, redo=True)
    assert redo is Verdict.HELD
    # Another day, another repository: free.
    assert b.claim_repo_day("b", "vllm", DAY + timedelta(1), inputs="x", lease_s=LONG).mine
    assert b.claim_repo_day("b", "sglang", DAY, inputs="x", lease_s=LONG).mine


def test_a_lease_that_ran_out_is_taken_over_and_its_old_holder_is_told(
    open_store: Callable[[], Store],
) -> None:
    a, b = open_store(), open_store()
    assert a.claim_repo_day("a", "vllm", DAY, inputs="x", lease_s=GONE) is Verdict.CLAIMED
    assert b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG) is Verdict.TAKEN_OVER
    assert a.renew_repo_days("a", [("vllm", DAY)], LONG) == [("vllm", DAY)]
    assert not a.finish_repo_day("a", "vllm", DAY, ok=True)
    assert b.renew_repo_days("b", [("vllm", DAY)], LONG) == []
    (lease,) = b.repo_day_leases()
    assert (lease.worker, lease.state, lease.takeovers) == ("b", LeaseState.WORKING, 1)


def test_a_renewed_lease_is_not_taken_over(open_store: Callable[[], Store]) -> None:
    a, b = open_store(), open_store()
    a.claim_repo_day("a", "vllm", DAY, inputs="x", lease_s=GONE)
    assert a.renew_repo_days("a", [("vllm", DAY)], LONG) == []
    assert b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG) is Verdict.HELD


def test_a_done_day_is_done_for_the_same_inputs_only(open_store: Callable[[], Store]) -> None:
    a, b = open_store(), open_store()
    a.claim_repo_day("a", "vllm", DAY, inputs="x", lease_s=LONG)
    a.record_report("vllm", DAY, "zh", 1, 0, "r.md", "text")
    assert a.finish_repo_day("a", "vllm", DAY, ok=True)
    # Done by a sibling of this run (finished after it started): done, even when redoing.
    earlier = NOW - LONG
    for redo in (False, True):
        verdict = b.claim_repo_day(
            "b", "vllm", DAY, inputs="x", lease_s=LONG, started=earlier, redo=redo
        )
        assert verdict is Verdict.DONE
    # Done by an earlier run: reported; redone when told to.
    later = time.time() + LONG
    verdict = b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG, started=later)
    assert verdict is Verdict.REPORTED
    verdict = b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG, started=later, redo=True)
    assert verdict.mine
    b.finish_repo_day("b", "vllm", DAY, ok=True)
    assert a.claim_repo_day("a", "vllm", DAY, inputs="new model", lease_s=LONG).mine
    assert a.integrity() == []


def test_a_failed_day_is_left_to_its_worker_then_retried(open_store: Callable[[], Store]) -> None:
    a, b = open_store(), open_store()
    a.claim_repo_day("a", "vllm", DAY, inputs="x", lease_s=LONG, started=NOW)
    a.finish_repo_day("a", "vllm", DAY, ok=False)
    # A sibling of the same run leaves it to a's report; a later run retries it.
    verdict = b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG, started=NOW)
    assert verdict is Verdict.FAILED
    later = time.time() + LONG
    verdict = b.claim_repo_day("b", "vllm", DAY, inputs="x", lease_s=LONG, started=later)
    assert verdict is Verdict.CLAIMED


def test_racing_workers_claim_each_day_once(store_at: StoreAt) -> None:
    days = [DAY + timedelta(days=i) for i in range(40)]
    won: Counter[date] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(4)

    def work(n: int) -> None:
        # Each worker has its own connection, opened in the thread that uses it.
        with store_at.open() as store:
            start.wait()
            for d in days:
                if store.claim_repo_day(f"w{n}", "vllm", d, inputs="x", lease_s=LONG).mine:
                    with lock:
                        won[d] += 1

    store_at.open().close()  # migrated before the race
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert won == Counter(days)


def test_integrity_names_a_day_done_but_never_reported(open_store: Callable[[], Store]) -> None:
    a = open_store()
    a.claim_repo_day("a", "vllm", DAY, inputs="x", lease_s=LONG)
    a.finish_repo_day("a", "vllm", DAY, ok=True)
    (problem,) = a.integrity()
    assert problem.startswith("a repository-day done but never reported: vllm 2026-08-18 a")
