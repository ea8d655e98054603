"""Exactly-once delivery: real processes on one home, killed mid-delivery, racing each other.

Every test runs ``python -m repoherald`` (two at once, or one killed with
SIGKILL at a chosen step of a delivery) against the loopback receivers of
:mod:`tests.webhook_server` and :mod:`tests.github_server`, on a real store.
The steps of one delivery are: claim taken (the request is stopped before
the receiver reads it), request sent (received, never answered), answer
received (the store's write lock is held by the test, so the ledger cannot
be updated), ledger updated (the next day's request is stopped).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from repoherald.config import NamedTarget
from repoherald.publish import registry
from repoherald.publish.base import Publication
from repoherald.publish.deliver import deliver_one
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture, run_repoherald, start_repoherald
from tests.github_server import FakeGitHub
from tests.pgcluster import PgCluster
from tests.smtp_server import SMTPServer, make_certificate, smtp_server
from tests.storefixture import StoreAt
from tests.webhook_server import WebhookServer, webhook_server

TOKEN = "ghp_exactlyOnceTokenNeverShown0001"
SECRET = "hook-secret-exactly-once"
REPO = "acme/reports"
TODAY = datetime.now(UTC).date()
WAIT = 120.0
"""Bound on waiting for a subprocess or a server event (never reached when things work)."""


def _days(n: int) -> list[date]:
    return [TODAY - timedelta(days=n - i) for i in range(n)]


def _workspace(
    tmp: Path,
    *,
    repos: tuple[str, ...] = ("alpha",),
    days: int = 1,
    hook: WebhookServer | None = None,
    fake: FakeGitHub | None = None,
    smtp: SMTPServer | None = None,
) -> Path:
    """Repositories with one commit a day, ``setup.toml`` without targets (to archive the
    days first) and ``repoherald.toml`` with the given targets."""
    tables = ""
    for name in repos:
        fx = GitFixture.init(tmp / name)
        for i, day in enumerate(_days(days)):
            fx.write(f"mod_{i}.py", f"def f{i}():\n    return {i}\n")
            when = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=12)
            fx.commit(f"Fix {name} scheduler crash {i}", when=when)
        tables += f'\n[[repos]]\nsource = "{name}"\n'
    base = '[report]\ntz = "UTC"\n' + tables
    (tmp / "setup.toml").write_text(base, encoding="utf-8")
    targets = ""
    if fake is not None:
        targets += (
            f'\n[[publish]]\ntype = "github_issue"\nname = "issues"\nrepo = "{REPO}"\n'
            f'labels = ["daily"]\napi_url = "{fake.api_url}"\ntoken_env = "GH_ISSUE_TOKEN"\n'
        )
    if hook is not None:
        targets += (
            '\n[[publish]]\ntype = "webhook"\nname = "hook"\nkind = "json"\n'
            'url_env = "HOOK_URL"\nsecret_env = "HOOK_SECRET"\nretry_delay = 0\n'
        )
    if smtp is not None:
        targets += (
            '\n[[publish]]\ntype = "email"\nname = "mail"\nhost = "127.0.0.1"\n'
            f'port = {smtp.port}\nsecurity = "none"\nfrom = "herald@example.com"\n'
            'to = ["team@example.com"]\ndigest = true\nretry_delay = 0\n'
        )
    (tmp / "repoherald.toml").write_text(base + targets, encoding="utf-8")
    return tmp


def _cli(ws: Path, *args: str) -> tuple[int, str]:
    proc = run_repoherald(*args, "--home", str(ws / "home"), cwd=ws, timeout=WAIT)
    return proc.returncode, proc.stdout + proc.stderr


def _archive(ws: Path, days: int) -> None:
    """Report the days without delivering them, so ``publish`` has them to send."""
    first, last = _days(days)[0], _days(days)[-1]
    code, out = _cli(
        ws, "run", "--config", "setup.toml", "--since", str(first), "--until", str(last)
    )
    assert code == 0, out


def _start(ws: Path, name: str, *args: str) -> subprocess.Popen[str]:
    return start_repoherald(*args, "--home", str(ws / "home"), cwd=ws, stderr=ws / f"{name}.err")


def _finish(proc: subprocess.Popen[str], ws: Path, name: str) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=WAIT)
    return proc.returncode, out + (ws / f"{name}.err").read_text(encoding="utf-8")


def _until(check: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def _db(ws: Path) -> sqlite3.Connection:
    return sqlite3.connect(ws / "home" / "repoherald.db", isolation_level=None, timeout=WAIT)


def _claims(ws: Path) -> list[tuple[str, str, str]]:
    """The store's claims on deliveries (none in a store that has no such table)."""
    with _db(ws) as conn:
        try:
            return conn.execute("SELECT target, day, state FROM publish_claims").fetchall()
        except sqlite3.OperationalError:
            return []


