"""Benchmark the LLM stage: a 40-commit day against a chat server with a fixed latency.

The issue's spec: a 40-commit day replayed from the recorded vllm-ascend
shapes, against the test server (:class:`tests.llm_server.FakeLLM`, a real
loopback HTTP server) with 2 s of latency per request.  Our run at
concurrency 8 is compared with the old tool's pattern (one request at a
time, then a 5 s pause).

1. **Day**: 40 consecutive real commit shapes, ending with the newest commit of
   the busiest recorded day, re-dated into that one day (Asia/Shanghai): the
   committer times are mapped linearly onto the day, so order and rhythm are
   kept, and each author date moves by the same amount as its committer date.
   Everything else (paths, line counts, names, messages) is unchanged.  One
   older shape goes first, re-dated to the evening before, so the replay's
   synthetic baseline commit (dated one second before the first replayed
   commit) also falls on the day before.  The replay is not measured.
2. **Our run**: one in-process :func:`repoherald.pipeline.run` for that day with
   ``--llm-concurrency 8``, a fresh home (empty cache) and a server that
   answers every request well after ``--latency`` seconds, timed with
   :func:`time.perf_counter`.  Nothing is warmed up that could fill a cache.
   Compared with the floor ``ceil(40 / 8) x latency``.
3. **Our overhead**: the same run against a zero-latency server (fresh home):
   wall / commits is everything that is ours (git, facts, rules, diff packing,
   prompts, the HTTP client, validation, fact-check, rendering, SQLite), plus
   the in-process fake server's own CPU time.
4. **The old pattern**: the request bodies our run sent, posted one at a time
   with :func:`httpx.post`, each followed by ``time.sleep(5)``.  By default a
   sample of ``--old-sample`` requests is measured and extrapolated linearly
   (the pattern is strictly sequential); ``--old-sample 40`` measures it all.
5. **Cached re-run**: our run again with the same home must send no request.

Usage::

    cd /work/main && /work/venv/bin/python -m bench.bench_llm \
        [--commits 40] [--latency 2.0] [--concurrency 8] [--old-sample 5] [--profile 25]

Exit status: 1 if a run reported failures or a request of the old pattern
failed, else 0 (a missed timing target is reported, not an error).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import pstats
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from bench.replay import DEFAULT_SHAPES, build_repo, load_shapes
from repoherald import pipeline
from repoherald.config import Settings, build_settings
from tests.llm_server import FakeLLM, RecordedRequest, Reply, last_user_message, ok

TZ = "Asia/Shanghai"
LANG = "zh"
MODEL = "bench-model"

RATIO_TARGET = 10.0
FLOOR_SLACK_TARGET = 1.25
OVERHEAD_MS_TARGET = 50.0
OLD_PAUSE = 5.0
"""Seconds the old tool slept after every request."""

_NONCE = re.compile(r"<commit-data-([0-9a-f]{16})>")
_VERDICT = re.compile(r"rule verdict: type ([\w/]+), importance (\w+)")


# --------------------------------------------------------------------------- the day


@dataclass
class Day:
    """The replayed repository and the day it is reported for."""

    repo: Path
    day: date
    shas: list[str]
    """The measured commits, oldest first (the lead commit excluded)."""
    original: tuple[date, date]
    """First and last original committer day of the measured shapes."""
    lead: int
    seconds: float


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _local_day(shape: dict[str, Any]) -> date:
    return _when(shape["committer_date"]).astimezone(ZoneInfo(TZ)).date()


def pick_shapes(
    shapes_path: Path, commits: int, lead: int = 1
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], date]:
    """``lead`` + ``commits`` consecutive shapes ending with the busiest day's newest commit.

    Returns (lead shapes, measured shapes, the busiest day), oldest first.
    """
    shapes = load_shapes(shapes_path, None, None, TZ)
    per_day = Counter(_local_day(s) for s in shapes)
    busiest = max(per_day, key=lambda d: (per_day[d], d))
    end = max(i for i, s in enumerate(shapes) if _local_day(s) == busiest) + 1
    start = end - commits
    if start - lead < 0:
        raise SystemExit(f"the shapes file has fewer than {commits + lead} commits up to {busiest}")
    return shapes[start - lead : start], shapes[start:end], busiest


def redate(shape: dict[str, Any], committed: datetime) -> dict[str, Any]:
    """A copy of ``shape`` committed at ``committed``; the author date moves by the same delta."""
    old = _when(shape["committer_date"])
    delta = committed - old
    author = _when(shape["author_date"])
    moved_author = (author + delta).astimezone(author.tzinfo)
    return {
        **shape,
        "committer_date": committed.isoformat(),
        "author_date": moved_author.isoformat(),
    }


def squeeze_into_day(
    shapes: list[dict[str, Any]], day: date, margin: timedelta = timedelta(minutes=10)
) -> list[dict[str, Any]]:
    """Re-date ``shapes`` into ``day`` (local), mapping committer times linearly.

    The earliest original commit lands at 00:10 and the latest at 23:50, so
    the order (and the bursts and gaps) of the original history are kept.
    """
    zone = ZoneInfo(TZ)
    stamps = [_when(s["committer_date"]).timestamp() for s in shapes]
    lo, hi = min(stamps), max(stamps)
    start = datetime.combine(day, datetime.min.time(), zone) + margin
    span = (timedelta(days=1) - 2 * margin).total_seconds()
    out = []
    for i, (shape, ts) in enumerate(zip(shapes, stamps, strict=True)):
        share = (ts - lo) / (hi - lo) if hi > lo else i / max(len(shapes) - 1, 1)
        out.append(redate(shape, start + timedelta(seconds=round(share * span))))
    return out


def prepare_day(shapes_path: Path, commits: int, dest: Path) -> Day:
    """Pick, re-date and replay the day into ``dest`` (see the module docstring)."""
    t0 = time.perf_counter()
    leads, measured, day = pick_shapes(shapes_path, commits)
    original = (_local_day(measured[0]), _local_day(measured[-1]))
    evening = datetime.combine(day - timedelta(days=1), datetime.min.time(), ZoneInfo(TZ))
    moved_leads = [redate(s, evening + timedelta(hours=20, minutes=i)) for i, s in enumerate(leads)]
    moved = squeeze_into_day(measured, day)
    shas = build_repo(moved_leads + moved, dest)[len(moved_leads) :]
    return Day(dest, day, shas, original, len(leads), time.perf_counter() - t0)


# --------------------------------------------------------------------------- the server


def _wants_full(body: dict[str, Any]) -> bool:
    """True if the request asks for the full analysis (its schema has ``impact``).

    The schema is in ``response_format``, or in the system prompt for a server
    without structured output.
    """
    fmt = json.dumps(body.get("response_format", {}))
    system = body["messages"][0].get("content", "") if body.get("messages") else ""
    return '"impact"' in fmt or '"impact"' in str(system)


def good_answer(body: dict[str, Any], attempt: int) -> Reply:
    """A valid answer of the depth asked for, agreeing with the rules' verdict.

    The model keeps the rule verdict quoted in the prompt (a short request is
    only sent for a low-importance commit), so no answer triggers an
    escalation from the short to the full request: one request per commit.
    """
    found = _VERDICT.search(last_user_message(body))
    change_type, importance = found.groups() if found else ("other", "low")
    answer: dict[str, Any] = {
        "change_type": change_type,
        "importance": importance,
        "judgement_reason": "The rule verdict matches the files and the message.",
        "summary": "The commit changes the files listed above.",
    }
    if _wants_full(body):
        answer |= {
            "impact": ["Users of the changed modules."],
            "insights": {
                "architecture": "No new modules.",
                "performance": "The diff does not tell.",
                "security": "No security relevance visible.",
                "maintainability": "Readable.",
                "compatibility": "No interface removed.",
            },
            "risks": [
                {
                    "risk": "Behaviour change",
                    "detail": "The changed code paths run in production.",
                    "mitigation": "Run the downstream tests.",
                }
            ],
            "recommendations": ["Review the changed modules."],
        }
    return ok(answer)


# --------------------------------------------------------------------------- our runs


@dataclass
class OurRun:
    """One timed pipeline run against a FakeLLM server."""

    label: str
    seconds: float
    commits: int
    analysed_by_llm: int
    failures: list[str]
    requests: list[RecordedRequest]
    peak: int
    prompt_tokens: list[int] = field(default_factory=list)
    """Per commit: ``analysis.usage[0]`` from the JSON twin."""
    arrivals: list[float] = field(default_factory=list)
    """Seconds from the start of the run to each request's arrival at the server."""

    @property
    def ms_per_commit(self) -> float:
        return 1000.0 * self.seconds / max(self.commits, 1)


