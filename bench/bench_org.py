"""Benchmark an organisation's day: 200 repositories, one model pool, against the floor.

The issue's spec (22, item 6): a synthetic organisation of 200 local git
repositories with distinct histories, 5-10 commits each on the day, an
OpenAI-compatible endpoint on 127.0.0.1 with a fixed latency, and
``repoherald run`` over all of them.

1. **Organisation**: the recorded vllm-ascend shapes (titles, authors, files,
   line counts, messages) are dealt out in consecutive, non-overlapping
   windows, one per repository: two older shapes re-dated to the evening
   before the day, then 5-10 shapes (a seeded draw) re-dated into the day
   (:func:`bench.bench_llm.squeeze_into_day`), replayed with a seed of the
   repository's own (:func:`bench.replay.build_repo`), so no two histories,
   SHAs or file contents are alike. Not measured.
2. **Model-bound run**: ``python -m repoherald run --date DAY`` in a child
   process with a fresh home, against :class:`tests.llm_server.FakeLLM`
   (a real loopback HTTP server in this process) answering every request
   after ``--latency`` seconds with a valid answer that keeps the rules'
   verdict (one request per commit, :func:`bench.bench_llm.good_answer`).
   Its wall time is compared with the floor ``ceil(commits / concurrency) x
   latency``; the server counts the peak of requests in flight.
3. **Rules only**: the same run with ``--no-llm`` and a fresh home (cold:
   git, facts, rules, SQLite, rendering, writes), then again with the same
   home (cached); each wall time divided by the repositories is the
   per-repository overhead.
4. **Peak memory and CPU**: the maximum resident set of each child, and its
   user + system time (``wait4``'s ``ru_maxrss``, ``ru_utime``, ``ru_stime``;
   git's own subprocesses are not counted). On a shared machine the CPU time
   is the figure that does not depend on the neighbours.

Each measured run is a fresh process started as a scheduler would start it,
so the times include Python's start-up and imports (about half a second).
The arguments of every run go through :func:`run_args`: a run against
another store or with several workers is one more option there.

Usage::

    cd /work/main && /work/venv/bin/python -m bench.bench_org \
        [--repos 200] [--latency 1.0] [--concurrency 32] [--keep DIR] [--store-url URL]

``--store-url`` runs them all against one PostgreSQL database (``[store]
url_env``), the URL reaching each run through the environment only.

Exit status: 1 if a run failed or the model did not analyse every commit,
else 0 (a missed timing target is reported, not an error).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bench.bench_llm import good_answer, redate, squeeze_into_day
from bench.replay import DEFAULT_SHAPES, build_repo, load_shapes
from tests.llm_server import FakeLLM

TZ = "Asia/Shanghai"
LANG = "en"
MODEL = "bench-model"
DAY = date(2026, 9, 1)
LEADS = 2
"""Shapes of each repository dated before the day: its history has a past."""
MIN_COMMITS, MAX_COMMITS = 5, 10
FLOOR_SLACK_TARGET = 1.25
STORE_ENV = "REPOHERALD_DATABASE_URL"
"""Where ``--store-url`` reaches the runs: the URL (a secret) is never written to a file."""


@dataclass(frozen=True)
class Org:
    """The organisation on disk: its configuration and how many commits fall on the day."""

    root: Path
    config: Path
    repos: int
    commits: int
    seconds: float


@dataclass(frozen=True)
class Child:
    """One ``repoherald run`` process: its wall and CPU time, exit status, peak memory, stderr."""

    seconds: float
    cpu: float
    """User and system seconds of the process (its threads; not git's subprocesses): on a
    shared machine the wall time says how busy it was, this says what the run cost."""
    status: int
    peak_mib: float
    stderr: str


def build_org(
    root: Path, repos: int, shapes_path: Path, url: str, concurrency: int, store: bool = False
) -> Org:
    """Replay ``repos`` repositories under ``root`` and write their ``repoherald.toml``
    (with ``store``, its store is the PostgreSQL database ``STORE_ENV`` names)."""
    t0 = time.perf_counter()
    shapes = load_shapes(shapes_path, None, None, TZ)
    rng = random.Random(22)
    counts = [rng.randint(MIN_COMMITS, MAX_COMMITS) for _ in range(repos)]
    need = sum(counts) + LEADS * repos
    if need > len(shapes):
        raise SystemExit(f"{repos} repositories need {need} shapes; the file has {len(shapes)}")
    evening = datetime.combine(DAY - timedelta(days=1), datetime.min.time(), ZoneInfo(TZ))
    entries = []
    at = 0
    for i, count in enumerate(counts):
        window = shapes[at : at + LEADS + count]
        at += LEADS + count
        before = window[:LEADS]
        leads = [redate(s, evening + timedelta(hours=20, minutes=m)) for m, s in enumerate(before)]
        name = f"repo-{i:03d}"
        build_repo(leads + squeeze_into_day(window[LEADS:], DAY), root / "org" / name, seed=i)
        entries.append(f'[[repos]]\nsource = "org/{name}"\nname = "{name}"\n')
    config = root / "repoherald.toml"
    config.write_text(
        f'[report]\ntz = "{TZ}"\nlang = "{LANG}"\nout = "reports"\n\n'
        + (f'[store]\nurl_env = "{STORE_ENV}"\n\n' if store else "")
        + f'[llm]\nbase_url = "{url}"\nmodel = "{MODEL}"\nconcurrency = {concurrency}\n'
        "max_retries = 0\n\n" + "\n".join(entries),
        encoding="utf-8",
    )
    return Org(root, config, repos, sum(counts), time.perf_counter() - t0)


def run_args(org: Org, home: Path, *, llm: bool, workers: int = 1) -> list[str]:
    """The command line of one measured run: ``workers`` processes share it through the store."""
    args = ["run", "--config", str(org.config), "--date", DAY.isoformat(), "--home", str(home)]
    if workers > 1:
        args += ["--workers", str(workers)]
    return args if llm else [*args, "--no-llm"]


def timed_child(args: list[str], cwd: Path, store_url: str | None = None) -> Child:
    """``python -m repoherald ARGS``, timed, with its peak resident set from ``wait4``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOHERALD_")}
    if store_url:
        env[STORE_ENV] = store_url
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "repoherald", *args],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    cpu = usage.ru_utime + usage.ru_stime
    return Child(seconds, cpu, proc.returncode, usage.ru_maxrss / 1024, stderr)


