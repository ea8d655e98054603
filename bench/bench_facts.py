"""How close the rules path runs to git's own speed on a month of a real repository.

One invocation, one process, one range of days (committer dates, UTC):

1. **git cold**: ``git log -p --first-parent <parent-of-oldest>..<newest>``
   over the commits of the range, output discarded. It is the first thing
   the benchmark runs, so nothing of that range has been read yet in this
   run. **git warm** is the best of three further runs.
2. **rules path, first run**: :func:`repoherald.pipeline.run` with
   :class:`~repoherald.config.Settings` from
   :func:`repoherald.config.build_settings`, rules only, with a fresh home,
   so nothing is cached. It covers reading commits and diffs, facts, rules,
   SQLite, and the Markdown and JSON reports for every day of the range.
   With ``--repeat N`` the best of N fresh-home runs counts.
3. **rules path, cached re-run**: the same run again with the same home.

With ``--daily K`` it measures instead what a deployment pays every day: a
home is warmed with the range up to the last K days with commits, then each
of those days is run alone, as ``repoherald run`` in a new process runs it
(new store connection, extractor and memory caches), against
``git log -p --first-parent`` of that day's commits. Each day runs twice, in
two copies of the warmed home: with the store's parsed Python blobs
(:mod:`repoherald.store.blobapis`) and with ``--no-cache`` (which reads none
of them; the day's commits are in neither store, so nothing else differs).
The sums over the K days give both ratios, measured in the same run.

Each step is timed twice: by the wall clock, and by CPU time (this process
plus its git children, from ``getrusage``). On a busy machine the wall-clock
ratios swing with the load; the CPU ratios barely move. Targets, as ratios to
git cold: first run ≤ 8×, cached re-run ≤ 2×. ``--profile N`` adds a cProfile
of one more fresh-home run: the top N functions by own time, and the time
spent in parsing Python (whole files and changed statements).

Usage::

    .venv/bin/python -m bench.bench_facts                 # tpu-inference, 30 days
    .venv/bin/python -m bench.bench_facts --repo /work/.mirror/pytorch+ao/repo --repeat 3
    .venv/bin/python -m bench.bench_facts --since 2026-07-23 --until 2026-08-21 --profile 25
    .venv/bin/python -m bench.bench_facts --daily 7        # the last 7 days, each alone

To time another version of the package with this script (say, main before
a change), put its checkout first on the path:
``PYTHONPATH=/path/to/checkout .venv/bin/python bench/bench_facts.py``.

Exit status is 1 if a pipeline run reported failures, else 0 (a missed
target is printed, not an error).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path

from repoherald import pipeline
from repoherald.config import build_settings

DEFAULT_REPO = Path("/work/.mirror/vllm-project+tpu-inference/repo")
FIRST_RUN_TARGET = 8.0
CACHED_TARGET = 2.0
PARSERS = ("parse", "derive", "public_api")
"""Functions whose cumulative time is "parsing Python" (new and old package versions)."""


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def cpu_seconds() -> float:
    """User + system CPU of this process and of its children that have been waited for."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(action: Callable[[], object]) -> Timing:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    action()
    return Timing(time.perf_counter() - wall, cpu_seconds() - cpu)


def git(repo: Path, *args: str) -> str:
    """Stdout of a git command in ``repo`` (a git directory)."""
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, check=True, text=True
    ).stdout


def window_commits(repo: Path, since: date, until: date) -> list[str]:
    """First-parent commits whose committer date (UTC) falls in [since, until], newest first."""
    out = []
    for line in git(repo, "rev-list", "--first-parent", "--timestamp", "HEAD").splitlines():
        ts, sha = line.split()
        day = datetime.fromtimestamp(int(ts), tz=UTC).date()
        if since <= day <= until:
            out.append(sha)
    return out


def default_range(repo: Path, days: int) -> tuple[date, date]:
    """The ``days`` days ending with the last whole UTC day before the branch tip's day."""
    tip = int(git(repo, "log", "-1", "--format=%ct", "HEAD").strip())
    until = datetime.fromtimestamp(tip, tz=UTC).date() - timedelta(days=1)
    return until - timedelta(days=days - 1), until


