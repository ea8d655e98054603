"""The progress display on a terminal: messages never land on the bar's line."""

from __future__ import annotations

import io
import re

from rich.console import Console

from repoherald.cli.progress import ProgressDisplay
from repoherald.pipeline.events import DayPosition, Event

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _screen_lines(raw: str) -> list[str]:
    """Each finished line as the terminal shows it: what follows the last carriage return."""
    return [_ANSI.sub("", line).rsplit("\r", 1)[-1].strip() for line in raw.split("\n")]


def test_a_finished_bar_ends_its_line_and_messages_start_their_own() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    with ProgressDisplay(console) as display:
        for day in ("day-one", "day-two"):
            display(Event("progress", "llm", done=1, total=2))
            display(Event("message", "llm", message=f"{day}: retrying one commit"))
            display(Event("progress", "llm", done=2, total=2))
            display(Event("message", "facts", message=f"{day}: done"))
        assert "day-one: done" in _screen_lines(out.getvalue())
    lines = _screen_lines(out.getvalue())
    assert "day-one: retrying one commit" in lines
    assert "day-one: done" in lines
    assert "day-two: done" in lines
    finished = [ln for ln in lines if ln.startswith("LLM") and "2/2" in ln]
    assert len(finished) == 2, lines  # each day's bar is left finished, on a line of its own


def test_day_position_reads_as_day_of_how_many() -> None:
    from datetime import date

    assert str(DayPosition(date(2026, 8, 14), 3, 7)) == "2026-08-14 (3/7)"
