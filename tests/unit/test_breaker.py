"""CircuitBreaker: opens at the threshold, resets on an answer, half-opens after a cooldown."""

from __future__ import annotations

import asyncio
import threading

import pytest

from repoherald.breaker import CircuitBreaker
from repoherald.errors import RepoheraldError, UnavailableError


def test_opens_after_threshold_consecutive_failures() -> None:
    breaker = CircuitBreaker(threshold=3, what="LLM endpoint http://x")
    assert breaker.record_failure("refused") is False
    assert breaker.record_failure("refused") is False
    breaker.before_call()
    assert breaker.record_failure("ConnectError: refused") is True
    assert breaker.is_open
    with pytest.raises(UnavailableError) as err:
        breaker.before_call()
    assert str(err.value) == (
        "LLM endpoint http://x unavailable after 3 consecutive failures (ConnectError: refused)"
    )
    assert isinstance(err.value, RepoheraldError)
    assert breaker.rejected == 1


def test_a_success_resets_the_count() -> None:
    breaker = CircuitBreaker(threshold=2)
    breaker.record_failure("a")
    breaker.record_success()
    assert breaker.record_failure("b") is False
    assert not breaker.is_open


def test_without_cooldown_it_stays_open() -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, clock=lambda: now[0])
    breaker.record_failure("down")
    now[0] = 1e9
    assert breaker.is_open


def test_cooldown_lets_one_trial_through() -> None:
    now = [100.0]
    breaker = CircuitBreaker(threshold=1, cooldown=30, clock=lambda: now[0])
    breaker.record_failure("down")
    now[0] = 129.0
    assert breaker.is_open
    now[0] = 130.0
    assert not breaker.is_open
    breaker.before_call()  # the trial
    assert breaker.is_open, "one trial at a time"
    with pytest.raises(UnavailableError):
        breaker.before_call()
    assert breaker.record_failure("still down") is True
    now[0] = 150.0
    assert breaker.is_open, "a failed trial opens it for another cooldown"
    now[0] = 160.0
    breaker.before_call()
    breaker.record_success()
    assert not breaker.is_open
    breaker.before_call()


def test_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(threshold=0)


def test_threads_count_every_failure_once() -> None:
    breaker = CircuitBreaker(threshold=1000)
    opened: list[bool] = []
    lock = threading.Lock()

    def hammer() -> None:
        for _ in range(100):
            result = breaker.record_failure("x")
            with lock:
                opened.append(result)

    threads = [threading.Thread(target=hammer) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert opened.count(False) == 999, "exactly the 1000th failure opened it"
    assert breaker.is_open
    assert "1000 consecutive failures" in breaker.message


def test_asyncio_tasks_share_one_breaker() -> None:
    breaker = CircuitBreaker(threshold=3)
    calls = 0

    async def call() -> str:
        nonlocal calls
        try:
            breaker.before_call()
        except UnavailableError:
            return "refused"
        calls += 1
        await asyncio.sleep(0)
        breaker.record_failure("refused")
        return "failed"

    async def main() -> list[str]:
        first = await asyncio.gather(*(call() for _ in range(3)))
        later = await asyncio.gather(*(call() for _ in range(20)))
        return [*first, *later]

    outcomes = asyncio.run(main())
    assert outcomes == ["failed"] * 3 + ["refused"] * 20
    assert calls == 3 and breaker.rejected == 20
