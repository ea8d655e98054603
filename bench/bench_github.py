"""Benchmark the GitHub source: requests per commit, 304s on a re-run, concurrency.

A day served by the GitHub test server (:class:`tests.github_server.FakeGitHub`,
a real loopback HTTP server serving a real git repository in GitHub's JSON
shapes) with 100 ms added to every request, read with a token (so pull-request
context may use GraphQL, which GitHub serves to tokens only).

1. **Day** (not measured): ``--day real`` (the default) replays the recorded
   shapes of a real repository (``tests/data/shapes-2026-08-17_22.jsonl``,
   :mod:`bench.replay`: its paths, statuses, line counts, messages) and reports
   2026-08-20 (21 commits in Asia/Shanghai), each commit with the pull request
   its title names; ``--day busy`` is :func:`tests.github_day.busy_day`:
   ``--commits`` commits, each touching a Python module in one of five packages
   and its test, some a dependency manifest or a doc.
2. **First run**: one in-process :func:`repoherald.pipeline.run` of that day
   for ``github:acme/busy`` with a fresh home (empty store, no ETags) and
   ``[github] concurrency = 4``. Counted: every HTTP request the server
   received, by endpoint and status, and per reported commit: REST requests
   (target: at most 6), GraphQL queries, and the requests spent on
   pull-request context (target: at most one per 50 commits). Timed with
   :func:`time.perf_counter`.
3. **Re-run**: the same run with the same home. Target: at least 90 % of its
   requests answered ``304 Not Modified``, and no more requests than [2].
4. **Concurrency 1**: [2] again with a fresh home and ``concurrency = 1``.
   Target: its wall time at least 3x that of [2].

Usage::

    .venv/bin/python -m bench.bench_github [--day real|busy] [--commits 40] [--latency 0.1]

Exit status: 1 if a run reported failures or a report lacks commits, else 0
(a missed target is reported, not an error).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bench.replay import build_repo, load_shapes
from repoherald.config import Settings, build_settings
from repoherald.pipeline.run import run
from tests.gitfixture import GitFixture
from tests.github_day import DAY, TZ_NAME, busy_day
from tests.github_server import FakeGitHub, Recorded

REPO = "acme/busy"
SHARE_304_TARGET = 0.90
SPEEDUP_TARGET = 3.0
REST_PER_COMMIT_TARGET = 6.0
PR_PER_COMMIT_TARGET = 1 / 50
SHAPES = Path(__file__).resolve().parents[1] / "tests" / "data" / "shapes-2026-08-17_22.jsonl"
REAL_DAY = date(2026, 8, 20)
REAL_TZ = "Asia/Shanghai"
TOKEN_ENV = "BENCH_GITHUB_TOKEN"
TOKEN = "bench-token-not-a-secret"
PULL_NUMBER = re.compile(r"\(#(\d+)\)\s*$")


@dataclass
class Measured:
    label: str
    seconds: float
    requests: list[Recorded]
    commits: int
    failures: list[str]
    with_pr: int
    """Commits the report shows with their pull request."""

    @property
    def not_modified(self) -> int:
        return sum(r.status == 304 for r in self.requests)

    @property
    def graphql(self) -> int:
        return sum(r.path.split("?", 1)[0].endswith("/graphql") for r in self.requests)

    @property
    def rest(self) -> int:
        return len(self.requests) - self.graphql

    @property
    def pr_context(self) -> int:
        """Requests spent on pull-request context: GraphQL queries, REST pulls lookups."""
        return self.graphql + sum(
            re.search(r"/pulls(/\d+)?$", r.path.split("?", 1)[0]) is not None for r in self.requests
        )


@dataclass(frozen=True)
class Day:
    day: date
    tz: str
    commits: int


def real_day(work: Path, server: FakeGitHub) -> Day:
    """The recorded shapes replayed; each commit's ``(#N)`` becomes pull request N."""
    shapes = load_shapes(SHAPES, None, None)
    shas = build_repo(shapes, work / "repo", seed=5)
    server.add_repo(REPO, work / "repo")
    commits = 0
    for shape, sha in zip(shapes, shas, strict=True):
        if load_shapes_day(shape) == REAL_DAY:
            commits += 1
        m = PULL_NUMBER.search(shape["title"])
        if m:
            server.add_pull(
                REPO, int(m.group(1)), [sha], title=shape["title"], body=shape.get("body", "")
            )
    return Day(REAL_DAY, REAL_TZ, commits)


def load_shapes_day(shape: dict[str, str]) -> date:
    return datetime.fromisoformat(shape["committer_date"]).astimezone(ZoneInfo(REAL_TZ)).date()


def synthetic_day(work: Path, server: FakeGitHub, commits: int) -> Day:
    fx = GitFixture.init(work / "repo")
    busy_day(fx, commits)
    server.add_repo(REPO, fx.path)
    return Day(DAY, TZ_NAME, commits)


