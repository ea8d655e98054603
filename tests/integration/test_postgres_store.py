"""The PostgreSQL store in use: chosen by ``[store] url_env``, shared by processes, and its faults.

Every fault (unreachable server, wrong password, a newer schema, a connection
lost mid-run) is one line, exit status 1, nothing half-written, and the
URL's password nowhere: not on stdout, stderr, the log or the report.
"""

from __future__ import annotations

import multiprocessing
from datetime import UTC, date, datetime
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from repoherald.config import build_settings
from repoherald.errors import StoreError
from repoherald.pipeline import run
from repoherald.pipeline.events import Event
from repoherald.store.claims import Decision
from repoherald.store.opener import open_store
from repoherald.store.postgres import PostgresStore
from tests.gitfixture import GitFixture, run_repoherald
from tests.pgcluster import PgCluster
from tests.storefixture import StoreAt

DAY = "2025-06-10"
URL_ENV = "HERALD_TEST_DATABASE_URL"
"""Not a REPOHERALD_* name: ``run_repoherald`` keeps the caller's other variables."""


def make_repo(path: Path) -> Path:
    fx = GitFixture.init(path)
    fx.write("README.md", "# proj\n")
    fx.commit("Initial commit", when=datetime(2025, 6, 9, 9, tzinfo=UTC))
    fx.write("src/app.py", "def app():\n    pass\n")
    fx.commit("feat: app (#7)", when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    fx.write("src/app.py", "def app():\n    return 1\n")
    fx.commit("fix: app returns one", when=datetime(2025, 6, 10, 10, tzinfo=UTC))
    return path


def configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> Path:
    """A config naming ``URL_ENV`` as the store's variable, and the variable set to ``url``."""
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text(f'[store]\nurl_env = "{URL_ENV}"\n', encoding="utf-8")
    monkeypatch.setenv(URL_ENV, url)
    return cfg


def report_cli(tmp_path: Path, repo: Path) -> tuple[int, str, str]:
    done = run_repoherald(
        "report", "--repo", str(repo), "--date", DAY, "--tz", "UTC", "--lang", "en",
        "--out", str(tmp_path / "out"), "--home", str(tmp_path / "home"),
        "--config", str(tmp_path / "repoherald.toml"),
        cwd=tmp_path,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def written(tmp_path: Path) -> list[Path]:
    out = tmp_path / "out"
    return sorted(p for p in out.rglob("*") if p.is_file()) if out.exists() else []


def test_a_report_uses_the_database_the_url_env_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_cluster: PgCluster, pg_database: str
) -> None:
    url = pg_cluster.url(pg_database)
    configure(tmp_path, monkeypatch, url)
    code, out, err = report_cli(tmp_path, make_repo(tmp_path / "proj"))
    assert code == 0, err
    assert not (tmp_path / "home" / "repoherald.db").exists(), "no SQLite file beside it"
    at = StoreAt("postgres", tmp_path, url)
    assert at.sql("SELECT repo, day FROM reports") == [("proj", DAY)]
    assert at.sql("SELECT count(*) FROM commits") == [(2,)]
    assert pg_cluster.password not in out + err
    code, _, err = report_cli(tmp_path, tmp_path / "proj")
    assert code == 0, err
    assert at.sql("SELECT count(*) FROM analyses") == [(2,)], "the re-run read the cache"


def test_without_the_variable_the_store_is_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(tmp_path, monkeypatch, "")
    monkeypatch.delenv(URL_ENV)
    code, _, err = report_cli(tmp_path, make_repo(tmp_path / "proj"))
    assert code == 0, err
    assert (tmp_path / "home" / "repoherald.db").is_file()


def test_a_variable_that_holds_no_postgresql_url_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(tmp_path, monkeypatch, "mysql://admin:hunter2-secret@db/x")
    code, out, err = report_cli(tmp_path, make_repo(tmp_path / "proj"))
    assert code == 2
    assert err.strip().count("\n") == 0 and f"the variable {URL_ENV}" in err
    assert "hunter2-secret" not in out + err


def _assert_one_line_without(err: str, out: str, secret: str, says: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("repoherald: error: cannot connect to the PostgreSQL store")
    assert says in lines[0]
    assert "Traceback" not in err
    assert secret not in out + err


def test_a_wrong_password_is_one_line_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_cluster: PgCluster, pg_database: str
) -> None:
    wrong = "not-the-password-9f8e7d"
    configure(tmp_path, monkeypatch, pg_cluster.url(pg_database, password=wrong))
    code, out, err = report_cli(tmp_path, make_repo(tmp_path / "proj"))
    assert code == 1
    _assert_one_line_without(err, out, wrong, "password authentication failed")
    assert "check the password" in err
    assert written(tmp_path) == [], "no report without its store"


def test_an_unreachable_server_is_one_line_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    secret = "unreachable-secret-4b3a"
    configure(tmp_path, monkeypatch, f"postgresql://herald:{secret}@127.0.0.1:{port}/herald")
    code, out, err = report_cli(tmp_path, make_repo(tmp_path / "proj"))
    assert code == 1
    _assert_one_line_without(err, out, secret, "check that the server is running")
    assert f"127.0.0.1:{port}/herald" in err, "says which server"
    assert written(tmp_path) == []


def test_a_schema_from_a_newer_version_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_cluster: PgCluster, pg_database: str
) -> None:
    url = pg_cluster.url(pg_database)
    PostgresStore.open(url).close()
    StoreAt("postgres", tmp_path, url).sql(
        "INSERT INTO schema_migrations VALUES (999, 'future', 'x')"
    )
    configure(tmp_path, monkeypatch, url)
    code, out, err = report_cli(tmp_path, make_repo(tmp_path / "proj"))
    assert code == 1
    assert err.strip().count("\n") == 0, err
    assert "written by a newer repoherald (schema 999): upgrade repoherald" in err
    assert pg_cluster.password not in out + err
    assert written(tmp_path) == []


