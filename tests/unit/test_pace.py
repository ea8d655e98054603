"""``[llm] requests_per_minute``: requests of the run's pool are spaced ``60 / N`` seconds apart.

The pace's clock and sleep are given, so the test reads the waits it asked
for instead of timing them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.errors import ConfigError
from repoherald.llm.pace import RequestPace


class Clock:
    """Time that stands still unless the test moves it; sleeps are recorded, not waited."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_concurrent_callers_each_get_their_own_slot() -> None:
    clock = Clock()
    pace = RequestPace(120, clock=clock, sleep=clock.sleep)

    async def five() -> None:
        await asyncio.gather(*(pace.take() for _ in range(5)))

    asyncio.run(five())
    # The first goes at once; the others, asking at the same moment, wait for
    # slots 0.5 s apart: each for its own, none sharing one.
    assert clock.slept == [0.5, 1.0, 1.5, 2.0]


def test_an_idle_pace_lets_the_next_request_go_at_once() -> None:
    clock = Clock()
    pace = RequestPace(60, clock=clock, sleep=clock.sleep)
    asyncio.run(pace.take())
    clock.now += 5
    asyncio.run(pace.take())
    asyncio.run(pace.take())
    assert clock.slept == [1.0], "an idle minute is not saved up for a burst"


def test_the_limit_is_a_config_key(tmp_path: Path) -> None:
    config = tmp_path / "repoherald.toml"
    config.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nrequests_per_minute = 500\n',
        encoding="utf-8",
    )
    settings = build_settings(config=str(config), home=str(tmp_path), repos=(".",))
    assert settings.llm is not None and settings.llm.requests_per_minute == 500
    config.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nrequests_per_minute = 0\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="requests_per_minute"):
        build_settings(config=str(config), home=str(tmp_path), repos=(".",))