def make_settings(day: Day, server: FakeLLM, out: Path, home: Path, concurrency: int) -> Settings:
    """``repoherald report --repo R --date DAY --llm-base-url ... --llm-concurrency N``."""
    return build_settings(
        repos=(str(day.repo),),
        day=day.day.isoformat(),
        tz=TZ,
        lang=LANG,
        out=str(out),
        home=str(home),
        cwd=out.parent,  # keep a repoherald.toml in the caller's cwd out of the way
        llm_base_url=server.base_url,
        llm_model=MODEL,
        llm_concurrency=concurrency,
    )


def timed_run(label: str, settings: Settings, server: FakeLLM) -> OurRun:
    """Run the pipeline once (timed), then read what it sent and wrote.

    The server's records are cleared first, so requests and peak concurrency
    belong to this run only.
    """
    server.clear()
    gc.collect()
    started = time.monotonic()  # the server stamps arrivals with time.monotonic()
    t0 = time.perf_counter()
    result = pipeline.run(settings)
    seconds = time.perf_counter() - t0
    requests = server.chat_requests
    twin_path = next(p for p in result.written if p.suffix == ".json")
    twin = json.loads(twin_path.read_text(encoding="utf-8"))
    commits = [c for repo in twin["repos"] for c in repo["commits"]]
    return OurRun(
        label=label,
        seconds=seconds,
        commits=result.commits,
        analysed_by_llm=sum(1 for c in commits if c["analysis"]["analyser"].startswith("llm/")),
        failures=[f"{label}: {f}" for f in result.failures],
        requests=requests,
        peak=server.max_concurrency,
        prompt_tokens=[int(c["analysis"]["usage"][0]) for c in commits],
        arrivals=sorted(r.arrived - started for r in requests),
    )


