"""The store's contract: migrations, checked cache rows, the run log, the ledger, files.

Tests taking ``store_at`` run on both backends (SQLite and PostgreSQL); the
others are about SQLite's file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from repoherald import redact
from repoherald.errors import StoreDamagedError
from repoherald.store.db import SqliteStore as Store
from repoherald.store.files import ensure_private_dir
from repoherald.store.ledger import LedgerStatus, content_hash
from repoherald.store.migrations import MIGRATIONS
from tests.storefixture import ANALYSER, EXTRACTOR, StoreAt, garble_table, sample, samples

# The migrations that shipped as SQL strings, as they were in git (99bbf6a).
V1_SQL = """
CREATE TABLE commits (sha TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE repo_commits (repo TEXT NOT NULL, sha TEXT NOT NULL, PRIMARY KEY (repo, sha));
CREATE TABLE file_changes (sha TEXT NOT NULL, idx INTEGER NOT NULL, path TEXT NOT NULL,
    old_path TEXT, status TEXT NOT NULL, added INTEGER NOT NULL, deleted INTEGER NOT NULL,
    binary INTEGER NOT NULL, PRIMARY KEY (sha, idx));
CREATE TABLE facts (sha TEXT NOT NULL, extractor TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (sha, extractor));
CREATE TABLE analyses (sha TEXT NOT NULL, analyser TEXT NOT NULL, data TEXT NOT NULL,
    created_at TEXT NOT NULL, PRIMARY KEY (sha, analyser));
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL,
    finished_at TEXT, command TEXT NOT NULL, status TEXT NOT NULL,
    commits INTEGER NOT NULL DEFAULT 0, analysed INTEGER NOT NULL DEFAULT 0,
    failures TEXT NOT NULL DEFAULT '[]');
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
    applied_at TEXT NOT NULL);
INSERT INTO schema_migrations VALUES (1, 'initial', '2026-01-01T00:00:00Z');
"""
V2_SQL = """
CREATE TABLE reports (repo TEXT NOT NULL, day TEXT NOT NULL, lang TEXT NOT NULL,
    commits INTEGER NOT NULL, high INTEGER NOT NULL, path TEXT NOT NULL,
    content_hash TEXT NOT NULL, generated_at TEXT NOT NULL, PRIMARY KEY (repo, day, lang));
INSERT INTO schema_migrations VALUES (2, 'reports', '2026-01-02T00:00:00Z');
INSERT INTO reports VALUES ('org/repo', '2026-01-05', 'zh', 3, 1, 'r.md', 'h', 'x');
"""

SHAS = [sample(i)[0].sha for i in range(10)]


def saved_store(at: StoreAt, n: int = 10) -> StoreAt:
    with at.open() as store:
        store.save("org/repo", samples(0, n), EXTRACTOR)
    return at


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def dead_pid() -> int:
    """The pid of a process that has certainly exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# -- migrations -------------------------------------------------------------------


