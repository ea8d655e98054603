"""DingTalk pacing says when it waits: up to a minute of silence looks like a hang."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repoherald.publish.deliver import deliver_days
from repoherald.publish.webhook.pacing import RobotPacer
from repoherald.store.db import SqliteStore as Store
from tests.integration.test_webhook_delivery import (
    SECRET,
    TOKEN,
    FakeClock,
    _days_on_disk,
    _ding_target,
)
from tests.webhook_server import webhook_server

LINE = "dingtalk: pacing, waiting 61 s (20 messages a minute per robot)"


def test_one_info_line_for_the_one_wait_of_21_messages(
    tmp_path: Path,
    memory_store: Store,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    paths = _days_on_disk(tmp_path, 21)
    clock = FakeClock()
    caplog.set_level(logging.INFO, logger="repoherald")
    with webhook_server(SECRET) as server:
        server.clock = clock
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        monkeypatch.setenv("HOOK_URL", f"{server.url}/dingtalk/{TOKEN}")
        target = _ding_target(RobotPacer(clock, clock.sleep), clock.sleep)
        outcomes = deliver_days(memory_store, [target], "app", paths, "zh")
    assert [o.status for o in outcomes] == ["sent"] * 21
    said = [r for r in caplog.records if "pacing" in r.getMessage()]
    assert [(r.levelno, r.getMessage()) for r in said] == [(logging.INFO, LINE)]
    assert TOKEN not in caplog.text


def test_the_cli_logging_shows_the_wait_without_debug() -> None:
    """The CLI's logging set-up lets the line through (other INFO stays hidden)."""
    script = textwrap.dedent(
        """
        import logging
        from repoherald.cli.errors import setup_logging
        from repoherald.publish.webhook.pacing import RobotPacer

        class Clock:
            now = 0.0
            def __call__(self): return self.now
            def sleep(self, s): self.now += s

        setup_logging(False)
        clock = Clock()
        pacer = RobotPacer(clock, clock.sleep)
        for _ in range(21):
            pacer.wait_turn("https://oapi.dingtalk.com/robot/send?access_token=x")
        logging.getLogger("httpx").info("not shown")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stderr.splitlines() == [f"INFO repoherald.publish: {LINE}"]
