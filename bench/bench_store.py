"""Benchmark the store backends: a rules-only ``run`` with SQLite, then with PostgreSQL.

N local repositories (built by :class:`tests.gitfixture.GitFixture`, each
with its own files and ``--commits`` commits on one day) are reported by
:func:`repoherald.pipeline.service.run_all`, the function behind
``repoherald run``: first on an empty store (everything analysed and
written), then again (everything read from the cache). The PostgreSQL store
is a throwaway cluster (:mod:`tests.pgcluster`) on a Unix socket, with
``fsync`` off, so the figure is the store's protocol cost, not the disk's.
Each measurement is the median of ``--repeat`` runs, each on a fresh store
and a fresh archive, the backends taking turns. It prints each wall time and the ratio
PostgreSQL / SQLite (target: at most 1.5).

Usage::

    .venv/bin/python -m bench.bench_store [--repos 20] [--commits 5] [--repeat 3]

Exit status: 1 if a run failed, else 0 (a ratio over the target is reported, not an error).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from repoherald.config import build_settings
from repoherald.pipeline.service import run_all
from tests.gitfixture import GitFixture
from tests.pgcluster import INSTALL_HINT, PgCluster, find_bindir, start_cluster

DAY = "2026-03-10"
URL_ENV = "REPOHERALD_BENCH_DATABASE_URL"
TARGET = 1.5


def build_repos(root: Path, repos: int, commits: int) -> list[Path]:
    """``repos`` repositories, each with ``commits`` distinct commits on :data:`DAY`."""
    paths = []
    for r in range(repos):
        fx = GitFixture.init(root / f"repo{r:03d}")
        fx.write("README.md", f"# repo {r}\n")
        fx.commit("Initial import", when=datetime(2026, 3, 9, 8, tzinfo=UTC))
        for c in range(commits):
            fx.write(f"src/mod{c}.py", f"def f{c}(x):\n    return x + {r * 100 + c}\n")
            fx.write(f"tests/test_mod{c}.py", f"def test_f{c}():\n    assert True\n")
            title = ("fix", "feat", "docs", "refactor", "perf")[c % 5]
            fx.commit(f"{title}: change {c} of repo {r} (#{r * 10 + c})", when=_at(c))
        paths.append(fx.path)
    return paths


def _at(c: int) -> datetime:
    return datetime(2026, 3, 10, 1 + c % 20, c % 60, tzinfo=UTC)


def write_config(root: Path, repos: list[Path]) -> Path:
    cfg = root / "repoherald.toml"
    lines = [f'[store]\nurl_env = "{URL_ENV}"\n']
    lines += [f'[[repos]]\nsource = "{p}"\n' for p in repos]
    cfg.write_text("\n".join(lines), encoding="utf-8")
    return cfg


def one_run(cfg: Path, home: Path, out: Path) -> float:
    settings = build_settings(
        config=str(cfg), day=DAY, tz="UTC", lang="en", home=str(home), out=str(out),
        no_llm=True, cwd=cfg.parent,
    )  # fmt: skip
    started = time.perf_counter()
    result = run_all(settings, catch_up=False)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise SystemExit(f"bench_store: a run failed: {result.failures[:3]}")
    return elapsed


def measure_pair(cfg: Path, scratch: Path, url: str | None) -> tuple[float, float]:
    """Wall time of a cold and of a cached run on one fresh store (SQLite when ``url`` is None)."""
    if url is None:
        os.environ.pop(URL_ENV, None)
    else:
        os.environ[URL_ENV] = url
    home, out = scratch / "home", scratch / "out"
    try:
        return one_run(cfg, home, out), one_run(cfg, home, out)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


def medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    bindir = find_bindir()
    if bindir is None:
        print(f"bench_store: {INSTALL_HINT}", file=sys.stderr)
        return 1
    root = Path(tempfile.mkdtemp(prefix="repoherald-bench-store-"))
    cluster: PgCluster | None = None
    try:
        cfg = write_config(root, build_repos(root / "repos", args.repos, args.commits))
        cluster = start_cluster(bindir)
        pg = cluster

        def fresh_database() -> str:
            return pg.url(pg.create_database("bench"))

        # Alternated, so a change in the machine's load weighs on both backends alike.
        pairs: dict[str, list[tuple[float, float]]] = {"sqlite": [], "postgres": []}
        for _ in range(args.repeat):
            pairs["sqlite"].append(measure_pair(cfg, root, None))
            pairs["postgres"].append(measure_pair(cfg, root, fresh_database()))
        sqlite, postgres = medians(pairs["sqlite"]), medians(pairs["postgres"])
    finally:
        if cluster is not None:
            cluster.stop()
            shutil.rmtree(cluster.root, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"rules-only run, {args.repos} repositories x {args.commits} commits,"
        f" median of {args.repeat}:"
    )
    for label, index in (("cold (empty store)", 0), ("cached re-run", 1)):
        ratio = postgres[index] / sqlite[index]
        verdict = "ok" if ratio <= TARGET else f"over the {TARGET}x target"
        print(
            f"  {label:<20} SQLite {sqlite[index]:6.2f} s   PostgreSQL {postgres[index]:6.2f} s"
            f"   PostgreSQL/SQLite {ratio:4.2f}x ({verdict})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