def request_breakdown(requests: list[RecordedRequest]) -> tuple[Counter[str], int]:
    """(requests by depth, commits that needed more than one request)."""
    depth: Counter[str] = Counter()
    per_commit: Counter[str] = Counter()
    for r in requests:
        depth["full" if _wants_full(r.body) else "short"] += 1
        found = _NONCE.search(last_user_message(r.body))
        per_commit[found.group(1) if found else "?"] += 1
    return depth, sum(1 for n in per_commit.values() if n > 1)


# --------------------------------------------------------------------------- old pattern


@dataclass
class OldPattern:
    """The old tool's loop, measured on a sample and extrapolated."""

    sampled: int
    seconds: float
    per_commit: float
    total: float
    failures: list[str]


def old_pattern(bodies: list[bytes], url: str, sample: int, commits: int) -> OldPattern:
    """POST ``bodies[:sample]`` one at a time, sleeping ``OLD_PAUSE`` after each.

    The bodies are the exact bytes our run sent.  Each request is a plain
    :func:`httpx.post` (a new connection every time, as a script would do).
    """
    failures: list[str] = []
    t0 = time.perf_counter()
    for i, body in enumerate(bodies[:sample]):
        response = httpx.post(
            url, content=body, headers={"Content-Type": "application/json"}, timeout=120.0
        )
        if response.status_code != 200:
            failures.append(f"old pattern request {i + 1}: HTTP {response.status_code}")
        time.sleep(OLD_PAUSE)
    seconds = time.perf_counter() - t0
    done = max(min(sample, len(bodies)), 1)
    per_commit = seconds / done
    return OldPattern(done, seconds, per_commit, per_commit * commits, failures)


# --------------------------------------------------------------------------- printing