def _by_day(hook: WebhookServer) -> Counter[str]:
    return Counter(str(r.data["date"]) for r in hook.accepted("json"))


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeGitHub, WebhookServer]]:
    monkeypatch.setenv("GH_ISSUE_TOKEN", TOKEN)
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    with FakeGitHub(token=TOKEN) as fake, webhook_server(SECRET) as hook:
        fake.issues.add_repo(REPO)
        monkeypatch.setenv("HOOK_URL", f"{hook.url}/json/x")
        yield fake, hook


def _item() -> Publication:
    twin = json.dumps({"date": "2026-04-01", "repos": []})
    return Publication("alpha", "", date(2026, 4, 1), "en", "# alpha\n", twin)


def _issue_days(fake: FakeGitHub) -> Counter[tuple[str, str]]:
    """(repository, day) of every issue, from its marker."""
    out: Counter[tuple[str, str]] = Counter()
    for issue in fake.issues.issues(REPO):
        first = issue["body"].split("\n", 1)[0]
        fields = dict(f.split("=", 1) for f in first.split() if "=" in f)
        out[(fields["repo"], fields["day"])] += 1
    return out


# -- two processes at once ------------------------------------------------------------


def test_two_publish_at_once_with_slow_receivers_send_each_day_once(
    tmp_path: Path, servers: tuple[FakeGitHub, WebhookServer]
) -> None:
    fake, hook = servers
    ws = _workspace(tmp_path, hook=hook, fake=fake)
    _archive(ws, 1)
    hook.delay = 2.0  # each receiver takes its time to answer
    fake.latency = 0.3
    procs = [_start(ws, f"p{i}", "publish", "--date", "yesterday") for i in range(2)]
    results = [_finish(p, ws, f"p{i}") for i, p in enumerate(procs)]
    assert [code for code, _ in results] == [0, 0], results
    assert len(hook.accepted("json")) == 1
    assert _issue_days(fake) == {("alpha", str(TODAY - timedelta(days=1))): 1}
    assert _claims(ws) == []
    both = "\n".join(out for _, out in results)
    assert both.count(": sent") == 2  # each target once, by one process or the other


def test_two_runs_at_once_over_three_repositories_and_days_deliver_nine_each(
    tmp_path: Path, servers: tuple[FakeGitHub, WebhookServer]
) -> None:
    fake, hook = servers
    ws = _workspace(tmp_path, repos=("alpha", "beta", "gamma"), days=3, hook=hook, fake=fake)
    hook.delay = 0.5
    fake.latency = 0.05
    days = _days(3)
    args = ("run", "--since", str(days[0]), "--until", str(days[-1]))
    procs = [_start(ws, f"r{i}", *args) for i in range(2)]
    results = [_finish(p, ws, f"r{i}") for i, p in enumerate(procs)]
    assert [code for code, _ in results] == [0, 0], results
    want = {(repo, str(d)) for repo in ("alpha", "beta", "gamma") for d in days}
    assert len(hook.accepted("json")) == 9
    sent = Counter((r.data["repos"][0]["name"], str(r.data["date"])) for r in hook.accepted("json"))
    assert len(sent) == 9 and {day for _, day in sent} == {str(d) for d in days}
    assert _issue_days(fake) == dict.fromkeys(want, 1)
    assert _claims(ws) == []


