"""One model pool per run: every repository's requests share the endpoint's limits.

An organisation's run covers hundreds of repositories of a few commits each.
Given a pool of their own, one after another, they keep a handful of
requests in flight however high ``concurrency`` is, and the run lasts as long
as the number of repositories says, not the model. A :class:`ModelPool` is
what they share instead: one event loop on a thread of its own, one HTTP
connection pool, one gate of ``concurrency`` requests in flight, one pace
(``requests_per_minute``), one circuit breaker, one token meter for the
run's budget, and one clock for the stage's time (``stage_timeout``).

The run's own thread keeps everything else (sources, the store, rendering):
it hands a batch of jobs to the pool (:meth:`ModelPool.submit`), goes on with
the next repository, and comes back for the answers (:meth:`ModelPool.wait`).
Whatever the pool has to tell the run's thread (progress, "a batch is done")
is queued and run on that thread while it waits, so event subscribers and
the store never see another thread.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

from repoherald.breaker import CircuitBreaker
from repoherald.llm.client import ChatClient
from repoherald.llm.meter import Meter
from repoherald.llm.pace import RequestPace
from repoherald.llm.settings import LlmSettings
from repoherald.llm.stage_time import StageTime
from repoherald.redact import strip_userinfo

T = TypeVar("T")

BREAKER_THRESHOLD = 3
"""Consecutive connection failures after which the endpoint counts as down for the run."""

Progress = Callable[[int, int], None]


def endpoint_breaker(cfg: LlmSettings) -> CircuitBreaker:
    """A circuit breaker for the endpoint ``cfg`` names (closed; the URL without credentials)."""
    return CircuitBreaker(BREAKER_THRESHOLD, f"LLM endpoint {strip_userinfo(cfg.base_url)}")


class ModelPool:
    """The endpoint of ``cfg`` as the whole run shares it; use :meth:`running` around its use.

    ``breaker`` and ``stage_time`` are given when they must outlive the pool;
    by default it makes its own. The pool can be started again after it
    stopped: the breaker, the meter and the stage's clock carry over.
    """

    def __init__(
        self,
        cfg: LlmSettings,
        *,
        breaker: CircuitBreaker | None = None,
        stage_time: StageTime | None = None,
    ) -> None:
        self.cfg = cfg
        self.breaker = breaker if breaker is not None else endpoint_breaker(cfg)
        self.stage_time = stage_time if stage_time is not None else StageTime(cfg.stage_timeout)
        self.meter = Meter(budget=cfg.token_budget)
        """The run's tokens and requests; each analyser's meter reports to it."""
        self._pace = RequestPace(cfg.requests_per_minute) if cfg.requests_per_minute else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: ChatClient | None = None
        self._gate: asyncio.Semaphore | None = None
        self._inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        # On the loop's thread: the batches under way, and the end of the stage's time.
        self._busy = 0
        self._busy_since = 0.0
        self._ends = 0.0
        # On the run's thread: jobs handed over and answered since the pool was last idle.
        self._total = 0
        self._done = 0

    # -- the run's thread ------------------------------------------------

    @contextmanager
    def running(self) -> Iterator[ModelPool]:
        """The pool's thread and connections, for the block (already running: nothing more)."""
        if self._loop is not None:
            yield self
            return
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="repoherald-llm", daemon=True)
        thread.start()
        self._loop = loop
        try:
            asyncio.run_coroutine_threadsafe(self._open(), loop).result()
            yield self
        finally:
            try:
                asyncio.run_coroutine_threadsafe(self._close(), loop).result()
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join()
                loop.close()
                self._loop = None

    @property
    def backlog(self) -> int:
        """Jobs handed to the pool and not answered yet."""
        return self._total - self._done

    def submit(
        self,
        work: Callable[[ChatClient, Callable[[], None]], Coroutine[Any, Any, T]],
        jobs: int,
        on_done: Progress | None = None,
    ) -> Future[T]:
        """Run ``work(client, job_done)`` on the pool's loop; ``jobs`` is how many it holds.

        ``work`` calls ``job_done()`` once per job answered; ``on_done`` then
        hears, on the run's thread, the pool's progress since it was last idle
        (every repository's jobs, not this batch's alone).
        """
        loop = self._loop
        if loop is None:
            raise RuntimeError("ModelPool.submit outside ModelPool.running()")
        assert self._client is not None
        client = self._client
        self._total += jobs

        def answered() -> None:
            self._done += 1
            done, total = self._done, self._total
            if self._done == self._total:
                self._done = self._total = 0
            if on_done is not None:
                on_done(done, total)

        def job_done() -> None:
            self._inbox.put(answered)

        future = asyncio.run_coroutine_threadsafe(self._busy_while(work(client, job_done)), loop)
        future.add_done_callback(lambda _: self._inbox.put(_wake))
        return future

    def wait(self, futures: Iterable[Future[Any]]) -> None:
        """Return once one of ``futures`` is done, running what the pool queued meanwhile."""
        pending = list(futures)
        if not pending:
            raise ValueError("ModelPool.wait needs a future to wait for")
        while not any(f.done() for f in pending):
            self._inbox.get()()
        while not self._inbox.empty():
            self._inbox.get()()

    # -- the loop's thread -------------------------------------------------

    async def _open(self) -> None:
        cfg = self.cfg
        self._gate = asyncio.Semaphore(cfg.concurrency)
        self._client = ChatClient(
            cfg.base_url,
            cfg.model,
            api_key=cfg.api_key(),
            api_key_env=cfg.api_key_env,
            timeout=cfg.timeout,
            max_retries=cfg.max_retries,
            concurrency=cfg.concurrency,
            temperature=cfg.temperature,
            breaker=self.breaker,
            pace=self._pace.take if self._pace is not None else None,
        )

    async def _close(self) -> None:
        """Cancel what a run that stopped early left behind, then close the connections."""
        here = asyncio.current_task()
        left = [task for task in asyncio.all_tasks() if task is not here]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _busy_while(self, work: Coroutine[Any, Any, T]) -> T:
        async with self._busy_period():
            return await work

    @asynccontextmanager
    async def _busy_period(self) -> AsyncIterator[None]:
        """The stage's seconds run while at least one batch is under way, whoever's it is."""
        loop = asyncio.get_running_loop()
        if self._busy == 0:
            self._busy_since = loop.time()
            self._ends = self._busy_since + self.stage_time.left()
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            if self._busy == 0:
                self.stage_time.used += loop.time() - self._busy_since

    @property
    def ends(self) -> float:
        """When the stage's time runs out, on the loop's clock (inside a batch)."""
        return self._ends

    @property
    def gate(self) -> asyncio.Semaphore:
        """``concurrency`` requests in flight, for every repository of the run."""
        assert self._gate is not None, "the pool is not running"
        return self._gate


def _wake() -> None:
    """Queued when a batch ends, so that :meth:`ModelPool.wait` looks at the futures again."""
