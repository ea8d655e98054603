"""Benchmark ``repoherald site`` on a synthetic year: 10 repositories, ~100,000 commits.

The archive is written by :mod:`bench.site_archive` (real twin writer, commit
shapes from a real repository). Measured in one run:

1. **Baseline**: reading and parsing every twin with ``json.loads`` — the
   least any build from the twins must do.
2. **Full build** into an empty directory, as a ratio to the baseline and
   as a cost per day page.
3. **No-change rebuild** (nothing changed) and **incremental rebuild** after
   one new day, as ratios to the full build.
4. **Sizes**: the largest page, the whole search index, and what a one-word
   search loads at most (``search/index.js``, the largest term shard and one
   block of documents).

Times are wall-clock (what the targets are about) with the CPU time beside
them: on a shared machine the two differ by whatever else is running.

Targets (issue 23): full ≤ 30 s, incremental ≤ 2 s, largest page ≤ 1 MB,
index ≤ 10 MB. Usage::

    .venv/bin/python -m bench.bench_site [--repos 10 --days 365 --per-day 27] [--keep DIR]

Exit status 1 when a build reports a problem or the incremental build
rebuilt more than the new day; a missed target is reported, not an error.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import TypeVar

from bench.site_archive import add_day, make_archive
from repoherald.site import build_site
from repoherald.site.twins import find_twins

MB = 1024 * 1024


T = TypeVar("T")


def _timed(label: str, fn: Callable[[], T]) -> tuple[T, float]:
    """Run ``fn``; print its wall time and CPU time (the machine may be shared)."""
    t0, c0 = time.perf_counter(), time.process_time()
    value = fn()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{label:<34} {seconds:8.2f} s  (CPU {cpu:.2f} s)")
    return value, seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repos", type=int, default=10)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--per-day", type=int, default=27)
    ap.add_argument("--keep", type=Path, help="Write the archive and site here and keep them.")
    args = ap.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-site-"))
    archive, site = work / "archive", work / "site"
    shutil.rmtree(site, ignore_errors=True)
    start = date(2025, 8, 1)
    try:
        if not (archive / "index.md").exists() and not any(archive.glob("*/*/*.json")):
            commits, _ = _timed(
                "generate archive (not measured)",
                lambda: make_archive(archive, args.repos, args.days, args.per_day, start),
            )
            print(f"  {commits} commits in {args.repos * args.days} twins")
        twins = find_twins(archive)

        def parse_all() -> int:
            return sum(len(json.loads((archive / t.rel).read_bytes())["repos"]) for t in twins)

        _, baseline = _timed("baseline: parse every twin", parse_all)
        full, t_full = _timed("full build", lambda: build_site(archive, site, "en"))
        _, t_none = _timed("rebuild, nothing changed", lambda: build_site(archive, site, "en"))
        add_day(archive, 0, start + timedelta(days=args.days), args.per_day)
        inc, t_inc = _timed("incremental: one new day", lambda: build_site(archive, site, "en"))
        pages = list(site.rglob("*.html"))
        largest = max(pages, key=lambda p: p.stat().st_size)
        index = list((site / "search").rglob("*.js"))
        index_bytes = sum(p.stat().st_size for p in index)
        segments = [p for p in (site / "search").iterdir() if p.is_dir()]
        # What a one-word search loads at most: index.js, the largest term shard,
        # then one block of documents to show.
        one_word = (
            (site / "search/index.js").stat().st_size
            + max(p.stat().st_size for p in (site / "search").glob("t-*.js"))
            + max(p.stat().st_size for p in (site / "search").rglob("docs-*.js"))
        )
        facets = sum(p.stat().st_size for p in (site / "search").rglob("facets.js"))
        print()
        print(f"day pages                          {full.pages}")
        print(f"full / baseline                    {t_full / baseline:8.2f} x")
        print(f"full build per day page            {1000 * t_full / full.pages:8.2f} ms")
        print(f"no-change / full                   {t_none / t_full:8.3f}")
        print(f"incremental / full                 {t_inc / t_full:8.3f}")
        print(
            f"largest page                       {largest.stat().st_size / MB:8.2f} MB"
            f" ({largest.relative_to(site)})"
        )
        print(f"search index ({len(index)} files)        {index_bytes / MB:8.2f} MB")
        print(
            f"one-word search loads at most      {one_word / MB:8.2f} MB ({len(segments)} months)"
        )
        print(f"facets (loaded when filtering)     {facets / MB:8.2f} MB")
        print()
        for name, value, target in (
            ("full build ≤ 30 s", t_full, 30.0),
            ("incremental ≤ 2 s", t_inc, 2.0),
            ("largest page ≤ 1 MB", largest.stat().st_size / MB, 1.0),
            ("search index ≤ 10 MB", index_bytes / MB, 10.0),
        ):
            print(f"target {name:<24} {'met' if value <= target else 'MISSED'}")
        ok = full.ok and inc.ok and len(inc.days_built) == 1
        if not ok:
            print(f"problems: {full.problems or inc.problems}; built: {inc.days_built}")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