def git_log(repo: Path, spec: str) -> None:
    """The yardstick: every patch of the range along the first-parent chain, discarded."""
    subprocess.run(
        ["git", f"--git-dir={repo}", "log", "-p", "--first-parent", spec],
        stdout=subprocess.DEVNULL,
        check=True,
    )


def run_pipeline(
    repo: Path, since: date, until: date, home: Path, *, use_cache: bool = True
) -> tuple[int, int]:
    """One pipeline run; returns (commits reported, commits analysed rather than cached)."""
    settings = build_settings(
        repos=(str(repo),),
        since=since.isoformat(),
        until=until.isoformat(),
        tz="UTC",
        lang="en",
        out=str(home / "out"),
        home=str(home),
        no_llm=True,
        cwd=home,
    )
    result = pipeline.run(settings, use_cache=use_cache)
    if result.failures:
        print("pipeline failures:", *result.failures[:5], sep="\n  ", file=sys.stderr)
        raise SystemExit(1)
    return result.commits, result.analysed


def profile_first_run(repo: Path, since: date, until: date, top: int) -> None:
    """cProfile of a fresh-home run: top functions by own time, and time spent parsing."""
    with tempfile.TemporaryDirectory(prefix="bench-facts-prof-") as tmp:
        prof = cProfile.Profile()
        prof.enable()
        run_pipeline(repo, since, until, Path(tmp))
        prof.disable()
    stats = pstats.Stats(prof)
    raw = stats.stats  # type: ignore[attr-defined]
    total = stats.total_tt  # type: ignore[attr-defined]
    parsing = sum(v[3] for k, v in raw.items() if k[2] in PARSERS and "analysis" in k[0])
    print(f"\nprofile: {total:.2f} s in all, {parsing:.2f} s parsing Python ({', '.join(PARSERS)})")
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="a (bare) git directory")
    parser.add_argument("--since", type=date.fromisoformat)
    parser.add_argument("--until", type=date.fromisoformat, help="inclusive")
    parser.add_argument("--days", type=int, default=30, help="range length without --since")
    parser.add_argument("--repeat", type=int, default=1, help="fresh-home first runs; best counts")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument(
        "--daily", type=int, default=0, metavar="K", help="time the last K days, each alone"
    )
    args = parser.parse_args(argv)
    since, until = default_range(args.repo, args.days)
    since, until = args.since or since, args.until or until
    shas = window_commits(args.repo, since, until)
    if not shas:
        raise SystemExit(f"no first-parent commits in {args.repo} from {since} to {until}")
    import repoherald

    print(f"{args.repo}: {since} .. {until} (UTC), {len(shas)} first-parent commits")
    print(f"package: {Path(repoherald.__file__).parent}")
    if args.daily:
        return daily(args.repo, since, until, args.daily)
    spec = f"{git(args.repo, 'rev-parse', f'{shas[-1]}^').strip()}..{shas[0]}"
    git_n = len(git(args.repo, "rev-list", "--first-parent", spec).split())
    cold = timed(lambda: git_log(args.repo, spec))
    warm = min((timed(lambda: git_log(args.repo, spec)) for _ in range(3)), key=lambda t: t.wall)
    firsts: list[Timing] = []
    counts: list[tuple[int, int]] = []
    with tempfile.TemporaryDirectory(prefix="bench-facts-") as tmp:
        for i in range(args.repeat):
            home = Path(tmp) / f"home{i}"
            firsts.append(
                timed(lambda h=home: counts.append(run_pipeline(args.repo, since, until, h)))
            )  # type: ignore[misc]
        cached = timed(lambda: counts.append(run_pipeline(args.repo, since, until, home)))
    first = min(firsts, key=lambda t: t.wall)
    commits, analysed = counts[0]
    report(git_n, commits, analysed, counts[-1][1], cold, warm, first, cached)
    if args.profile:
        profile_first_run(args.repo, since, until, args.profile)
    return 0