def test_migrations_are_numbered_functions_in_order() -> None:
    assert [m.number for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    for m in MIGRATIONS:
        assert m.apply.__name__ == f"m{m.number:04d}_{m.name}"
    assert MIGRATIONS[0].name == "initial", "the name today's databases recorded"
    assert "publish_ledger" in [m.name for m in MIGRATIONS]


@pytest.mark.parametrize("scripts", [(V1_SQL,), (V1_SQL, V2_SQL)], ids=["v1", "v2"])
def test_database_created_by_the_sql_string_migrations_upgrades(
    tmp_path: Path, scripts: tuple[str, ...]
) -> None:
    db = tmp_path / "old.db"
    conn = raw(db)
    for script in scripts:
        conn.executescript(script)
    commit, facts, analysis = sample(1)
    from repoherald.store.codec import to_jsonable

    def dump(obj: object) -> str:
        return json.dumps(to_jsonable(obj), ensure_ascii=False, separators=(",", ":"))

    conn.execute("INSERT INTO commits VALUES (?, ?)", (commit.sha, dump(commit)))
    conn.execute("INSERT INTO facts VALUES (?, ?, ?)", (commit.sha, EXTRACTOR, dump(facts)))
    conn.execute(
        "INSERT INTO analyses VALUES (?, ?, ?, 'x')", (commit.sha, ANALYSER, dump(analysis))
    )
    conn.execute(
        "INSERT INTO runs (started_at, command, status) VALUES ('2000-01-01T00:00:00Z', 'r',"
        " 'running')"
    )
    conn.close()
    with Store.open(db) as store:
        versions = [r[0] for r in store.conn.execute("SELECT version FROM schema_migrations")]
        assert versions == [m.number for m in MIGRATIONS]
        assert store.load([commit.sha], EXTRACTOR, ANALYSER) == {
            commit.sha: (commit, facts, analysis)
        }, "rows cached before the upgrade are still hits"
        assert store.runs()[0]["status"] == "killed", "a legacy run left running is closed"
        assert store.migrate() == []
        expected = date(2026, 1, 5) if len(scripts) == 2 else None
        assert store.latest_report_day("org/repo") == expected


# -- checked cache rows -------------------------------------------------------------


def test_round_trip_and_use_cache_false(store_at: StoreAt) -> None:
    db = saved_store(store_at)
    with db.open() as store:
        assert store.load(SHAS, EXTRACTOR, ANALYSER) == {s: sample(i) for i, s in enumerate(SHAS)}
        expected = {s: sample(i)[2] for i, s in enumerate(SHAS[:2])}
        assert store.load_analyses(SHAS[:2], ANALYSER) == expected
    with db.open(use_cache=False) as store:
        assert store.load(SHAS, EXTRACTOR, ANALYSER) == {}
        assert store.load_analyses(SHAS, ANALYSER) == {}
        store.save("org/repo", [sample(99)], EXTRACTOR)
    with db.open() as store:
        assert sample(99)[0].sha in store.load([sample(99)[0].sha], EXTRACTOR, ANALYSER)


@pytest.mark.parametrize(
    ("table", "edit"),
    [
        ("analyses", "replace(data, 'Fixes crash number 3', 'Fixes crash number 8')"),
        ("analyses", "replace(data, '\"high\"', '\"lowx\"')"),
        ("facts", "replace(data, '\"added\":3', '\"added\":9')"),
        ("commits", "replace(data, 'number 3 in', 'number 9 in')"),
    ],
)
def test_same_length_edit_is_a_miss(
    store_at: StoreAt, table: str, edit: str, caplog: pytest.LogCaptureFixture
) -> None:
    db = saved_store(store_at)
    select = f"SELECT data FROM {table} WHERE sha = ?"
    ((before,),) = db.sql(select, (SHAS[3],))
    db.sql(f"UPDATE {table} SET data = {edit} WHERE sha = ?", (SHAS[3],))
    ((after,),) = db.sql(select, (SHAS[3],))
    assert after != before and len(after) == len(before), "an edit that keeps the length"
    with db.open() as store:
        got = store.load(SHAS, EXTRACTOR, ANALYSER)
        assert SHAS[3] not in got and len(got) == 9
        if table == "analyses":
            assert SHAS[3] not in store.load_analyses(SHAS, ANALYSER)
        store.save("org/repo", [sample(3)], EXTRACTOR)
        assert store.load([SHAS[3]], EXTRACTOR, ANALYSER)[SHAS[3]] == sample(3), "rewritten"
    assert "1 unreadable cached row" in caplog.text


def test_unknown_enum_with_a_valid_checksum_is_a_miss(store_at: StoreAt) -> None:
    """What a newer version might write: a change type this version does not know."""
    from repoherald.store.rows import encode

    db = saved_store(store_at)
    ((data,),) = db.sql("SELECT data FROM analyses WHERE sha = ?", (SHAS[4],))
    payload = {**json.loads(data), "change_type": "security-fix"}
    text, digest = encode([SHAS[4], ANALYSER], payload)
    db.sql("UPDATE analyses SET data = ?, checksum = ? WHERE sha = ?", (text, digest, SHAS[4]))
    with db.open() as store:
        assert SHAS[4] not in store.load(SHAS, EXTRACTOR, ANALYSER)
        assert SHAS[4] not in store.load_analyses(SHAS, ANALYSER)
        assert store.problem is None, "one bad row is not a damaged store"


def test_undecodable_row_is_a_miss(tmp_path: Path) -> None:
    db = saved_store(StoreAt("sqlite", tmp_path / "s.db")).path
    conn = raw(db)
    conn.execute("UPDATE analyses SET data = CAST(X'7b22ff22' AS TEXT) WHERE sha = ?", (SHAS[5],))
    conn.execute("UPDATE facts SET data = '{not json' WHERE sha = ?", (SHAS[6],))
    conn.close()
    with Store.open(db) as store:
        got = store.load(SHAS, EXTRACTOR, ANALYSER)
        assert set(got) == set(SHAS) - {SHAS[5], SHAS[6]}


def test_in_memory_store(memory_store: Store) -> None:
    memory_store.save("org/repo", samples(0, 3), EXTRACTOR)
    assert len(memory_store.load(SHAS[:3], EXTRACTOR, ANALYSER)) == 3
    run_id = memory_store.start_run("report")
    memory_store.finish_run(run_id, "ok", 3, 3, [])
    assert memory_store.runs()[0]["status"] == "ok"


# -- runs ---------------------------------------------------------------------------


def test_runs_record_owner_and_stale_runs_are_closed(store_at: StoreAt) -> None:
    with store_at.open() as store:
        mine = store.start_run("report")
        row = store.runs()[0]
        assert (row["pid"], row["status"]) == (os.getpid(), "running")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    host = row["host"]

    def insert(pid: int | None, host: str | None) -> int:
        ((run_id,),) = store_at.sql(
            "INSERT INTO runs (started_at, command, status, pid, host)"
            " VALUES (?, 'r', 'running', ?, ?) RETURNING id",
            (now, pid, host),
        )
        return int(run_id)

    dead = insert(dead_pid(), host)
    alive = insert(os.getppid(), host)
    elsewhere = insert(dead_pid(), "another-host")
    fresh_legacy = insert(None, None)
    same_pid = insert(os.getpid(), host)
    with store_at.open() as store:
        status = {r["id"]: r for r in store.runs()}
    assert status[dead]["status"] == "killed" and status[dead]["finished_at"]
    assert "ended without finishing" in status[dead]["failures"]
    assert status[mine]["status"] == "running", "started by this process, still going"
    assert status[same_pid]["status"] == "killed", "this pid, but an earlier process's run"
    assert status[alive]["status"] == "running", "a live process keeps its run"
    assert status[elsewhere]["status"] == "running", "another host's pids are not ours to test"
    assert status[fresh_legacy]["status"] == "running"


def test_run_failures_are_redacted(store_at: StoreAt) -> None:
    token = "s3cr3t-value-for-test"
    redact.register(token)
    try:
        with store_at.open() as store:
            run_id = store.start_run(f"report --repo https://u:{token}@example.com/r.git")
            store.finish_run(run_id, "error", 0, 0, [f"cannot clone: auth {token} rejected"])
            row = store.runs()[0]
    finally:
        redact._forget_all()
    assert token not in json.dumps(row)
    assert "***" in row["failures"] and "***" in row["command"]


# -- publish ledger -----------------------------------------------------------------


def test_ledger_records_attempts(store_at: StoreAt) -> None:
    day = date(2026, 8, 20)
    with store_at.open() as store:
        assert store.ledger_get("issue", "org/repo", day) is None
        first = store.ledger_record(
            "issue", "org/repo", day, status=LedgerStatus.FAILED, content="v1", error="HTTP 502"
        )
        assert (first.status, first.attempts, first.remote_id, first.sent_at) == (
            LedgerStatus.FAILED,
            1,
            None,
            None,
        )
        sent = store.ledger_record(
            "issue", "org/repo", day, status=LedgerStatus.SENT, content="v1", remote_id="42"
        )
        assert (sent.status, sent.attempts, sent.remote_id, sent.last_error) == (
            LedgerStatus.SENT,
            2,
            "42",
            "",
        )
        assert sent.content_hash == content_hash("v1") and sent.sent_at is not None
        assert sent.first_attempt_at == first.first_attempt_at
        again = store.ledger_record(
            "issue", "org/repo", day, status=LedgerStatus.FAILED, content="v2", error="timeout"
        )
        assert again.remote_id == "42" and again.sent_at == sent.sent_at, "kept for an edit"
        assert (again.content, again.last_error, again.attempts) == ("v2", "timeout", 3)
        store.ledger_record("chat", "org/repo", day, status=LedgerStatus.SENT, content="x")
        assert [e.target for e in store.ledger_entries(day=day)] == ["chat", "issue"]
        assert [e.target for e in store.ledger_entries(target="chat")] == ["chat"]


def test_ledger_redacts_content_and_errors(store_at: StoreAt) -> None:
    token = "ledger-secret-token"
    redact.register(token)
    try:
        with store_at.open() as store:
            entry = store.ledger_record(
                "hook",
                "org/repo",
                date(2026, 1, 2),
                status=LedgerStatus.FAILED,
                content=f"body {token}",
                error=f"401: Bearer {token}",
            )
    finally:
        redact._forget_all()
    assert token not in entry.content + entry.last_error
    assert entry.content_hash == content_hash(f"body {token}"), "hash of what was sent"


def test_damaged_store_refuses_ledger_reads(tmp_path: Path) -> None:
    """The ledger is not a cache: guessing "not sent" would post twice."""
    day = date(2026, 1, 1)
    for table in ("analyses", "publish_ledger"):
        db = tmp_path / f"{table}.db"
        with Store.open(db) as store:
            store.ledger_record("issue", "r", day, status=LedgerStatus.SENT, content="x")
            store.save("org/repo", samples(0, 3), EXTRACTOR)
        garble_table(db, table)
        with Store.open(db) as store:
            assert store.load(SHAS[:3], EXTRACTOR, ANALYSER) == (
                {} if table == "analyses" else {s: sample(i) for i, s in enumerate(SHAS[:3])}
            )
            with pytest.raises(StoreDamagedError) as err:
                store.ledger_get("issue", "r", day)
            assert "only a cache" in str(err.value)
            with pytest.raises(StoreDamagedError):
                store.ledger_record("issue", "r", day, status=LedgerStatus.SENT, content="y")


# -- rebuild and files ----------------------------------------------------------------


def test_rebuild_moves_the_store_aside_and_keeps_what_is_not_a_cache(tmp_path: Path) -> None:
    db = saved_store(StoreAt("sqlite", tmp_path / "repoherald.db")).path
    with Store.open(db) as store:
        store.ledger_record("issue", "r", date(2026, 1, 1), status=LedgerStatus.SENT, content="x")
        store.record_report("r", date(2026, 1, 3), "zh", 5, 1, "a.md", "text")
    with Store.open(db, rebuild=True) as store:
        assert store.moved_to is not None and store.moved_to.name.startswith(
            "repoherald.db.broken-"
        )
        assert store.load(SHAS, EXTRACTOR, ANALYSER) == {}, "a fresh cache"
        entry = store.ledger_get("issue", "r", date(2026, 1, 1))
        assert entry is not None and entry.status is LedgerStatus.SENT
        assert store.latest_report_day("r") == date(2026, 1, 3)
        moved = store.moved_to
    with Store.open(moved) as old:
        assert len(old.load(SHAS, EXTRACTOR, ANALYSER)) == 10, "nothing was deleted"


def test_rebuild_of_a_garbage_file(tmp_path: Path) -> None:
    db = tmp_path / "repoherald.db"
    db.write_bytes(b"garbage" * 1000)
    with pytest.raises(StoreDamagedError):
        Store.open(db)
    with Store.open(db, rebuild=True) as store:
        store.save("org/repo", samples(0, 2), EXTRACTOR)
        assert store.moved_to is not None and store.moved_to.read_bytes() == b"garbage" * 1000


def test_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        home = tmp_path / "a" / "home"
        with Store.open(home / "repoherald.db") as store:
            store.save("org/repo", samples(0, 3), EXTRACTOR)
            modes = {
                p.name: stat.S_IMODE(p.stat().st_mode)
                for p in home.iterdir()
                if p.name.startswith("repoherald.db")
            }
        assert set(modes) >= {"repoherald.db", "repoherald.db-wal", "repoherald.db-shm"}
        assert set(modes.values()) == {0o600}, modes
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
        mirrors = ensure_private_dir(home / "mirrors" / "x")
        assert stat.S_IMODE(mirrors.stat().st_mode) == 0o700
    finally:
        os.umask(old)


def test_existing_world_readable_store_is_tightened_and_dirs_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    db = saved_store(StoreAt("sqlite", shared / "repoherald.db")).path
    db.chmod(0o644)
    Store.open(db).close()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755, "a directory we did not create"


# -- what both backends keep beside the cache -------------------------------------------


def test_reports_corrections_parses_and_indexes_round_trip(store_at: StoreAt) -> None:
    from repoherald.models import ChangeType, Correction, Importance

    db = saved_store(store_at, n=3)
    fix = Correction(Importance.LOW, ChangeType.DOCS, "only the README", "")
    with db.open() as store:
        store.record_report("org/repo", date(2026, 1, 3), "zh", 3, 1, "a.md", "text")
        store.record_report("org/repo", date(2026, 1, 4), "en", 2, 0, "b.md", "other")
        store.record_report("org/repo", date(2026, 1, 3), "zh", 4, 2, "a2.md", "text 2")
        assert store.find_reported(SHAS[1]) == [("org/repo", SHAS[1])]
        assert len(store.find_reported(SHAS[1][:9])) == 3, "a prefix of all three"
        assert store.find_reported("0000", "elsewhere") == []
        store.mark("org/repo", SHAS[1], fix)
        store.save_blob_apis([("b" * 40, {"defs": ["f"]}), ("c" * 40, None)], "codec/1")
        store.save_downstream_index("key1", "checkout", {"names": ["x"]})
        store.save_downstream_index("key2", "checkout", {"names": ["y"]})
    with db.open() as store:
        assert store.latest_report_day("org/repo") == date(2026, 1, 4)
        assert sorted(store.reported_days("org/repo")) == [
            (date(2026, 1, 3), "zh", "a2.md", content_hash("text 2")),
            (date(2026, 1, 4), "en", "b.md", content_hash("other")),
        ], "a report written again replaces its row"
        got = store.corrections_of("org/repo", SHAS)
        assert list(got) == [SHAS[1]] and got[SHAS[1]].reason == "only the README"
        [marked] = store.every_correction()
        assert marked.commit == sample(1)[0] and marked.correction.importance is Importance.LOW
        assert store.load_blob_api("b" * 40, "codec/1", dict) == {"defs": ["f"]}
        assert store.load_blob_api("c" * 40, "codec/1", lambda v: ("none", v)) == ("none", None)
        assert store.load_blob_api("b" * 40, "codec/2", dict) is None
        assert store.load_downstream_index("key2") == {"names": ["y"]}
        assert store.load_downstream_index("key1") is None, "replaced by the newer of its scope"


def test_rebuild_empties_the_cache_and_keeps_what_is_not_one(store_at: StoreAt) -> None:
    db = saved_store(store_at)
    day = date(2026, 1, 1)
    with db.open() as store:
        store.ledger_record("issue", "r", day, status=LedgerStatus.SENT, content="x")
        store.record_report("r", date(2026, 1, 3), "zh", 5, 1, "a.md", "text")
        store.etags.put("https://api.example.test/x", '"e"', b"{}", "")
    with db.open(rebuild=True) as store:
        assert store.load(SHAS, EXTRACTOR, ANALYSER) == {}, "a fresh cache"
        assert store.etags.get("https://api.example.test/x") is None
        entry = store.ledger_get("issue", "r", day)
        assert entry is not None and entry.status is LedgerStatus.SENT
        assert store.latest_report_day("r") == date(2026, 1, 3)
        store.save("org/repo", samples(0, 2), EXTRACTOR)
        assert len(store.load(SHAS, EXTRACTOR, ANALYSER)) == 2, "and it fills again"
