"""Several repositories' runs under way at once, so the model pool never runs dry.

Each repository's run is a generator of waits (:mod:`repoherald.pipeline.waits`).
:class:`Lanes` starts them in order; when one yields (its jobs are with the
pool), the next one is started, until the pool holds enough work to keep
every slot busy (twice its ``concurrency`` in jobs) or as many repositories
are open as it has slots for. Then it waits for any batch to be answered and
resumes that repository. So a run over many small repositories keeps
``concurrency`` requests in flight, while the repositories open at once stay
few (each holds its source open).

A repository that fails (a :class:`~repoherald.errors.RepoheraldError`) ends
its own lane only; anything else stops the run, and every lane still open is
closed, so its sources are closed and its run is logged as aborted.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from repoherald.errors import RepoheraldError
from repoherald.pipeline.waits import Waits

if TYPE_CHECKING:
    from repoherald.llm.pool import ModelPool

T = TypeVar("T")

Ended = Callable[[T | None, str | None], None]
"""Told how a lane ended: its result, or the one-line error that ended it."""


@dataclass
class _Lane(Generic[T]):
    steps: Waits[T]
    ended: Ended[T]
    waiting: Future[Any] | None = None


class Lanes(Generic[T]):
    """Runs started one after another, overlapping while they wait for ``pool``."""

    def __init__(self, pool: ModelPool | None) -> None:
        self._pool = pool
        self._open: list[_Lane[T]] = []

    def __enter__(self) -> Lanes[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        """Close what is still open (after an error that stopped the run)."""
        open_lanes, self._open = self._open, []
        for lane in open_lanes:
            lane.steps.close()

    def start(self, steps: Waits[T], ended: Ended[T]) -> None:
        """Run ``steps`` up to its first wait; ``ended`` hears how it ends, maybe at once."""
        while self._full():
            self._turn()
        self._advance(_Lane(steps, ended), first=True)

    def drain(self) -> None:
        """Wait until every lane has ended."""
        while self._open:
            self._turn()

    def _full(self) -> bool:
        pool = self._pool
        if pool is None or not self._open:
            return False
        slots = pool.cfg.concurrency
        return len(self._open) >= 2 * slots or pool.backlog >= 2 * slots

    def _turn(self) -> None:
        """Wait for a batch to be answered, then resume every lane whose batch is."""
        assert self._pool is not None
        self._pool.wait(lane.waiting for lane in self._open if lane.waiting is not None)
        for lane in [x for x in self._open if x.waiting is not None and x.waiting.done()]:
            self._open.remove(lane)
            self._advance(lane, first=False)

    def _advance(self, lane: _Lane[T], *, first: bool) -> None:
        try:
            lane.waiting = next(lane.steps) if first else lane.steps.send(None)
        except StopIteration as stop:
            lane.ended(stop.value, None)
            return
        except RepoheraldError as exc:
            lane.ended(None, str(exc))
            return
        if self._pool is None:
            lane.steps.close()
            raise RuntimeError("a run without a model pool waited for the model")
        self._open.append(lane)
