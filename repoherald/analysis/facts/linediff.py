"""Which runs of lines differ between two versions of a file, in about linear time.

Not a minimal diff, as ``difflib`` would compute at quadratic cost on a
large file with edits far apart: only a true one. Everything outside the
hunks is the same on both sides, which is all that
:mod:`repoherald.analysis.pyapi.outline` relies on to know what to parse again.
"""

from __future__ import annotations

from collections import Counter

_SMALL = 64
"""Changed runs shorter than this (both sides together) are not split further."""

Hunk = tuple[int, int, int, int]
"""``old[a0:a1]`` became ``new[b0:b1]``."""


def diff_lines(old: list[bytes], new: list[bytes]) -> list[Hunk]:
    """Changed runs of lines, in order: a true alignment, found in about linear time.

    Equal runs are skipped by comparing list slices (in C, galloping); at a
    difference, the sides resynchronise on the next line that occurs once on
    each side. It need not be the minimal diff, only a true one: everything
    outside the hunks is the same on both sides, which is all the callers
    rely on.
    """
    lo1, hi1, lo2, hi2 = _trim(old, new, 0, len(old), 0, len(new))
    if lo1 == hi1 and lo2 == hi2:
        return []
    if hi1 - lo1 + hi2 - lo2 <= _SMALL:
        return [(lo1, hi1, lo2, hi2)]
    once_old, once_new = Counter(old[lo1:hi1]), Counter(new[lo2:hi2])
    where = dict(zip(new[lo2:hi2], range(lo2, hi2), strict=True))
    hunks: list[Hunk] = []
    i, j = lo1, lo2
    while i < hi1 and j < hi2:
        run = _equal_run(old, new, i, j, min(hi1 - i, hi2 - j))
        i, j = i + run, j + run
        if i >= hi1 or j >= hi2:
            break
        resync = _resync(old, i, hi1, j, once_old, once_new, where)
        if resync is None:
            break
        hunks.append(_trim(old, new, i, resync[0], j, resync[1]))
        i, j = resync
    if i < hi1 or j < hi2:
        hunks.append(_trim(old, new, i, hi1, j, hi2))
    return hunks


def _equal_run(old: list[bytes], new: list[bytes], i: int, j: int, limit: int) -> int:
    """How many lines from old[i] and new[j] on are equal, found by galloping slices."""
    n, step = 0, 1
    while n < limit:
        size = min(step, limit - n)
        if old[i + n : i + n + size] == new[j + n : j + n + size]:
            n, step = n + size, step * 2
        elif size == 1:
            break
        else:
            step = 1
    return n


def _resync(
    old: list[bytes],
    i: int,
    hi: int,
    j: int,
    once_old: Counter[bytes],
    once_new: Counter[bytes],
    where: dict[bytes, int],
) -> tuple[int, int] | None:
    """The next (i, j) at or after (i, j) where a line occurring once on each side meets."""
    for k in range(i, hi):
        line = old[k]
        if once_old[line] == 1 and once_new[line] == 1 and where[line] >= j:
            return k, where[line]
    return None


def _trim(
    old: list[bytes], new: list[bytes], lo1: int, hi1: int, lo2: int, hi2: int
) -> tuple[int, int, int, int]:
    """Shrink the ranges by their common head and tail (compared in C, by slices)."""
    step = 64
    while (
        lo1 + step <= hi1 and lo2 + step <= hi2 and old[lo1 : lo1 + step] == new[lo2 : lo2 + step]
    ):
        lo1, lo2 = lo1 + step, lo2 + step
    while lo1 < hi1 and lo2 < hi2 and old[lo1] == new[lo2]:
        lo1, lo2 = lo1 + 1, lo2 + 1
    while (
        hi1 - step >= lo1 and hi2 - step >= lo2 and old[hi1 - step : hi1] == new[hi2 - step : hi2]
    ):
        hi1, hi2 = hi1 - step, hi2 - step
    while hi1 > lo1 and hi2 > lo2 and old[hi1 - 1] == new[hi2 - 1]:
        hi1, hi2 = hi1 - 1, hi2 - 1
    return lo1, hi1, lo2, hi2
