"""Report files written on a thread, in order, while the caller goes on with the next day.

Each report pair is synced to disk before it is renamed into place
(:func:`repoherald.publish.archive.atomic.write_files`); a month's run waits for
sixty fsyncs, a tenth of its wall time. The wait releases the GIL, so one
writer thread takes it off the analysis of the next day. Nothing else
changes: each group of files keeps the guarantees of ``write_files``, groups
land in the order submitted, and the first failure stops the writer (later
groups are not written). Whatever must follow a landed group (the index, the
store's record of the report) runs in the caller's thread, in order, from
:meth:`OrderedWriter.landed` and :meth:`OrderedWriter.finish`, which raise the
failure there.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from repoherald.publish.archive.atomic import write_files

Files = Sequence[tuple[Path, str | bytes]]


class _Skipped(Exception):
    """A group not written because an earlier one failed."""


class OrderedWriter:
    """Writes groups of files with :func:`write_files` on one thread, in the order submitted."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="repoherald-write")
        self._jobs: deque[tuple[Future[None], frozenset[Path], Callable[[], None]]] = deque()
        self._failed = threading.Event()

    def submit(self, files: Files, then: Callable[[], None]) -> None:
        """Write ``files`` (an empty group only keeps its place); ``then`` runs once they landed."""
        group = list(files)
        future = self._pool.submit(self._write, group)
        self._jobs.append((future, frozenset(path for path, _ in group), then))

    def _write(self, files: Files) -> None:
        if self._failed.is_set():
            raise _Skipped
        try:
            write_files(files)
        except BaseException:
            self._failed.set()
            raise

    def landed(self, wait_for: Iterable[Path] = ()) -> None:
        """Run ``then`` of the groups that landed, oldest first; raise the first failure.

        Waits for the groups up to the last one writing any of ``wait_for``
        (to read what it wrote), not for the others.
        """
        wanted = set(wait_for)
        last = max((i for i, job in enumerate(self._jobs) if job[1] & wanted), default=-1)
        while self._jobs and (last >= 0 or self._jobs[0][0].done()):
            future, _, then = self._jobs.popleft()
            last -= 1
            future.result()
            then()

    def finish(self) -> None:
        """Wait for every group, run ``then`` of those that landed, and raise the first failure."""
        try:
            while self._jobs:
                future, _, then = self._jobs.popleft()
                try:
                    future.result()
                except _Skipped:
                    continue
                then()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
