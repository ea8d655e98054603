"""Benchmark the GitHub source: requests per repository-day, 304s on a re-run, concurrency.

The issue's spec: a 40-commit day served by the GitHub test server
(:class:`tests.github_server.FakeGitHub`, a real loopback HTTP server serving a
real git repository in GitHub's JSON shapes) with 100 ms added to every
request.

1. **Day**: :func:`tests.github_day.busy_day` writes 40 commits into one day,
   each touching a Python module in one of five packages and its test, some a
   dependency manifest or a doc, over a baseline commit the day before. Not
   measured.
2. **First run**: one in-process :func:`repoherald.pipeline.run` of that day
   for ``github:acme/busy`` with a fresh home (empty store, no ETags) and
   ``[github] concurrency = 4``. Counted: every HTTP request the server
   received, by endpoint and status. Timed with :func:`time.perf_counter`.
3. **Re-run**: the same run with the same home. Target: at least 90 % of its
   requests answered ``304 Not Modified``, and no more requests than [2].
4. **Concurrency 1**: [2] again with a fresh home and ``concurrency = 1``.
   Target: its wall time at least 3x that of [2].

Usage::

    cd /work/main && .venv/bin/python -m bench.bench_github [--commits 40] [--latency 0.1]

Exit status: 1 if a run reported failures or a report lacks commits, else 0
(a missed target is reported, not an error).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from repoherald.config import Settings, build_settings
from repoherald.pipeline.run import run
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, busy_day
from tests.github_server import FakeGitHub, Recorded

REPO = "acme/busy"
SHARE_304_TARGET = 0.90
SPEEDUP_TARGET = 3.0


@dataclass
class Measured:
    label: str
    seconds: float
    requests: list[Recorded]
    commits: int
    failures: list[str]

    @property
    def not_modified(self) -> int:
        return sum(r.status == 304 for r in self.requests)


def settings(work: Path, api_url: str, home: Path, concurrency: int) -> Settings:
    cfg = work / f"c{concurrency}.toml"
    cfg.write_text(
        f'[report]\ntz = "{TZ_NAME}"\n\n[github]\napi_url = "{api_url}"\n'
        f"concurrency = {concurrency}\n\n"
        f'[[repos]]\nsource = "github:{REPO}"\nname = "{REPO}"\n',
        encoding="utf-8",
    )
    s = build_settings(config=str(cfg), day=str(DAY), home=str(home), out=str(work / "out"))
    return replace(s, github=replace(s.github, token_env="BENCH_NO_TOKEN"))


def measure(label: str, s: Settings, server: FakeGitHub) -> Measured:
    server.clear()
    start = time.perf_counter()
    result = run(s)
    seconds = time.perf_counter() - start
    twin = next(p for p in result.written if p.suffix == ".json")
    commits = len(json.loads(twin.read_text(encoding="utf-8"))["repos"][0]["commits"])
    return Measured(label, seconds, server.requests, commits, list(result.failures))


def endpoint(path: str) -> str:
    path = path.split("?", 1)[0]
    path = re.sub(r"[0-9a-f]{40}", "{sha}", path)
    return re.sub(r"^/repos/[^/]+/[^/]+", "", path) or "/"


def breakdown(m: Measured) -> str:
    counts = Counter((endpoint(r.path), r.status) for r in m.requests)
    return ", ".join(f"{ep} {st}: {n}" for (ep, st), n in sorted(counts.items()))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--commits", type=int, default=40)
    p.add_argument("--latency", type=float, default=0.1, help="seconds added to every request")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-github-"))
    try:
        fx = GitFixture.init(work / "repo")
        busy_day(fx, args.commits)
        print(f"day: {args.commits} commits on {DAY} ({TZ_NAME}) after a baseline (not measured)")
        print(f"server: FakeGitHub on 127.0.0.1, {args.latency * 1000:.0f} ms per request")
        with FakeGitHub(latency=args.latency) as server:
            server.add_repo(REPO, fx.path)
            home = work / "home"
            first = measure(
                "[2] first run, concurrency 4", settings(work, server.api_url, home, 4), server
            )
            again = measure(
                "[3] re-run, same home", settings(work, server.api_url, home, 4), server
            )
            serial = measure(
                "[4] first run, concurrency 1",
                settings(work, server.api_url, work / "home1", 1),
                server,
            )
        runs = (first, again, serial)
        for m in runs:
            print(
                f"{m.label}: {m.seconds:.2f} s, {len(m.requests)} requests"
                f" ({m.not_modified} x 304), {m.commits} commits"
            )
            print(f"    {breakdown(m)}")
        share = again.not_modified / len(again.requests) if again.requests else 1.0
        fewer = len(again.requests) <= len(first.requests)
        speedup = serial.seconds / first.seconds
        print()
        print(
            f"requests per repository-day: first run {len(first.requests)},"
            f" re-run {len(again.requests)}"
        )
        print(
            f"re-run 304 share: {share:.0%} (target >= {SHARE_304_TARGET:.0%}):"
            f" {'PASS' if share >= SHARE_304_TARGET else 'FAIL'}"
        )
        print(
            f"re-run requests / first run: {len(again.requests) / len(first.requests):.3f}"
            f" (target <= 1): {'PASS' if fewer else 'FAIL'}"
        )
        print(
            f"wall time concurrency 1 / concurrency 4: {speedup:.2f}x"
            f" (target >= {SPEEDUP_TARGET:g}x): {'PASS' if speedup >= SPEEDUP_TARGET else 'FAIL'}"
        )
        problems = [f for m in runs for f in m.failures]
        problems += [
            f"{m.label}: {m.commits} commits, not {args.commits}"
            for m in runs
            if m.commits != args.commits
        ]
        for p in problems:
            print(f"problem: {p}", file=sys.stderr)
        return 1 if problems else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