def test_two_runs_on_two_hosts_homes_sharing_one_postgresql_store_deliver_nine_each(
    tmp_path: Path,
    servers: tuple[FakeGitHub, WebhookServer],
    monkeypatch: pytest.MonkeyPatch,
    pg_cluster: PgCluster,
    pg_database: str,
) -> None:
    """As above, but each process has its own home (as on two machines): only the
    PostgreSQL store is shared, and its ledger claims keep every delivery single."""
    fake, hook = servers
    ws = _workspace(tmp_path, repos=("alpha", "beta", "gamma"), days=3, hook=hook, fake=fake)
    with (ws / "repoherald.toml").open("a", encoding="utf-8") as cfg:
        cfg.write('\n[store]\nurl_env = "HERALD_TEST_DATABASE_URL"\n')
    url = pg_cluster.url(pg_database)
    monkeypatch.setenv("HERALD_TEST_DATABASE_URL", url)
    hook.delay = 0.5
    fake.latency = 0.05
    days = _days(3)
    args = ("run", "--since", str(days[0]), "--until", str(days[-1]))
    procs = [
        start_repoherald(*args, "--home", str(ws / f"home{i}"), cwd=ws, stderr=ws / f"r{i}.err")
        for i in range(2)
    ]
    results = [_finish(p, ws, f"r{i}") for i, p in enumerate(procs)]
    assert [code for code, _ in results] == [0, 0], results
    assert not any((ws / f"home{i}" / "repoherald.db").exists() for i in range(2))
    want = {(repo, str(d)) for repo in ("alpha", "beta", "gamma") for d in days}
    sent = Counter((r.data["repos"][0]["name"], str(r.data["date"])) for r in hook.accepted("json"))
    assert len(hook.accepted("json")) == 9 and set(sent) == want
    assert _issue_days(fake) == dict.fromkeys(want, 1)
    store = StoreAt("postgres", ws, url)
    assert store.sql("SELECT count(*) FROM publish_claims") == [(0,)]
    assert store.sql("SELECT count(*) FROM publish_ledger WHERE status = 'sent'") == [(18,)]
    assert pg_cluster.password not in "".join(out for _, out in results)


# -- kill -9 at each step of a delivery ---------------------------------------------------

STEPS = ("claimed", "sent", "answered", "recorded")


@contextmanager
def _write_lock(ws: Path) -> Iterator[None]:
    """Hold the store's write lock, as a long transaction of another run would."""
    conn = _db(ws)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def _kill_at(
    step: str, ws: Path, proc: subprocess.Popen[str], held: object, sending: object
) -> None:
    """Kill ``proc`` with SIGKILL once its delivery reached ``step``; ``sending`` says when
    the first delivery is under way, its answer not yet come (for ``answered``)."""
    if step == "answered":
        _until(sending, "a delivery under way")
        with _write_lock(ws):  # the answer comes, the ledger cannot be written
            err = ws / "p.err"
            _until(lambda: "waiting for another" in err.read_text(), "the ledger update waits")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=WAIT)
        return
    _until(held.is_set, f"the request stopped at step {step}")  # type: ignore[attr-defined]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=WAIT)


@pytest.mark.parametrize("step", STEPS)
def test_a_webhook_delivery_killed_at_any_step_is_never_sent_twice_silently(
    step: str, tmp_path: Path, servers: tuple[FakeGitHub, WebhookServer]
) -> None:
    _, hook = servers
    ws = _workspace(tmp_path, days=2, hook=hook)
    _archive(ws, 2)
    first, second = (str(d) for d in _days(2))
    if step == "claimed":
        hook.hold("before")
    elif step == "sent":
        hook.hold("after")
    elif step == "recorded":
        hook.hold("before", skip=1)
    else:
        hook.delay = 1.0  # time for the test to take the store's lock before the answer
    proc = _start(ws, "p", "publish", "--since", first, "--until", second)
    _kill_at(step, ws, proc, hook.held, lambda: hook.received)
    interrupted = second if step == "recorded" else first
    before = _by_day(hook)

    code, out = _cli(ws, "publish", "--since", first, "--until", second)
    assert _by_day(hook)[interrupted] == before[interrupted]  # not sent again silently
    assert max(_by_day(hook).values()) == 1
    assert code == 1, out
    assert f"hook: alpha {interrupted}: may have been sent" in out and "--force" in out
    assert _by_day(hook)[interrupted] == (step in ("sent", "answered"))
    assert _claims(ws) == [("hook", interrupted, "uncertain")]

    code, out = _cli(ws, "publish", "--since", first, "--until", second, "--force")
    assert code == 0, out
    assert _by_day(hook)[interrupted] == 1 + (step in ("sent", "answered"))
    assert _claims(ws) == []
    code, out = _cli(ws, "publish", "--since", first, "--until", second)
    assert code == 0 and out.count("unchanged") == 2, out


