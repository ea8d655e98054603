"""Crash, concurrency and damage, on real processes and real files.

Each test does to the store what a user's machine does to it: two cron jobs
starting in the same second on a fresh home, ``kill -9`` in the middle of a
write, another run holding the lock, a disk that loses the end of a file or
garbles a page. None of them may end in a traceback, and none may change a
report without saying so.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.errors import StoreBusyError, StoreDamagedError
from repoherald.pipeline import run
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture, run_repoherald
from tests.storefixture import (
    ANALYSER,
    EXTRACTOR,
    first_run_worker,
    garble_table,
    sample,
    samples,
)

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 20


def child(role: str, db: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.storefixture", role, str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def saved_store(db: Path, n: int = 200) -> Path:
    with Store.open(db) as store:
        store.save("org/repo", samples(0, n), EXTRACTOR)
    return db


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    return text


# -- two first runs at once ---------------------------------------------------------


def test_two_first_runs_on_a_fresh_home(tmp_path: Path) -> None:
    """Before: "database is locked" or "table commits already exists", about half the time."""
    ctx = multiprocessing.get_context("spawn")
    homes = [str(tmp_path / f"home{i}") for i in range(ROUNDS)]
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=first_run_worker, args=(barrier, homes, results)) for _ in range(2)
    ]
    for w in workers:
        w.start()
    outcomes = [results.get(timeout=300) for _ in range(2 * ROUNDS)]
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    assert [o for o in outcomes if o[:2] != ("ok", 20)] == []
    assert all(len(o[2]) <= 1 for o in outcomes), "a wait is announced at most once"
    for home in homes:
        db = Path(home) / "repoherald.db"
        assert integrity(db) == "ok"
        with Store.open(db) as store:
            assert [r["status"] for r in store.runs()] == ["ok", "ok"], store.runs()


# -- kill -9 ---------------------------------------------------------------------------


@pytest.mark.parametrize("after", [1, 3, 6])
def test_kill_9_during_a_write(tmp_path: Path, after: int) -> None:
    db = tmp_path / "home" / "repoherald.db"
    proc = child("fill", db)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line == f"saving {after}\n":
            break  # the child is at (or, the pipe being buffered, past) its next write
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert integrity(db) == "ok"
    conn = sqlite3.connect(db)
    (n,) = conn.execute("SELECT count(*) FROM analyses").fetchone()
    conn.close()
    assert n >= after * 50 and n % 50 == 0, "whole transactions or nothing"
    with Store.open(db) as store:
        shas = [sample(i)[0].sha for i in range(n + 50)]
        got = store.load(shas, EXTRACTOR, ANALYSER)
        assert len(got) == n and all(got[s] == sample(i) for i, s in enumerate(shas[:n]))
        assert store.runs()[0]["status"] == "killed", "the killed run does not stay running"
        store.save("org/repo", samples(0, n + 50), EXTRACTOR)
        assert len(store.load(shas, EXTRACTOR, ANALYSER)) == n + 50
    assert integrity(db) == "ok"


# -- another run holds the lock -----------------------------------------------------------


def test_a_run_that_waits_says_so_once(tmp_path: Path) -> None:
    db = saved_store(tmp_path / "repoherald.db", 1)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    proc = child("save-twice", db)
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]
    assert lines[0].startswith("WAIT "), lines
    holder.execute("COMMIT")
    lines.append(proc.stdout.readline())
    assert lines[1] == "saved\n"
    holder.execute("BEGIN IMMEDIATE")  # make the second save wait too
    time.sleep(1.5)
    holder.execute("COMMIT")
    lines += proc.stdout.readlines()  # not communicate(): it would skip what readline buffered
    assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    assert [ln for ln in lines if ln.startswith("WAIT ")] == lines[:1]
    assert "another repoherald run" in lines[0] and str(db) in lines[0]
    assert lines.count("saved\n") == 2


def test_a_lock_held_too_long_is_busy_not_damaged(tmp_path: Path) -> None:
    db = saved_store(tmp_path / "repoherald.db", 1)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Store.open(db, wait_seconds=0.3) as store, pytest.raises(StoreBusyError) as err:
            store.save("org/repo", samples(0, 1), EXTRACTOR)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = one_line(err.value)
    assert "busy" in message and "another repoherald run" in message
    assert "move" not in message and "aside" not in message and "rebuild" not in message


def test_a_lock_on_a_fresh_file_is_busy_not_damaged(tmp_path: Path) -> None:
    """The WAL switch cannot wait on SQLite's busy handler; it must still give up cleanly."""
    db = tmp_path / "repoherald.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE t (x)")
    try:
        with pytest.raises(StoreBusyError) as err:
            Store.open(db, wait_seconds=0.3)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "move" not in one_line(err.value)


