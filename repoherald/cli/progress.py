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

from repoherald.cli.terminal import printable, say
from repoherald.pipeline.events import Event
from repoherald.redact import redact


class ProgressDisplay:
    """Subscribes to pipeline events; use as a context manager so the bar is cleaned up.

    While a bar is drawn, messages go through its console, which prints them
    above the bar; a line written past it would land on the bar's own line.
    A finished bar is stopped, which ends its line, so what follows starts on
    a line of its own.
    """

    def __init__(self, console: Console | None = None) -> None:
        """``console`` is the terminal to draw and print on (default: stderr, via ``say``)."""
        self._console = console
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._last_step = -1

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self._finish_bar()

    def __call__(self, event: Event) -> None:
        if event.kind == "message":
            self._say(event.message)
        elif event.kind == "progress" and event.stage == "llm":
            self._llm(event.done, event.total)

    def _say(self, message: str) -> None:
        console = self._bar.console if self._bar is not None else self._console
        if console is None:
            say(message)
            return
        console.print(
            printable(redact(message)), markup=False, highlight=False, emoji=False, soft_wrap=True
        )

    def _on_terminal(self) -> bool:
        return self._console.is_terminal if self._console is not None else sys.stderr.isatty()

    def _finish_bar(self) -> None:
        bar, self._bar, self._task = self._bar, None, None
        if bar is not None:
            bar.stop()

    def _llm(self, done: int, total: int) -> None:
        if self._on_terminal():
            if self._bar is not None and done == 1:
                self._finish_bar()  # a new batch while the last one never finished
            if self._bar is None:
                self._bar = Progress(
                    TextColumn("LLM"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=self._console or Console(stderr=True),
                )  # fmt: skip
                self._bar.start()
                self._task = self._bar.add_task("llm", total=total)
            assert self._task is not None
            self._bar.update(self._task, completed=done, total=total)
            if done >= total:
                self._finish_bar()
            return
        step = done * 10 // max(total, 1)
        if step != self._last_step or done == total:
            self._last_step = step
            click.echo(f"LLM: {done}/{total} commits done", err=True)
        if done == total:
            self._last_step = -1