@pytest.mark.parametrize("step", STEPS)
def test_an_issue_delivery_killed_at_any_step_is_found_by_its_marker_and_adopted(
    step: str, tmp_path: Path, servers: tuple[FakeGitHub, WebhookServer]
) -> None:
    fake, _ = servers
    ws = _workspace(tmp_path, days=2, fake=fake)
    _archive(ws, 2)
    first, second = (str(d) for d in _days(2))
    fake.latency = 0.3 if step == "answered" else 0.0
    create = r"^POST /repos/acme/reports/issues$"
    if step == "claimed":
        fake.hold(create, "before")
    elif step == "sent":
        fake.hold(create, "after")
    elif step == "recorded":
        fake.hold(create, "before", skip=1)
    proc = _start(ws, "p", "publish", "--since", first, "--until", second)
    _kill_at(step, ws, proc, fake.held, lambda: any("/issues?" in r.path for r in fake.requests))
    interrupted = second if step == "recorded" else first

    code, out = _cli(ws, "publish", "--since", first, "--until", second)
    assert code == 0, out
    assert f"issues: alpha {interrupted}: sent (after an interrupted delivery" in out
    assert _issue_days(fake) == {("alpha", first): 1, ("alpha", second): 1}
    assert _claims(ws) == []
    with _db(ws) as conn:
        ids = conn.execute("SELECT remote_id FROM publish_ledger ORDER BY day").fetchall()
    assert [json.loads(r)["issue"] for (r,) in ids] == [1, 2]


def test_a_mail_digest_killed_before_the_servers_answer_is_not_mailed_again(
    tmp_path: Path,
) -> None:
    """One digest mail for two repositories: the server took it, the sender was killed
    before the answer; the re-run says both may have been sent and mails nothing."""
    cert = make_certificate(tmp_path)
    with smtp_server("plain", *cert) as smtp:
        ws = _workspace(tmp_path, repos=("alpha", "beta"), smtp=smtp)
        _archive(ws, 1)
        smtp.hold()
        proc = _start(ws, "p", "publish", "--date", "yesterday")
        _kill_at("sent", ws, proc, smtp.held, None)
        assert len(smtp.received) == 1
        code, out = _cli(ws, "publish", "--date", "yesterday")
        assert len(smtp.received) == 1, out
        assert code == 1, out
        yesterday = TODAY - timedelta(days=1)
        for repo in ("alpha", "beta"):
            assert f"mail: {repo} {yesterday}: may have been sent" in out
        code, out = _cli(ws, "publish", "--date", "yesterday", "--force")
        assert code == 0, out
        assert len(smtp.received) == 2 and _claims(ws) == []


# -- an answer that never comes ------------------------------------------------------------


def test_a_webhook_that_answers_after_the_timeout_gets_the_message_once(
    servers: tuple[FakeGitHub, WebhookServer], memory_store: Store
) -> None:
    """The robot took the message but answered too late: retrying would post it again."""
    _, hook = servers
    table = {
        "type": "webhook",
        "kind": "json",
        "url_env": "HOOK_URL",
        "secret_env": "HOOK_SECRET",
        "timeout": 0.3,
        "retry_delay": 0,
    }
    target = NamedTarget("hook", registry.create(table))
    item = _item()
    hook.delay = 3.0
    first = deliver_one(memory_store, target, item, force=False, dry_run=False)
    assert len(hook.received) == 1  # not posted again on the timeout
    assert first.status == "uncertain" and first.failed
    line = first.line()
    assert "may have been sent" in line and ("ReadTimeout" in line or "deadline" in line)
    again = deliver_one(memory_store, target, item, force=False, dry_run=False)
    assert again.status == "uncertain" and len(hook.received) == 1
    preview = deliver_one(memory_store, target, item, force=False, dry_run=True)
    assert preview.status == "uncertain"  # --dry-run says what publish would do
    preview = deliver_one(memory_store, target, item, force=True, dry_run=True)
    assert preview.status == "dry-run" and len(hook.received) == 1
    hook.delay = 0.0
    forced = deliver_one(memory_store, target, item, force=True, dry_run=False)
    assert forced.status == "sent" and len(hook.received) == 2
    assert memory_store.claims("hook") == []
