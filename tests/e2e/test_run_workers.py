"""Many ``run`` processes share one day's work through the store's leases.

Real processes on fixture repositories and one home, delivering to the
loopback receiver of :mod:`tests.webhook_server`, which counts what arrives:
``--workers N`` splits the day; a worker killed with ``-9`` at a random point
has its repository-days taken over by the others once its lease runs out,
and nothing is lost, reported twice or delivered twice.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from repoherald.store.base import Store
from repoherald.store.db import SqliteStore
from tests.gitfixture import GitFixture, run_repoherald, start_repoherald
from tests.storefixture import StoreAt
from tests.webhook_server import WebhookServer, webhook_server

SECRET = "hook-secret-workers"
TODAY = datetime.now(UTC).date()
YESTERDAY = TODAY - timedelta(days=1)
REPOS = tuple(f"repo{i}" for i in range(8))
LEASE = 2
"""``[run] lease_seconds`` in these tests: a killed worker's days are free after this."""
WAIT = 180.0
"""Bound on waiting for a process or the store (never reached when things work)."""


@pytest.fixture
def hook(monkeypatch: pytest.MonkeyPatch) -> Iterator[WebhookServer]:
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_URL", f"{server.url}/json")
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        yield server


DB_URL_ENV = "HERALD_TEST_WORKERS_DATABASE_URL"


def _workspace(tmp: Path, days: int, store: StoreAt | None = None) -> Path:
    """Repositories with one commit on each of the last ``days`` days, and a JSON webhook."""
    tables = ""
    for name in REPOS:
        fx = GitFixture.init(tmp / name)
        for i in range(days, 0, -1):
            fx.write(f"mod_{i}.py", f"def f{i}():\n    return {i}\n")
            when = datetime.combine(TODAY - timedelta(days=i), datetime.min.time(), UTC)
            fx.commit(f"Fix {name} scheduler crash {i}", when=when + timedelta(hours=12))
        tables += f'\n[[repos]]\nsource = "{name}"\n'
    (tmp / "repoherald.toml").write_text(
        f'[report]\ntz = "UTC"\n\n[run]\nlease_seconds = {LEASE}\n'
        + tables
        + '\n[[publish]]\ntype = "webhook"\nname = "hook"\nkind = "json"\n'
        'url_env = "HOOK_URL"\nsecret_env = "HOOK_SECRET"\nretry_delay = 0\n'
        + (f'\n[store]\nurl_env = "{DB_URL_ENV}"\n' if store and store.url else ""),
        encoding="utf-8",
    )
    return tmp


def _delivered(hook: WebhookServer) -> Counter[tuple[str, str]]:
    """How many messages arrived for each (repository, day)."""
    return Counter(
        (str(r.data["repos"][0]["name"]), str(r.data["date"])) for r in hook.accepted("json")
    )


def _leases(ws: Path, store: StoreAt | None = None) -> list[tuple[str, str, str, str]]:
    """The store's leases, read as they are (none before a run created the store)."""
    sql = "SELECT repo, day, state, worker FROM work_leases"
    if store is not None and store.url is not None:
        try:
            return [(str(r), str(d), str(s), str(w)) for r, d, s, w in store.sql(sql)]
        except psycopg.Error:  # not created yet
            return []
    path = ws / "home" / "repoherald.db"
    if not path.is_file():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=WAIT)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        conn.close()


def _check_the_day(
    ws: Path, hook: WebhookServer, days: list[str], at: StoreAt | None = None
) -> None:
    """Every repository-day reported once, done, and delivered once; the store consistent."""
    wanted = {(name, day) for name in REPOS for day in days}
    for name, day in wanted:
        assert (ws / f"reports/{day[:4]}/{name}/{day}.md").is_file(), (name, day)
    with _open(ws, at) as store:
        assert store.integrity() == []
        leases = {(x.repo, x.day.isoformat()): x.state.value for x in store.repo_day_leases()}
        reported = Counter((r, str(d)) for r in REPOS for d, _, _, _ in store.reported_days(r))
        uncertain = {(c.repo, c.day.isoformat()) for c in store.claims("hook")}
    # Done, or failed only for a message cut off by the kill (it may have arrived).
    assert all(leases[k] == "done" or (leases[k] == "failed" and k in uncertain) for k in wanted), (
        leases
    )
    assert reported == Counter(wanted)
    delivered = _delivered(hook)
    assert max(delivered.values()) == 1, delivered
    # A message cut off by the kill may or may not have arrived; the store says so.
    assert set(delivered) | uncertain >= wanted, (delivered, uncertain)