def daily(repo: Path, since: date, until: date, k: int) -> int:
    """Warm a home with the range before its last ``k`` days, then time each of those alone."""
    by_day: dict[date, list[str]] = {}
    for line in git(repo, "rev-list", "--first-parent", "--timestamp", "HEAD").splitlines():
        ts, sha = line.split()
        day = datetime.fromtimestamp(int(ts), tz=UTC).date()
        if since <= day <= until:
            by_day.setdefault(day, []).append(sha)
    days = sorted(by_day)[-k:]
    if len(days) < k or days[0] <= since:
        raise SystemExit(f"fewer than {k} days with commits after {since}: widen the range")
    warm_until = days[0] - timedelta(days=1)
    print(f"warming with {since} .. {warm_until}; timing {days[0]} .. {days[-1]} one day at a time")
    sums = {name: Timing(0.0, 0.0) for name in ("git", "kept", "no-cache")}
    commits = 0
    with tempfile.TemporaryDirectory(prefix="bench-facts-daily-") as tmp:
        homes = {"kept": Path(tmp) / "kept", "no-cache": Path(tmp) / "no-cache"}
        run_pipeline(repo, since, warm_until, homes["kept"])
        shutil.copytree(homes["kept"], homes["no-cache"])
        print(f"{'day':<12}{'commits':>8}{'git ms':>10}{'kept ms':>10}{'no-cache ms':>13}")
        for i, day in enumerate(days):
            shas = by_day[day]
            spec = f"{git(repo, 'rev-parse', f'{shas[-1]}^').strip()}..{shas[0]}"
            row = {"git": timed(partial(git_log, repo, spec))}
            # Alternate which goes first, so neither always finds the other's disk reads warm.
            for name, home in sorted(homes.items(), reverse=i % 2 == 1):
                one_day = partial(run_pipeline, repo, day, day, home, use_cache=name == "kept")
                row[name] = timed(one_day)
            for name, t in row.items():
                sums[name] = Timing(sums[name].wall + t.wall, sums[name].cpu + t.cpu)
            commits += len(shas)
            print(
                f"{day.isoformat():<12}{len(shas):>8}{row['git'].wall * 1000:10.0f}"
                f"{row['kept'].wall * 1000:10.0f}{row['no-cache'].wall * 1000:13.0f}"
            )
    g = sums["git"]
    print(f"{len(days)} days, {commits} commits; sums: git {g.wall:.2f} s wall, {g.cpu:.2f} s CPU")
    for name, label in (("kept", "with kept parses"), ("no-cache", "without (--no-cache)")):
        t = sums[name]
        print(
            f"ratio daily run {label:<22} / git log -p   wall {t.wall / g.wall:5.1f}x"
            f"   CPU {t.cpu / g.cpu:5.1f}x"
        )
    return 0


def report(
    git_n: int,
    commits: int,
    analysed: int,
    reanalysed: int,
    cold: Timing,
    warm: Timing,
    first: Timing,
    cached: Timing,
) -> None:
    """Print ms per commit, the ratios to git cold, and PASS/FAIL per target."""

    def row(name: str, t: Timing, n: int, note: str = "") -> str:
        return f"{name:<34}{t.wall * 1000 / n:9.2f}{t.cpu * 1000 / n:16.2f}{note}"

    print(f"{'':<34}wall ms/commit   CPU ms/commit")
    print(row("git log -p --first-parent, cold", cold, git_n))
    print(row("git log -p --first-parent, warm", warm, git_n))
    print(row("rules path, first run", first, commits, f"   ({analysed} analysed)"))
    print(row("rules path, cached re-run", cached, commits, f"   ({reanalysed} analysed)"))
    per = {
        name: (t.wall / commits / (cold.wall / git_n), t.cpu / commits / (cold.cpu / git_n))
        for name, t in (("first", first), ("cached", cached))
    }
    print(
        f"ratio first run / git cold   wall {per['first'][0]:5.1f}x   CPU {per['first'][1]:5.1f}x"
        f"   (target ≤ {FIRST_RUN_TARGET:g}x)"
    )
    print(
        f"ratio cached    / git cold   wall {per['cached'][0]:5.1f}x   CPU {per['cached'][1]:5.1f}x"
        f"   (target ≤ {CACHED_TARGET:g}x)"
    )
    for name, target in (("first", FIRST_RUN_TARGET), ("cached", CACHED_TARGET)):
        wall, cpu = per[name]
        verdict = "PASS" if wall <= target and cpu <= target else "FAIL"
        print(f"  {verdict}  {name} ≤ {target:g}x git cold (wall and CPU)")


if __name__ == "__main__":
    raise SystemExit(main())