# -- damaged files ---------------------------------------------------------------------


def test_truncated_store_is_one_line(tmp_path: Path) -> None:
    db = saved_store(tmp_path / "repoherald.db")
    size = db.stat().st_size
    with db.open("r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(StoreDamagedError) as err:
        Store.open(db)
    message = one_line(err.value)
    assert "truncated" in message and f"move {db} aside" in message and "rebuild it" in message


@pytest.mark.parametrize("content", [b"not a database " * 500, b"\x00" * 50, b"SQLite"])
def test_garbage_store_is_one_line(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "repoherald.db"
    db.write_bytes(content)
    with pytest.raises(StoreDamagedError) as err:
        Store.open(db)
    assert "only a cache" in one_line(err.value)


def test_bad_pages_found_after_opening_set_the_store_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = saved_store(tmp_path / "repoherald.db")
    garble_table(db)
    with Store.open(db) as store:
        assert store.load([sample(i)[0].sha for i in range(200)], EXTRACTOR, ANALYSER) == {}
        assert store.problem is not None and "move" in store.problem
        assert store.save("org/repo", samples(0, 5), EXTRACTOR) == 0, "not written, not fatal"
        store.finish_run(store.start_run("report"), "ok", 0, 0, [])
    assert caplog.text.count("this run continues without it") == 1


def write_day(tmp_path: Path) -> GitFixture:
    repo = GitFixture.init(tmp_path / "repo")
    for i in range(8):
        repo.write(f"src/m{i}.py", f"def f{i}():\n    return {i}\n")
        when = datetime(2026, 3, 2, 1 + i, tzinfo=UTC)
        repo.commit(f"[Bugfix] Fix crash {i} in module m{i} (#{100 + i})", when=when)
    return repo


def report_of(tmp_path: Path, home: Path, **kwargs: bool) -> str:
    settings = build_settings(
        repos=(str(tmp_path / "repo"),),
        day="2026-03-02",
        tz="UTC",
        lang="en",
        home=str(home),
        out=str(tmp_path / "out"),
        cwd=tmp_path,
    )
    result = run(settings, **kwargs)
    md = next(p for p in result.written if p.suffix == ".md").read_text(encoding="utf-8")
    return "\n".join(ln for ln in md.splitlines() if "generated" not in ln.lower())


def test_a_damaged_store_still_gives_the_report(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_day(tmp_path)
    home = tmp_path / "home"
    clean = report_of(tmp_path, home)
    garble_table(home / "repoherald.db")
    assert report_of(tmp_path, home) == clean
    assert caplog.text.count("this run continues without it") == 1
    assert report_of(tmp_path, home, rebuild=True) == clean
    assert integrity(home / "repoherald.db") == "ok"


def test_an_edited_cached_row_does_not_change_the_report(tmp_path: Path) -> None:
    """Edits that keep the length and the JSON valid: only the checksum can tell."""
    write_day(tmp_path)
    home = tmp_path / "home"
    clean = report_of(tmp_path, home)
    conn = sqlite3.connect(home / "repoherald.db", isolation_level=None)
    edits = [
        ("analyses", "'\"high\"'", "'\"low\" '", "m1"),
        ("commits", "'crash 3'", "'crash 8'", "crash 3"),
        ("facts", "'\"src/m5.py\"'", "'\"src/m9.py\"'", "m5"),
    ]
    for table, old, new, where in edits:
        changed = conn.execute(
            f"UPDATE {table} SET data = replace(data, {old}, {new}) WHERE data LIKE ?",
            (f"%{where}%",),
        ).rowcount
        assert changed == 1, table
    conn.close()
    assert report_of(tmp_path, home) == clean
    assert report_of(tmp_path, home, use_cache=False) == clean


def test_cli_on_a_truncated_store_prints_one_line(tmp_path: Path) -> None:
    write_day(tmp_path)
    home = tmp_path / "home"
    garble = saved_store(home / "repoherald.db")
    with garble.open("r+b") as f:
        f.truncate(garble.stat().st_size // 2)
    proc = run_repoherald(
        "report",
        "--repo",
        str(tmp_path / "repo"),
        "--date",
        "2026-03-02",
        "--tz",
        "UTC",
        "--home",
        str(home),
        "--out",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "only a cache" in lines[0] and "aside" in lines[0], lines