def test_a_connection_lost_mid_run_fails_in_one_line_and_writes_nothing_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_cluster: PgCluster, pg_database: str
) -> None:
    """The server ends the run's connection after the rules ran, before their results are saved."""
    url = pg_cluster.url(pg_database)
    configure(tmp_path, monkeypatch, url)
    repo = make_repo(tmp_path / "proj")
    settings = build_settings(
        repos=(str(repo),), day=DAY, tz="UTC", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path, no_llm=True,
        config=str(tmp_path / "repoherald.toml"),
    )  # fmt: skip
    terminated: list[int] = []

    def cut(event: Event) -> None:
        if event.kind == "end" and event.stage == "rules" and not terminated:
            terminated.append(pg_cluster.terminate(pg_database))

    with pytest.raises(StoreError) as caught:
        run(settings, events=cut)
    assert terminated and terminated[0] >= 1
    message = str(caught.value)
    assert message.startswith("lost the connection to the PostgreSQL store") and "\n" not in message
    assert "re-run" in message and pg_cluster.password not in message
    assert written(tmp_path) == [], "no report of a day whose analyses were not kept"
    at = StoreAt("postgres", tmp_path, url)
    assert at.sql("SELECT count(*) FROM commits") == [(0,)], "the save was rolled back whole"
    assert at.sql("SELECT count(*) FROM reports") == [(0,)]
    result = run(settings)
    assert result.ok and len(result.written) == 2, "the re-run reports the day"


def _claimer(url: str, barrier: Barrier, results: Queue[str]) -> None:
    with PostgresStore.open(url) as store:
        barrier.wait()
        verdict = store.claim_delivery(
            "hook", "alpha", date(2026, 8, 20), "c0ffee", resend_changed=False, send_uncertain=False
        )
        results.put(verdict.decision.value)
        barrier.wait()  # hold the claim until every process has decided


def test_processes_racing_for_one_delivery_claim_it_once(store_at: StoreAt) -> None:
    """Several workers on one store decide at the same moment: exactly one sends."""
    if store_at.backend == "sqlite":
        store_at.open().close()
    workers = 6
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers)
    results: Queue[str] = ctx.Queue()
    target = _claimer if store_at.url is not None else _sqlite_claimer
    where = store_at.url if store_at.url is not None else str(store_at.path)
    procs = [ctx.Process(target=target, args=(where, barrier, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    decisions = sorted(results.get(timeout=10) for _ in range(workers))
    assert decisions.count(Decision.SEND.value) == 1, decisions
    assert decisions.count(Decision.BUSY.value) == workers - 1, decisions


def _sqlite_claimer(path: str, barrier: Barrier, results: Queue[str]) -> None:
    with open_store(Path(path)) as store:
        barrier.wait()
        verdict = store.claim_delivery(
            "hook", "alpha", date(2026, 8, 20), "c0ffee", resend_changed=False, send_uncertain=False
        )
        results.put(verdict.decision.value)
        barrier.wait()


def test_a_schema_of_its_own_beside_another_tools_migrations(
    tmp_path: Path, pg_cluster: PgCluster, pg_database: str
) -> None:
    """The README's advice: the URL's search_path keeps repoherald's tables apart."""
    from tests.storefixture import EXTRACTOR, samples

    public = StoreAt("postgres", tmp_path, pg_cluster.url(pg_database))
    public.sql("CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY)")
    public.sql("INSERT INTO schema_migrations VALUES (20240101120000)")  # another tool's
    public.sql("CREATE SCHEMA herald")
    url = pg_cluster.url(pg_database) + "&options=-csearch_path%3Dherald"
    with PostgresStore.open(url) as store:
        assert store.save("org/repo", samples(0, 3), EXTRACTOR) == 3
    assert public.sql("SELECT count(*) FROM herald.commits") == [(3,)]
    assert public.sql("SELECT version FROM public.schema_migrations") == [(20240101120000,)]