def _verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def print_run(index: str, run: OurRun, floor: float | None = None) -> None:
    """One line (or a few) per timed run."""
    print(
        f"{index} {run.label}: {run.seconds:7.3f} s  {run.commits} commits,"
        f" {run.analysed_by_llm} analysed by the model, {len(run.requests)} requests,"
        f" peak concurrency {run.peak}  -> {run.ms_per_commit:.1f} ms/commit"
    )
    if run.arrivals:
        print(
            f"    timeline: first request at {run.arrivals[0]:.3f} s, last request at"
            f" {run.arrivals[-1]:.3f} s after the start; run ended at {run.seconds:.3f} s"
        )
    if floor is not None:
        print(
            f"    floor ceil({run.commits}/conc) x latency = {floor:.2f} s;"
            f" wall/floor = {run.seconds / floor:.3f}"
            f" ({100.0 * (run.seconds / floor - 1):+.1f} %)"
        )


def profile_run(day: Day, work: Path, concurrency: int, top: int) -> None:
    """cProfile one zero-latency run (fresh home) and print the top functions.

    Only the main thread is profiled: the pipeline and its asyncio HTTP client,
    not the fake server's handler threads.
    """
    with FakeLLM(responder=good_answer, latency=0.0) as server:
        settings = make_settings(day, server, work / "prof-out", work / "prof-home", concurrency)
        prof = cProfile.Profile()
        prof.enable()
        pipeline.run(settings)
        prof.disable()
    for key in ("cumulative", "tottime"):
        print(f"\n== cProfile, zero-latency run: top {top} by {key} ==")
        pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats(key).print_stats(top)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_llm",
        description="Time the LLM stage on a replayed 40-commit day against a fake server.",
    )
    parser.add_argument("--commits", type=int, default=40, help="commits in the day")
    parser.add_argument("--latency", type=float, default=2.0, help="server seconds per request")
    parser.add_argument("--concurrency", type=int, default=8, help="--llm-concurrency")
    parser.add_argument(
        "--old-sample",
        type=int,
        default=5,
        metavar="N",
        help="requests of the old pattern to measure (extrapolated to --commits)",
    )
    parser.add_argument("--shapes", type=Path, default=DEFAULT_SHAPES, help="shapes .jsonl")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also cProfile a zero-latency run and print the top N functions",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    if args.commits < 1 or args.concurrency < 1 or args.latency < 0 or args.old_sample < 1:
        parser.error("--commits, --concurrency and --old-sample must be >= 1, --latency >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the summary; see the module docstring."""
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    problems: list[str] = []
    try:
        # -- the day (not measured)
        day = prepare_day(args.shapes, args.commits, work / "repo")
        print(
            f"replay: {len(day.shas)} consecutive commits (originally {day.original[0]} to"
            f" {day.original[1]}) re-dated into {day.day} ({TZ}), after {day.lead} lead"
            f" commit(s) and the synthetic baseline on {day.day - timedelta(days=1)};"
            f" {day.seconds:.2f} s (not measured)"
        )
        print(
            f"server: FakeLLM on 127.0.0.1, {args.latency:g} s per request, valid answers"
            " agreeing with the rules; our run: pipeline.run() in-process, fresh home,"
            f" --llm-concurrency {args.concurrency}, timed with perf_counter"
        )

        # -- 2. our run at the given latency, then 6. the cached re-run
        home = work / "home"
        with FakeLLM(responder=good_answer, latency=args.latency) as server:
            ours = timed_run(
                "our run",
                make_settings(day, server, work / "out1", home, args.concurrency),
                server,
            )
            cached = timed_run(
                "cached re-run",
                make_settings(day, server, work / "out2", home, args.concurrency),
                server,
            )
        problems += ours.failures + cached.failures
        if ours.commits != len(day.shas):
            problems.append(f"the report shows {ours.commits} commits, not {len(day.shas)}")
        floor = math.ceil(ours.commits / args.concurrency) * args.latency
        print()
        print_run("[1]", ours, floor)
        depth, repeated = request_breakdown(ours.requests)
        print(
            f"    requests: {len(ours.requests)} for {ours.commits} commits"
            f" ({depth['short']} short, {depth['full']} full);"
            f" {repeated} commit(s) needed more than one request"
        )
        if len(ours.requests) != ours.commits:
            print(
                "    NOTE: more requests than commits: escalations from short to full, repairs"
                " of invalid JSON, truncated answers or retries"
            )
        tokens = ours.prompt_tokens
        print(
            f"    prompt tokens per commit (JSON twin analysis.usage[0]):"
            f" mean {sum(tokens) / max(len(tokens), 1):,.0f}, max {max(tokens, default=0):,},"
            f" total {sum(tokens):,} (the server counts characters / 4)"
        )
        print_run("[2]", cached)

        # -- 3. our overhead against a zero-latency server
        with FakeLLM(responder=good_answer, latency=0.0) as fast:
            zero = timed_run(
                "zero-latency run",
                make_settings(day, fast, work / "out3", work / "home-zero", args.concurrency),
                fast,
            )
        problems += zero.failures
        print_run("[3]", zero)
        beyond_floor_ms = 1000.0 * (ours.seconds - floor) / max(ours.commits, 1)
        print(
            f"    our overhead: {zero.ms_per_commit:.1f} ms/commit at zero latency"
            f" (includes the in-process fake server's CPU time under the GIL);"
            f" (wall at {args.latency:g} s - floor) / commits = {beyond_floor_ms:.1f} ms/commit"
        )

        # -- 4. the old tool's pattern: the same bodies, one at a time, 5 s pause after each
        bodies = [r.raw for r in ours.requests]
        with FakeLLM(responder=good_answer, latency=args.latency) as old_server:
            url = f"{old_server.base_url}/chat/completions"
            old = old_pattern(bodies, url, args.old_sample, ours.commits)
        problems += old.failures
        exact = old.sampled >= ours.commits
        print(
            f"[4] old pattern (sequential httpx.post + {OLD_PAUSE:g} s sleep):"
            f" measured {old.sampled} request(s) in {old.seconds:.2f} s"
            f" = {old.per_commit:.3f} s/commit"
        )
        label = "measured" if exact else f"extrapolated {old.sampled} -> {ours.commits}"
        print(f"    old pattern for {ours.commits} commits: {old.total:.1f} s ({label})")
        ratio = old.total / ours.seconds if ours.seconds else float("inf")
        print(f"    old/ours = {old.total:.1f} s / {ours.seconds:.2f} s = {ratio:.1f}x")

        if args.profile:
            profile_run(day, work, args.concurrency, args.profile)

        # -- summary
        slack = ours.seconds / floor if floor else float("inf")
        print("\n== summary ==")
        rows = [
            (
                f"old/ours >= {RATIO_TARGET:.0f}x",
                f"{ratio:.1f}x ({old.total:.1f} s {label} / {ours.seconds:.2f} s)",
                ratio >= RATIO_TARGET,
            ),
            (
                f"wall within {100 * (FLOOR_SLACK_TARGET - 1):.0f} % of floor",
                f"{ours.seconds:.2f} s vs {floor:.2f} s = {slack:.3f}x",
                slack <= FLOOR_SLACK_TARGET,
            ),
            (
                f"overhead < {OVERHEAD_MS_TARGET:.0f} ms/commit",
                f"{zero.ms_per_commit:.1f} ms/commit at zero latency"
                f" ({beyond_floor_ms:.1f} beyond the floor at {args.latency:g} s)",
                zero.ms_per_commit < OVERHEAD_MS_TARGET,
            ),
            (
                "one request per commit",
                f"{len(ours.requests)} requests for {ours.commits} commits",
                len(ours.requests) == ours.commits,
            ),
            (
                "cached re-run sends nothing",
                f"{len(cached.requests)} requests",
                not cached.requests,
            ),
            ("no run failures", f"{len(problems)} problem(s)", not problems),
        ]
        for target, value, passed in rows:
            print(f"  {_verdict(passed)}  {target:<30} {value}")
        for problem in problems[:20]:
            print(f"        {problem}")
        print("  (timing targets inform; exit 1 only for run failures)")
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