def settings(work: Path, api_url: str, home: Path, concurrency: int, day: Day) -> Settings:
    cfg = work / f"c{concurrency}.toml"
    cfg.write_text(
        f'[report]\ntz = "{day.tz}"\n\n[github]\napi_url = "{api_url}"\n'
        f'concurrency = {concurrency}\ntoken_env = "{TOKEN_ENV}"\n\n'
        f'[[repos]]\nsource = "github:{REPO}"\nname = "{REPO}"\n',
        encoding="utf-8",
    )
    return build_settings(
        config=str(cfg), day=str(day.day), home=str(home), out=str(work / "out"), no_llm=True
    )


def measure(label: str, s: Settings, server: FakeGitHub) -> Measured:
    server.clear()
    start = time.perf_counter()
    result = run(s)
    seconds = time.perf_counter() - start
    twin = next(p for p in result.written if p.suffix == ".json")
    listed = json.loads(twin.read_text(encoding="utf-8"))["repos"][0]["commits"]
    with_pr = sum(bool(c["facts"].get("pull_request")) for c in listed)
    return Measured(label, seconds, server.requests, len(listed), list(result.failures), with_pr)


def endpoint(path: str) -> str:
    path = path.split("?", 1)[0]
    path = re.sub(r"[0-9a-f]{40}", "{sha}", path)
    path = re.sub(r"/pulls/\d+$", "/pulls/{n}", path)
    return re.sub(r"^/repos/[^/]+/[^/]+", "", path) or "/"


def breakdown(m: Measured) -> str:
    counts = Counter((endpoint(r.path), r.status) for r in m.requests)
    return ", ".join(f"{ep} {st}: {n}" for (ep, st), n in sorted(counts.items()))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--day", choices=("real", "busy"), default="real")
    p.add_argument("--commits", type=int, default=40, help="commits of the busy day")
    p.add_argument("--latency", type=float, default=0.1, help="seconds added to every request")
    return p.parse_args(argv)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-github-"))
    os.environ[TOKEN_ENV] = TOKEN
    try:
        with FakeGitHub(latency=args.latency, token=TOKEN) as server:
            if args.day == "real":
                day = real_day(work, server)
                where = f"replayed from {SHAPES.name}"
                print(f"day: {day.commits} commits on {day.day} ({day.tz}), {where}")
            else:
                day = synthetic_day(work, server, args.commits)
                print(f"day: {day.commits} commits on {day.day} ({day.tz}) after a baseline")
            print(f"server: FakeGitHub on 127.0.0.1, {args.latency * 1000:.0f} ms per request")
            home = work / "home"
            first = measure(
                "[2] first run, concurrency 4",
                settings(work, server.api_url, home, 4, day),
                server,
            )
            again = measure(
                "[3] re-run, same home", settings(work, server.api_url, home, 4, day), server
            )
            serial = measure(
                "[4] first run, concurrency 1",
                settings(work, server.api_url, work / "home1", 1, day),
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
        n = max(first.commits, 1)
        rest, graphql, pr = first.rest / n, first.graphql / n, first.pr_context / n
        print()
        print(
            f"requests per repository-day: first run {len(first.requests)},"
            f" re-run {len(again.requests)}"
        )
        print(
            f"REST requests per commit (first run): {rest:.2f}"
            f" (target <= {REST_PER_COMMIT_TARGET:g}): {verdict(rest <= REST_PER_COMMIT_TARGET)}"
        )
        print(f"GraphQL queries per commit (first run): {graphql:.3f}")
        # A day of fewer than 50 commits cannot take less than one request.
        pr_ok = first.pr_context <= max(1.0, first.commits * PR_PER_COMMIT_TARGET)
        print(
            f"pull-request context requests per commit (first run): {pr:.3f},"
            f" {first.pr_context} for {first.commits} commits, {first.with_pr} of them with"
            f" their pull request (target <= 1 per 50 commits): {verdict(pr_ok)}"
        )
        print(
            f"re-run 304 share: {share:.0%} (target >= {SHARE_304_TARGET:.0%}):"
            f" {verdict(share >= SHARE_304_TARGET)}"
        )
        print(
            f"re-run requests / first run: {len(again.requests) / len(first.requests):.3f}"
            f" (target <= 1): {verdict(fewer)}"
        )
        print(
            f"wall time concurrency 1 / concurrency 4: {speedup:.2f}x"
            f" (target >= {SPEEDUP_TARGET:g}x): {verdict(speedup >= SPEEDUP_TARGET)}"
        )
        problems = [f for m in runs for f in m.failures]
        problems += [
            f"{m.label}: {m.commits} commits, not {day.commits}"
            for m in runs
            if m.commits != day.commits
        ]
        for problem in problems:
            print(f"problem: {problem}", file=sys.stderr)
        return 1 if problems else 0
    finally:
        os.environ.pop(TOKEN_ENV, None)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
