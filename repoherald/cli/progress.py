"""Progress on stderr from pipeline events: a rich bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from repoherald.cli.terminal import say
from repoherald.pipeline.events import Event


class ProgressDisplay:
    """Subscribes to pipeline events; use as a context manager so the bar is cleaned up."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._last_step = -1

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, event: Event) -> None:
        if event.kind == "message":
            say(event.message)
        elif event.kind == "progress" and event.stage == "llm":
            self._llm(event.done, event.total)

    def _llm(self, done: int, total: int) -> None:
        if sys.stderr.isatty():
            if self._bar is None:
                self._bar = Progress(
                    TextColumn("LLM"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True,
                )  # fmt: skip
                self._bar.start()
            if self._task is None or done == 1:
                if self._task is not None:
                    self._bar.remove_task(self._task)
                self._task = self._bar.add_task("llm", total=total)
            self._bar.update(self._task, completed=done, total=total)
            return
        step = done * 10 // max(total, 1)
        if step != self._last_step or done == total:
            self._last_step = step
            click.echo(f"LLM: {done}/{total} commits done", err=True)
        if done == total:
            self._last_step = -1
