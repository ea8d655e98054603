"""Benchmark ``repoherald`` on a replayed month of real commit shapes.

One invocation measures the performance targets and prints ratios:

1. **First run**: one :func:`repoherald.pipeline.run` over every day of the
   range (``--since``/``--until`` semantics, a fresh home, so nothing is
   cached), timed with :func:`time.perf_counter`.  The time covers the whole
   run: opening the repository, the ``rev-list`` walk, ``cat-file`` and
   ``diff-tree`` reads, facts, rules, the SQLite writes, the Markdown and JSON
   rendering and the atomic (fsync'ed) file writes.  It excludes the replay,
   Python start-up and imports.  A second, instrumented first run (fresh home
   again) splits the time into stages by wrapping a few package functions at
   run time (the package itself is not modified).
2. **Cached re-run**: the same run with the same home (the SQLite cache), its
   speed-up over the first run, and a check that both runs wrote the same
   reports (Markdown byte-identical apart from the ``> 生成时间：`` line, JSON
   identical apart from ``generated_at``).
3. **Memory**: peak RSS of a fresh Python process that runs the pipeline over
   1, 7 and 30 days (fresh home each), against a process that only imports it.

Usage::

    cd /work/main && /work/venv/bin/python -m bench.bench_report \
        [--since 2026-07-01 --until 2026-07-31] [--profile 25]

Exit status: 1 if a run failed or the reports of the two runs differ, else 0
(missing a timing or memory target is reported, not an error).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bench.replay import DEFAULT_SHAPES, build_repo, load_shapes
from repoherald import pipeline
from repoherald.config import Settings, build_settings
from repoherald.pipeline import RunResult
from repoherald.pipeline.events import STAGES as PIPELINE_STAGES
from repoherald.pipeline.events import Event

TZ = "Asia/Shanghai"
LANG = "zh"
GENERATED_PREFIX = "> 生成时间："

PER_COMMIT_MS_TARGET = 20.0
CACHE_SPEEDUP_TARGET = 10.0
MEMORY_RATIO_TARGET = 1.5
MEMORY_DAYS = (1, 7, 30)

STAGES = PIPELINE_STAGES

# Runs in a fresh interpreter to measure peak RSS; prints one JSON line.
# The peak is VmHWM from /proc/self/status, read by the child itself.  Neither
# getrusage() figure works here: RUSAGE_CHILDREN in the parent is a running
# maximum over every child ever waited for (the replay's git fast-import
# included), and on Linux a child's ru_maxrss starts from the parent's RSS at
# fork() and survives exec(), so every child would report the bench's own
# ~200 MB.  VmHWM belongs to the address space that exec() creates afresh.
# Elsewhere, ru_maxrss is the fallback.
_CHILD_CODE = """
import json, resource, sys
def peak_kb():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]), "VmHWM"
    except OSError:
        pass
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return (kb // 1024 if sys.platform == "darwin" else kb), "ru_maxrss"
mode, repo, since, until, out, home, tz, lang = sys.argv[1:9]
from repoherald.config import build_settings
from repoherald.pipeline import run
info = {"analysed": 0, "commits": 0, "reports": 0, "failures": []}
if mode == "run":
    r = run(build_settings(repos=(repo,), since=since, until=until, out=out, home=home,
                           tz=tz, lang=lang))
    info = {"analysed": r.analysed, "commits": r.commits,
            "reports": len(r.days), "failures": list(r.failures)}
info["peak_kb"], info["source"] = peak_kb()
print(json.dumps(info))
"""


# --------------------------------------------------------------------------- runs


@dataclass
class Timed:
    """What one timed pipeline run did (the RunResult itself is not kept)."""

    label: str
    seconds: float
    commits: int
    """Commits shown in the reports (each day's entries, summed)."""
    analysed: int
    cached: int
    days: int
    files: int
    megabytes: float
    """Size of the files written (Markdown and JSON)."""
    api_changes: int
    failures: list[str]

    @property
    def ms_per_commit(self) -> float:
        return 1000.0 * self.seconds / max(self.commits, 1)

    @classmethod
    def of(cls, label: str, result: RunResult, seconds: float) -> Timed:
        """Summarise ``result`` so the run's objects can be freed."""
        return cls(
            label=label,
            seconds=seconds,
            commits=result.commits,
            analysed=result.analysed,
            cached=result.cached,
            days=len(result.days),
            files=len(result.written),
            megabytes=sum(p.stat().st_size for p in result.written) / 2**20,
            api_changes=_count_api_changes(result.written),
            failures=[f"{label}: {f}" for f in result.failures],
        )


def _count_api_changes(paths: list[Path]) -> int:
    """API changes listed in the JSON twins (a run no longer keeps its reports in memory)."""
    total = 0
    for path in paths:
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            total += sum(
                len(c["facts"]["api_changes"]) for repo in data["repos"] for c in repo["commits"]
            )
    return total


@dataclass
class Replay:
    """The replayed repository."""

    path: Path
    first_day: date
    commits: int
    seconds: float
    baseline_in_window: bool


def replay(shapes_path: Path, since: date, until: date, dest: Path) -> Replay:
    """Replay the shapes of ``[since, until]`` (and a little before) into ``dest``.

    The replay starts on an earlier day that has commits, so its synthetic
    *baseline* commit (every pre-existing file added at once: ~1,000 files and
    ~4 MB of JSON for July 2026) is dated before ``since`` and stays out of
    the measured reports, as older history does in a real repository.
    """
    t0 = time.perf_counter()
    lead = 1
    while True:
        start = since - timedelta(days=lead)
        shapes = load_shapes(shapes_path, start, until + timedelta(days=1), TZ)
        first_day = _shape_day(shapes[0]) if shapes else since
        if first_day < since or lead >= 64:
            break
        lead *= 2
    build_repo(shapes, dest)
    return Replay(
        path=dest,
        first_day=first_day,
        commits=sum(1 for s in shapes if _shape_day(s) >= since),
        seconds=time.perf_counter() - t0,
        baseline_in_window=first_day >= since,
    )


def _shape_day(shape: dict[str, Any]) -> date:
    stamp = datetime.fromisoformat(shape["committer_date"].replace("Z", "+00:00"))
    return stamp.astimezone(ZoneInfo(TZ)).date()


def make_settings(repo: Path, since: date, until: date, out: Path, home: Path) -> Settings:
    """Settings for ``repoherald --repo REPO --since --until`` (until inclusive)."""
    return build_settings(
        repos=(str(repo),),
        since=since.isoformat(),
        until=until.isoformat(),
        out=str(out),
        home=str(home),
        tz=TZ,
        lang=LANG,
        cwd=out.parent,  # keep a repoherald.toml in the caller's cwd out of the way
    )


def timed_run(label: str, settings: Settings) -> Timed:
    """Run the pipeline once, timed with ``perf_counter``.

    Garbage from earlier runs is collected first (outside the timing), so each
    run starts from the same heap rather than paying for its predecessors.
    """
    gc.collect()
    t0 = time.perf_counter()
    result = pipeline.run(settings)
    seconds = time.perf_counter() - t0
    return Timed.of(label, result, seconds)


# --------------------------------------------------------------------------- stage clock


class StageClock:
    """Wall time per stage, summed from the pipeline's own stage events (no patching)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def __call__(self, event: Event) -> None:
        if event.kind == "end":
            self.seconds[event.stage] += event.seconds
            self.calls[event.stage] += 1


def staged_run(label: str, settings: Settings) -> tuple[Timed, StageClock]:
    """A timed run whose stage events are summed by a :class:`StageClock`."""
    clock = StageClock()
    gc.collect()
    t0 = time.perf_counter()
    result = pipeline.run(settings, events=clock)
    return Timed.of(label, result, time.perf_counter() - t0), clock


# --------------------------------------------------------------------------- comparison


def _strip_generated(text: bytes) -> bytes:
    prefix = GENERATED_PREFIX.encode("utf-8")
    return b"".join(line for line in text.splitlines(keepends=True) if not line.startswith(prefix))


def compare_outputs(first: Path, second: Path) -> tuple[int, list[str]]:
    """Compare two report trees; return (files compared, differences)."""
    names_a = {p.relative_to(first) for p in first.rglob("*") if p.suffix in (".md", ".json")}
    names_b = {p.relative_to(second) for p in second.rglob("*") if p.suffix in (".md", ".json")}
    problems = [f"only in first run: {p}" for p in sorted(names_a - names_b)]
    problems += [f"only in cached run: {p}" for p in sorted(names_b - names_a)]
    for rel in sorted(names_a & names_b):
        a, b = (first / rel).read_bytes(), (second / rel).read_bytes()
        if rel.suffix == ".md":
            if _strip_generated(a) != _strip_generated(b):
                problems.append(f"Markdown differs: {rel}")
        else:
            ja, jb = json.loads(a), json.loads(b)
            ja.pop("generated_at", None)
            jb.pop("generated_at", None)
            if ja != jb:
                problems.append(f"JSON differs (beyond generated_at): {rel}")
    return len(names_a & names_b), problems


# --------------------------------------------------------------------------- memory


@dataclass
class MemorySample:
    """Peak RSS of one child process."""

    days: int
    peak_mb: float
    source: str
    """Where the peak came from: ``VmHWM`` (Linux) or ``ru_maxrss``."""
    commits: int
    failures: list[str]


def busiest_day(repo: Path, since: date, until: date) -> date:
    """The day in [since, until] with the most lines changed (the heaviest single report)."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--format=@%ct", "--shortstat"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    load: dict[date, int] = {}
    current: date | None = None
    for line in out.splitlines():
        if line.startswith("@"):
            current = datetime.fromtimestamp(int(line[1:]), ZoneInfo(TZ)).date()
        elif current is not None and since <= current <= until and "changed" in line:
            load[current] = load.get(current, 0) + sum(
                int(n) for n in re.findall(r"(\d+) (?:insertion|deletion)", line)
            )
    return max(load, key=lambda d: load[d]) if load else since


def measure_memory(
    repo: Path, since: date, days: int, work: Path, tag: str | None = None
) -> MemorySample:
    """Peak RSS of a fresh interpreter reporting ``days`` days (0: import only)."""
    tag = tag or f"mem-{days}d"
    until = since + timedelta(days=max(days, 1) - 1)
    argv = [
        sys.executable,
        "-c",
        _CHILD_CODE,
        "run" if days else "import",
        str(repo),
        since.isoformat(),
        until.isoformat(),
        str(work / tag / "out"),
        str(work / tag / "home"),
        TZ,
        LANG,
    ]
    (work / tag).mkdir()
    proc = subprocess.run(argv, cwd=work / tag, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return MemorySample(days, 0.0, "-", 0, [f"{tag}: exit {proc.returncode}: {tail[0]}"])
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return MemorySample(
        days,
        info["peak_kb"] / 1024,
        info["source"],
        info["commits"],
        [f"{tag}: {f}" for f in info["failures"]],
    )


# --------------------------------------------------------------------------- printing


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_breakdown(title: str, run: Timed, clock: StageClock) -> None:
    """Per-stage times of a run, from the pipeline's stage events."""
    print(f"\n{title}: {run.seconds:.2f} s for {run.commits} commits")
    covered = sum(clock.seconds.values())
    rows = [(s, clock.seconds.get(s, 0.0)) for s in STAGES if clock.calls[s]]
    rows.append(("other", run.seconds - covered))
    for stage, secs in rows:
        share = 100.0 * secs / run.seconds if run.seconds else 0.0
        per = 1000.0 * secs / max(run.commits, 1)
        print(f"  {stage:<8} {secs:7.3f} s  {share:5.1f} %  {per:6.2f} ms/commit")
    print(
        "  'other' = pipeline code between the stages: store open and run log, day windows,"
        " bucketing the walk, Entry and DayReport building"
    )


def profile_runs(repo: Path, since: date, until: date, work: Path, top: int) -> None:
    """cProfile a first run and a cached run (fresh home); print the top functions."""
    settings = make_settings(repo, since, until, work / "prof-out", work / "prof-home")
    for label in ("first run", "cached run"):
        prof = cProfile.Profile()
        prof.enable()
        pipeline.run(settings)
        prof.disable()
        print(f"\n== cProfile, {label}: top {top} by cumulative time ==")
        pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats("cumulative").print_stats(top)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_report",
        description="Time repoherald on a replayed month: first run, cached run, memory.",
    )
    parser.add_argument("--since", type=date.fromisoformat, default=date(2026, 7, 1))
    parser.add_argument(
        "--until", type=date.fromisoformat, default=date(2026, 7, 31), help="inclusive"
    )
    parser.add_argument("--shapes", type=Path, default=DEFAULT_SHAPES, help="shapes .jsonl")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also cProfile a first and a cached run and print the top N functions",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    if args.until < args.since:
        parser.error("--until is before --since")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run every benchmark and print the summary; see the module docstring."""
    args = parse_args(argv)
    since, until = args.since, args.until
    span = (until - since).days + 1
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    problems: list[str] = []
    diffs: list[str] = []
    try:
        # -- replay (not measured)
        rep = replay(args.shapes, since, until, work / "repo")
        repo = rep.path
        print(
            f"replay: {rep.commits} commits in {since}..{until} ({span} days), replayed from"
            f" {rep.first_day} so the synthetic baseline commit falls before the window,"
            f" into {repo} in {rep.seconds:.2f} s (not measured)"
        )
        if rep.baseline_in_window:
            print("  WARNING: no earlier commits: the baseline commit is inside the window")
        print(
            "measured: one in-process pipeline.run() over all days: repo open, rev-list,"
            " cat-file/diff-tree reads, facts, rules, SQLite, Markdown+JSON render, fsync'ed"
            " writes; not Python start-up or imports"
        )

        # -- 1. first run and 2. cached run (same home)
        home = work / "home"
        first = timed_run("first run", make_settings(repo, since, until, work / "out1", home))
        cached = timed_run("cached run", make_settings(repo, since, until, work / "out2", home))
        problems += first.failures + cached.failures
        print(
            f"\n[1] first run:  {first.seconds:7.3f} s  {first.commits} commits"
            f" ({first.analysed} analysed, {first.cached} cached), {first.days} days,"
            f" {first.files} files  -> {first.ms_per_commit:.2f} ms/commit"
        )
        print(
            f"    wrote {first.megabytes:.1f} MB; {first.api_changes} API changes found (the"
            " replay synthesises Python files whose lines are mostly public top-level defs,"
            " so API changes, and the JSON, are far larger than a real repository's)"
        )
        print(
            f"[2] cached run: {cached.seconds:7.3f} s  {cached.commits} commits"
            f" ({cached.analysed} analysed, {cached.cached} cached)"
            f"  -> {cached.ms_per_commit:.2f} ms/commit"
        )
        speedup = first.seconds / cached.seconds if cached.seconds else float("inf")
        print(f"    first/cached = {speedup:.1f}x")
        if cached.analysed:
            print(f"    WARNING: the cached run re-analysed {cached.analysed} commits")
        compared, diffs = compare_outputs(work / "out1", work / "out2")
        if diffs:
            print(f"    REPORTS DIFFER ({len(diffs)} of {compared} files):")
            for d in diffs[:20]:
                print(f"      {d}")
        else:
            print(
                f"    reports identical: {compared} files (Markdown byte-identical apart from"
                f" the '{GENERATED_PREFIX}' line, JSON apart from generated_at)"
            )

        # -- stage breakdown (separate instrumented runs, fresh home)
        home_b = work / "home-staged"
        staged_first, clock_first = staged_run(
            "staged first run", make_settings(repo, since, until, work / "out3", home_b)
        )
        staged_cached, clock_cached = staged_run(
            "staged cached run", make_settings(repo, since, until, work / "out4", home_b)
        )
        problems += staged_first.failures + staged_cached.failures
        print_breakdown("[1b] breakdown of a first run", staged_first, clock_first)
        print_breakdown("[2b] breakdown of a cached run", staged_cached, clock_cached)

        # -- 3. memory
        print("\n[3] peak RSS of a fresh Python process (first run, fresh home each):")
        base = measure_memory(repo, since, 0, work)
        problems += base.failures
        print(f"    import only            {base.peak_mb:7.1f} MB  ({base.source})")
        samples: list[MemorySample] = []
        for days in sorted({min(n, span) for n in MEMORY_DAYS}):
            sample = measure_memory(repo, since, days, work)
            problems += sample.failures
            samples.append(sample)
            print(
                f"    {days:2d} day(s) {sample.commits:4d} commits {sample.peak_mb:7.1f} MB"
                f"  (+{sample.peak_mb - base.peak_mb:.1f} MB over import)"
            )
        heavy_day = busiest_day(repo, since, until)
        heavy = measure_memory(repo, heavy_day, 1, work, tag="mem-busiest")
        problems += heavy.failures
        print(
            f"    busiest day alone ({heavy_day}) {heavy.commits:4d} commits"
            f" {heavy.peak_mb:7.1f} MB  (+{heavy.peak_mb - base.peak_mb:.1f} MB over import)"
        )
        lo, hi = samples[0], samples[-1]
        flat_ratio = hi.peak_mb / heavy.peak_mb if heavy.peak_mb else float("inf")
        print(
            f"    {hi.days}-day run / busiest single day = {flat_ratio:.2f}x: the peak of a long"
            " run is set by its heaviest day, not by how many days it covers"
        )
        mem_ratio = hi.peak_mb / lo.peak_mb if lo.peak_mb else float("inf")
        over_lo, over_hi = lo.peak_mb - base.peak_mb, hi.peak_mb - base.peak_mb
        growth = f"{over_hi / over_lo:.1f}x" if over_lo > 0 else "n/a"
        print(
            f"    {hi.days}-day/{lo.days}-day = {mem_ratio:.2f}x; above the import baseline"
            f" {growth} ({over_lo:.1f} -> {over_hi:.1f} MB). One run holds every commit it"
            f" analyses at once ({lo.commits} vs {hi.commits} here), so memory can grow with"
            " commits, not days."
        )
        print("    (git subprocesses are not counted: they are separate processes)")

        if args.profile:
            profile_runs(repo, since, until, work, args.profile)

        # -- summary
        print("\n== summary ==")
        rows = [
            (
                f"first run <= {PER_COMMIT_MS_TARGET:.0f} ms/commit",
                f"{first.ms_per_commit:.2f} ms/commit ({first.seconds:.2f} s,"
                f" {first.commits} commits)",
                first.ms_per_commit <= PER_COMMIT_MS_TARGET,
            ),
            (
                f"cached >= {CACHE_SPEEDUP_TARGET:.0f}x faster",
                f"{speedup:.1f}x ({first.seconds:.2f} s -> {cached.seconds:.2f} s)",
                speedup >= CACHE_SPEEDUP_TARGET,
            ),
            (
                f"memory {hi.days}d/busiest 1d <= {MEMORY_RATIO_TARGET}x",
                f"{flat_ratio:.2f}x ({heavy.peak_mb:.0f} -> {hi.peak_mb:.0f} MB;"
                f" {hi.days}d/first 1d {mem_ratio:.2f}x)",
                flat_ratio <= MEMORY_RATIO_TARGET,
            ),
            ("cached reports identical", f"{compared} files compared", not diffs),
            ("no run failures", f"{len(problems)} problem(s)", not problems),
        ]
        for target, value, ok in rows:
            print(f"  {_verdict(ok)}  {target:<30} {value}")
        for problem in problems[:20]:
            print(f"        {problem}")
        print("  (timing and memory targets inform; exit 1 only for failures or differences)")
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if problems or diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