def _open(ws: Path, at: StoreAt | None) -> Store:
    if at is not None and at.url is not None:
        return at.open()
    return SqliteStore.open(ws / "home" / "repoherald.db")


def test_workers_share_the_run_and_each_day_is_reported_and_delivered_once(
    tmp_path: Path, hook: WebhookServer
) -> None:
    ws = _workspace(tmp_path, days=2)
    first, last = TODAY - timedelta(days=2), YESTERDAY
    proc = run_repoherald(
        "run", "--home", str(ws / "home"), "--since", str(first), "--until", str(last),
        "--workers", "3", cwd=ws, timeout=WAIT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    days = [str(first), str(last)]
    _check_the_day(ws, hook, days)
    assert "8 repositories: 16 report(s), 16 commits; 0 failed" in proc.stderr
    assert "16 of 16 deliveries done" in proc.stderr
    workers = {worker for _, _, _, worker in _leases(ws)}
    assert len(workers) > 1, "one worker did everything"
    # Run again: every day is done for the same inputs, nothing is sent twice.
    proc = run_repoherald("run", "--home", str(ws / "home"), "--workers", "2", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert max(_delivered(hook).values()) == 1


@pytest.mark.parametrize("seed", [1, 2])
def test_a_worker_killed_at_a_random_point_is_taken_over(
    tmp_path: Path,
    hook: WebhookServer,
    seed: int,
    store_at: StoreAt,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three ``run`` processes on one home (as pods would be); one is killed with -9 a random
    time after it first holds a lease; the others finish the day, and a later run finds
    nothing left to do or send. On PostgreSQL each has a home of its own, as on three
    machines: only the store is shared."""
    ws = _workspace(tmp_path, days=1, store=store_at)
    if store_at.url is not None:
        monkeypatch.setenv(DB_URL_ENV, store_at.url)
    at = store_at if store_at.url is not None else None
    hook.delay = 0.2  # a slow receiver: each worker spends time inside its leases
    pick = random.Random(seed)

    def args(n: int) -> tuple[str, ...]:
        return ("run", "--home", str(ws / ("home" if at is None else f"home{n}")))

    victim = start_repoherald(*args(0), cwd=ws, stderr=ws / "victim.err")
    deadline = time.monotonic() + WAIT
    while not any(
        state == "working" and f":{victim.pid}:" in worker for *_, state, worker in _leases(ws, at)
    ):
        assert victim.poll() is None, "the victim finished before it could be killed"
        assert time.monotonic() < deadline, "the victim never held a lease"
        time.sleep(0.01)
    # The others start once the victim works, so it cannot find the day all taken.
    others = [start_repoherald(*args(n), cwd=ws, stderr=ws / f"w{n}.err") for n in (1, 2)]
    time.sleep(pick.uniform(0, 1.5))
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=WAIT)
    mine = f":{victim.pid}:"
    held = {
        (r, d) for r, d, state, worker in _leases(ws, at) if state == "working" and mine in worker
    }
    for proc in others:
        proc.communicate(timeout=WAIT)
        assert proc.returncode in (0, 1)  # 1: a message the victim may have sent
    _check_the_day(ws, hook, [str(YESTERDAY)], at)
    # What the victim held when it died was taken over by another worker.
    with _open(ws, at) as store:
        final = {(x.repo, x.day.isoformat()): x for x in store.repo_day_leases()}
    for key in held:
        assert mine not in final[key].worker and final[key].takeovers == 1, final[key]
    # A later run: every day reported, nothing sent again.
    before = _delivered(hook)
    proc = run_repoherald(*args(3), cwd=ws, timeout=WAIT)
    assert "Traceback" not in proc.stderr
    assert _delivered(hook) == before
    with _open(ws, at) as store:
        assert store.integrity() == []
