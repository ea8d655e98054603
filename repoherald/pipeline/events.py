"""Stage events: how the CLI's progress display and the benchmarks watch a run.

The pipeline emits a ``start`` and an ``end`` event around each stage of each
repository-day (``end`` carries the stage's wall time), ``progress`` events
while the LLM works, and ``message`` events for one-line status. Subscribers
are plain callables; they must be quick and must not raise.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Literal

EventKind = Literal["start", "end", "progress", "message"]
STAGES = ("source", "downstream", "facts", "rules", "store", "llm", "render", "publish")
"""Every stage name an event can carry, in pipeline order."""


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in a run."""

    kind: EventKind
    stage: str
    repo: str | None = None
    day: date | None = None
    done: int = 0
    total: int = 0
    seconds: float = 0.0
    """Wall time of the stage, on ``end`` events."""
    message: str = ""


EventSink = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class DayPosition:
    """Which day of the run's days is being worked on, for progress lines."""

    day: date
    number: int
    """1-based."""
    of: int

    def __str__(self) -> str:
        """``2026-08-14 (3/7)``: a run over a week says how far it has got."""
        return f"{self.day} ({self.number}/{self.of})"


class Emitter:
    """Fans events out to the subscribers given to :func:`repoherald.pipeline.run`."""

    def __init__(self, sinks: tuple[EventSink, ...] = ()) -> None:
        self._sinks = sinks

    def emit(self, event: Event) -> None:
        for sink in self._sinks:
            sink(event)

    def say(
        self, message: str, stage: str = "source", repo: str | None = None, day: date | None = None
    ) -> None:
        """A one-line status message."""
        self.emit(Event("message", stage, repo=repo, day=day, message=message))

    @contextmanager
    def stage(
        self, stage: str, repo: str | None = None, day: date | None = None, total: int = 0
    ) -> Iterator[None]:
        """Emit ``start`` now and ``end`` (with the elapsed time) when the block exits."""
        if not self._sinks:
            yield
            return
        self.emit(Event("start", stage, repo=repo, day=day, total=total))
        t0 = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - t0
            self.emit(Event("end", stage, repo=repo, day=day, total=total, seconds=elapsed))
