"""Steps of a run that wait for the model by yielding, so that other repositories go on.

A report run is written as straight-line code: read, analyse, ask the model,
render, publish. The model's answers take seconds; an organisation's run
must not spend them idle. So the one step that waits hands its batch to the
run's :class:`~repoherald.llm.pool.ModelPool` and *yields* the pending
future; a run's code is a generator of such waits (:data:`Waits`), which
resumes once the answers are in and reads them with ``future.result()``.

:func:`finish` drives one run to its end, waiting at each yield. ``run`` over
many repositories drives many at once (:class:`~repoherald.pipeline.lanes.Lanes`):
while one repository waits, the next is read and analysed, and its jobs join
the same pool. Everything but the model's requests stays on the caller's
thread: the store and the sources are never shared between threads.
"""

from __future__ import annotations

from collections.abc import Generator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from repoherald.llm.pool import ModelPool

T = TypeVar("T")

Waits = Generator[Future[Any], None, T]
"""A step that may wait for the model: it yields the futures it waits for, returns a ``T``."""


def finish(steps: Waits[T], pool: ModelPool | None) -> T:
    """Run ``steps`` to their end, waiting on ``pool`` whenever they yield."""
    try:
        waiting = next(steps)
        while True:
            if pool is None:
                raise RuntimeError("a run without a model pool waited for the model")
            pool.wait([waiting])
            waiting = steps.send(None)
    except StopIteration as stop:
        value: T = stop.value
        return value
    finally:
        steps.close()