def modelled(org: Org) -> tuple[int, int]:
    """(commits in the day's reports, of which the model analysed)."""
    total = by_model = 0
    for twin in (org.root / "reports").glob(f"*/*/{DAY.isoformat()}.{LANG}.json"):
        for repo in json.loads(twin.read_text(encoding="utf-8"))["repos"]:
            for commit in repo["commits"]:
                total += 1
                by_model += commit["analysis"]["analyser"].startswith("llm/")
    return total, by_model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per request")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--shapes", type=Path, default=DEFAULT_SHAPES)
    parser.add_argument("--keep", type=Path, help="build the organisation here and keep it")
    parser.add_argument(
        "--workers", type=int, default=1, help="run --workers N (each worker has its own pool)"
    )
    parser.add_argument(
        "--store-url",
        help="a postgresql:// URL of an empty database: every run uses it as its store"
        " (so the rules-only runs find the model run's facts in it)",
    )
    opts = parser.parse_args(argv)
    root = opts.keep or Path(tempfile.mkdtemp(prefix="bench-org-"))
    problems: list[str] = []
    try:
        with FakeLLM(lambda body, attempt: good_answer(body, attempt), latency=opts.latency) as llm:
            # With --workers N each process has its own pool: N pools of concurrency / N keep
            # the total in flight, and so the floor, the same as one process's.
            per_worker = max(1, opts.concurrency // opts.workers)
            org = build_org(
                root, opts.repos, opts.shapes, llm.base_url, per_worker, bool(opts.store_url)
            )
            print(f"organisation: {org.repos} repositories, {org.commits} commits on {DAY}")
            print(f"  built in {org.seconds:.1f} s under {root} (not measured)")
            llm.clear()
            measured = run_args(org, root / "home-llm", llm=True, workers=opts.workers)
            model = timed_child(measured, root, opts.store_url)
            requests, peak = len(llm.chat_requests), llm.max_concurrency
        total, by_model = modelled(org)
        floor = math.ceil(org.commits / opts.concurrency) * opts.latency
        ratio = model.seconds / floor
        verdict = "PASS" if ratio <= FLOOR_SLACK_TARGET else "MISS"
        print(
            f"\n[1] model-bound run: concurrency {opts.concurrency}"
            f" ({opts.workers} worker(s) x {per_worker}), latency {opts.latency:g} s"
        )
        print(
            f"  wall {model.seconds:.1f} s; floor ceil({org.commits}/{opts.concurrency})"
            f" x {opts.latency:g} s = {floor:.1f} s; wall / floor = {ratio:.2f}"
            f" (target <= {FLOOR_SLACK_TARGET}: {verdict})"
        )
        print(
            f"  requests {requests}, peak in flight {peak}, commits by the model"
            f" {by_model}/{total}, cpu {model.cpu:.1f} s, peak memory {model.peak_mib:.0f} MiB,"
            f" exit {model.status}"
        )
        if model.status != 0 or by_model != org.commits or total != org.commits:
            problems.append(f"model-bound run: exit {model.status}, {by_model}/{total} modelled")
        rules = run_args(org, root / "home-rules", llm=False)
        cold = timed_child(rules, root, opts.store_url)
        cached = timed_child(rules, root, opts.store_url)
        print("\n[2] rules only (--no-llm)")
        first = "after the model run" if opts.store_url else "cold"
        for label, child in ((first, cold), ("cached", cached)):
            per_repo = 1000 * child.seconds / org.repos
            cpu_per_repo = 1000 * child.cpu / org.repos
            print(
                f"  {label}: wall {child.seconds:.1f} s, {per_repo:.0f} ms per repository"
                f" (cpu {cpu_per_repo:.0f} ms), peak memory {child.peak_mib:.0f} MiB,"
                f" exit {child.status}"
            )
            if child.status != 0:
                problems.append(f"rules-only {label} run: exit {child.status}")
        for child in (model, cold, cached):
            if child.status != 0:
                print(child.stderr[-2000:], file=sys.stderr)
    finally:
        if opts.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
