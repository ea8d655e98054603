"""Delivery claims in a real store (SQLite and PostgreSQL): who holds one, when its holder
counts as gone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from repoherald.store import claims
from repoherald.store.claims import Decision, Owner
from repoherald.store.db import SqliteStore
from repoherald.store.ledger import LedgerStatus
from repoherald.store.postgres import PostgresStore
from tests.storefixture import StoreAt

Store = SqliteStore | PostgresStore

DAY = date(2026, 8, 20)
CONTENT = "c0ffee"


@pytest.fixture
def store(store_at: StoreAt) -> Iterator[Store]:
    with store_at.open() as s:
        yield s


def _claim(store: Store, *, send_uncertain: bool = False) -> claims.Verdict:
    return store.claim_delivery(
        "hook", "alpha", DAY, CONTENT, resend_changed=False, send_uncertain=send_uncertain
    )


def _held_by(store: Store, owner: Owner, at: datetime | None = None) -> None:
    """A claim left by ``owner`` (another process), as its own claim would have written it."""
    with store._transaction():
        claims.take(store.conn, "hook", "alpha", DAY, CONTENT, owner)
        if at is not None:
            store.conn.execute(
                "UPDATE publish_claims SET claimed_at = ?", (at.strftime("%Y-%m-%dT%H:%M:%SZ"),)
            )


def _state(store: Store) -> list[str]:
    return [c.state.value for c in store.claims("hook")]


def test_a_live_holder_keeps_the_day_and_a_released_claim_frees_it(store: Store) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        me = claims.this_owner()
        _held_by(store, Owner(me.host, sleeper.pid, claims.process_start(sleeper.pid)))
        verdict = _claim(store)
        assert verdict.decision is Decision.BUSY and verdict.claim is not None
        assert verdict.claim.owner.pid == sleeper.pid and _state(store) == ["sending"]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert _claim(store).decision is Decision.UNCERTAIN  # killed while it held the claim


def test_a_dead_holder_leaves_the_day_uncertain_until_told_to_send(store: Store) -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    me = claims.this_owner()
    _held_by(store, Owner(me.host, done.pid, "boot:1"))
    assert _claim(store).decision is Decision.UNCERTAIN
    assert _claim(store).decision is Decision.UNCERTAIN  # said again, never settled by silence
    assert _state(store) == ["uncertain"]
    verdict = _claim(store, send_uncertain=True)
    assert verdict.decision is Decision.SEND and verdict.claim is not None
    store.settle_delivery(
        "hook", "alpha", DAY, status=LedgerStatus.FAILED, content=CONTENT, still_uncertain=True
    )
    assert _state(store) == ["uncertain"]  # the killed attempt may still have arrived
    assert _claim(store, send_uncertain=True).decision is Decision.SEND
    store.settle_delivery("hook", "alpha", DAY, status=LedgerStatus.SENT, content=CONTENT)
    assert _state(store) == [] and _claim(store).decision is Decision.UNCHANGED


def test_a_reused_pid_does_not_keep_a_dead_holders_claim(store: Store) -> None:
    me = claims.this_owner()
    assert me.started  # Linux: boot id and start tick
    _held_by(store, Owner(me.host, me.pid, me.started + "0"))  # same pid, another process
    assert _claim(store).decision is Decision.UNCERTAIN


def test_a_claim_from_another_host_is_trusted_for_its_lease_only(store: Store) -> None:
    other = Owner("another-host", 4242, "x:1")
    _held_by(store, other)
    assert _claim(store).decision is Decision.BUSY
    old = datetime.now(UTC) - claims.LEASE - timedelta(minutes=1)
    _held_by(store, other, at=old)
    assert _claim(store).decision is Decision.UNCERTAIN


def test_a_rebuild_keeps_what_may_have_been_sent(store_at: StoreAt) -> None:
    with store_at.open() as store:
        _held_by(store, Owner("another-host", 1, ""), at=datetime(2020, 1, 1, tzinfo=UTC))
        assert _claim(store).decision is Decision.UNCERTAIN
    with store_at.open(rebuild=True) as store:
        assert _state(store) == ["uncertain"]
        assert _claim(store).decision is Decision.UNCERTAIN
