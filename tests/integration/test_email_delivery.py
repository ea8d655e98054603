"""E-mail delivery against a real SMTP server on 127.0.0.1: parts, anchors, TLS, login, ledger."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.errors import PublishError
from repoherald.models import (
    Commit,
    DayReport,
    Entry,
    FileChange,
    FileStatus,
    Importance,
    Person,
    RepoSection,
)
from repoherald.publish import registry
from repoherald.publish.base import Publication
from repoherald.publish.deliver import Batch, deliver_days, deliver_one
from repoherald.publish.email.publisher import EmailOptions, EmailPublisher
from repoherald.publish.registry import NamedTarget
from repoherald.render import twin
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from repoherald.store.db import SqliteStore as Store
from tests.markdown_links import heading_ids_and_links
from tests.smtp_server import (
    PASSWORD,
    USER,
    SMTPServer,
    client_context,
    make_certificate,
    smtp_server,
)

TZ = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 4, 1)
HOSTILE = (
    "Fix <script>alert('x')</script> [click me](javascript:alert(1))"
    ' <img src=x onerror="alert(2)"> <a href="javascript:alert(3)">a</a>'
)


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def server(cert: tuple[Path, Path]) -> Iterator[SMTPServer]:
    with smtp_server("starttls", *cert) as running:
        yield running


def _report(repo: str, titles: list[str], lang: str = "zh") -> DayReport:
    extractor = FactsExtractor(AreaRules(), lambda oid: None)
    rules = RuleAnalyser()
    entries = []
    for i, title in enumerate(titles):
        who = Person("开发者 <dev@example.com>", "dev@example.com")
        ts = int(datetime(2026, 4, 1, 3, tzinfo=UTC).timestamp()) + i
        commit = Commit(f"{i:040x}", ("f" * 40,), who, ts, 480, who, ts, 480, title)
        facts = extractor.extract(commit, [FileChange("src/a.py", FileStatus.MODIFIED, 3, 1)])
        imp = Importance.HIGH if i % 2 else Importance.MEDIUM
        entries.append(Entry(commit, facts, replace(rules.analyse(commit, facts), importance=imp)))
    return DayReport(
        day=DAY,
        tz_name="Asia/Shanghai",
        start=datetime(2026, 4, 1, tzinfo=TZ),
        end=datetime(2026, 4, 2, tzinfo=TZ),
        lang=lang,
        sections=(RepoSection(repo, "main", f"https://github.com/{repo}", tuple(entries)),),
        analysers=(RuleAnalyser.name,),
        generated_at=datetime(2026, 4, 2, tzinfo=UTC),
        version="9.9",
    )


def _item(name: str, titles: list[str], lang: str = "zh") -> Publication:
    view = build_view(_report(f"acme/{name}", titles, lang))
    return Publication(name, "", DAY, lang, render_markdown(view), twin.write(view))


def _options(server: SMTPServer, **extra: Any) -> EmailOptions:
    table = {
        "host": "127.0.0.1",
        "port": server.port,
        "username_env": "SMTP_USER",
        "password_env": "SMTP_PASSWORD",
        "from": "Repo Herald <herald@example.com>",
        "to": ["dev@example.com", "lead@example.org"],
        "retry_delay": 0,
        **extra,
    }
    return EmailOptions.model_validate(table)


def _target(name: str, options: EmailOptions, cert: Path) -> NamedTarget:
    publisher = EmailPublisher(options, ssl_context=client_context(cert))
    return NamedTarget(name, registry.Target("email", publisher))


@pytest.fixture(autouse=True)
def _login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMTP_USER", USER)
    monkeypatch.setenv("SMTP_PASSWORD", PASSWORD)


class _Tags(HTMLParser):
    """Every start tag with its attributes, as a browser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _parts(message: EmailMessage) -> tuple[str, str]:
    plain = message.get_body(("plain",))
    html = message.get_body(("html",))
    assert plain is not None and html is not None
    return str(plain.get_content()), str(html.get_content())  # type: ignore[attr-defined]


def test_a_report_arrives_as_markdown_text_and_styled_html(
    server: SMTPServer, cert: tuple[Path, Path]
) -> None:
    item = _item("app", ["[Bugfix] 修复调度器崩溃 `sched`", "Add the 新功能 API", "Docs"])
    options = _options(
        server, cc=["cc@example.net"], subject="【日报】{name} {date}：🔴 {high}/{total}"
    )
    delivery = EmailPublisher(options, ssl_context=client_context(cert[0])).publish(item)
    assert delivery.status.value == "sent", delivery.message
    assert len(server.received) == 1
    got = server.received[0]
    assert got.tls and got.user == USER and got.sender == "herald@example.com"
    assert sorted(got.recipients) == ["cc@example.net", "dev@example.com", "lead@example.org"]
    msg = got.message
    assert msg["Subject"] == "【日报】app 2026-04-01：🔴 1/3"
    assert "=?utf-8?" in got.data.decode("ascii").split("\r\n\r\n")[0].lower()  # RFC 2047
    assert msg["To"] == "dev@example.com, lead@example.org" and msg["Cc"] == "cc@example.net"
    assert msg["From"].addresses[0].display_name == "Repo Herald"
    assert msg["Message-ID"] == delivery.remote_id and delivery.remote_id.endswith("@example.com>")
    assert msg["Date"].datetime.tzinfo is not None
    assert msg.get_content_type() == "multipart/alternative"
    text, html = _parts(msg)
    assert text.replace("\r\n", "\n") == item.markdown
    tags = _tags(html)
    names = [t for t, _ in tags]
    assert {"table", "th", "td", "h1", "h2", "h3", "h4", "code", "blockquote"} <= set(names)
    for tag, attrs in tags:
        if tag in ("table", "th", "td", "h1", "h2", "h3", "h4", "code", "blockquote"):
            assert attrs.get("style"), tag
    assert "script" not in names and "style" not in names and "link" not in names
    ids = [a["id"] for _, a in tags if a.get("id")]
    want_ids, links, _ = heading_ids_and_links(item.markdown)
    assert ids == want_ids  # the anchors GitHub would give the headings
    hrefs = [str(a["href"])[1:] for t, a in tags if t == "a" and str(a.get("href")).startswith("#")]
    assert hrefs and sorted(set(hrefs)) == sorted(set(links))
    assert set(hrefs) <= set(ids)  # every contents link lands on a heading


def test_hostile_commit_messages_stay_text(server: SMTPServer, cert: tuple[Path, Path]) -> None:
    item = _item("app", [HOSTILE, HOSTILE + " again"])
    publisher = EmailPublisher(_options(server), ssl_context=client_context(cert[0]))
    publisher.publish(item)
    _, html = _parts(server.received[0].message)
    tags = _tags(html)
    assert not [t for t, _ in tags if t in ("script", "img", "iframe", "style")]
    for _, attrs in tags:
        assert not any(k.startswith("on") for k in attrs)
        href = str(attrs.get("href") or "")
        assert href == "" or re.match(r"^(https?:|mailto:|#)", href), href
    assert "&lt;script&gt;" in html


def test_wrong_password_fails_in_one_line_and_other_targets_still_deliver(
    server: SMTPServer,
    cert: tuple[Path, Path],
    memory_store: Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BAD_PASSWORD", "not-the-password-42")
    bad = _target("ops-mail", _options(server, password_env="BAD_PASSWORD"), cert[0])
    good = _target("team-mail", _options(server), cert[0])
    item = _item("app", ["Fix a crash"])
    outcomes = [deliver_one(memory_store, t, item, force=False, dry_run=False) for t in (bad, good)]
    assert [o.status for o in outcomes] == ["failed", "sent"]
    line = outcomes[0].line()
    assert "\n" not in line and f"email 127.0.0.1:{server.port}" in line
    assert "refused the login" in line and "535" in line and "$BAD_PASSWORD" in line
    assert "not-the-password-42" not in line and PASSWORD not in line
    refused = [who for who, ok in server.logins if not ok]
    assert server.logins[-1] == (USER, True)
    assert len(refused) == 1  # one try of the password: not PLAIN then LOGIN, and no retry
    assert len(server.received) == 1
    dump = "\n".join(memory_store.conn.iterdump())
    assert "not-the-password-42" not in dump and PASSWORD not in dump
    assert "refused the login" in dump  # the ledger says why


def test_starttls_missing_is_a_failure_and_nothing_goes_in_clear(cert: tuple[Path, Path]) -> None:
    with smtp_server("plain", *cert) as plain:
        publisher = EmailPublisher(_options(plain), ssl_context=client_context(cert[0]))
        with pytest.raises(PublishError) as exc:
            publisher.publish(_item("app", ["Fix"]))
        assert "does not offer STARTTLS" in str(exc.value) and "nothing is sent" in str(exc.value)
        assert plain.received == [] and plain.logins == []
        # Only an explicit security = "none" talks in clear.
        clear = EmailPublisher(_options(plain, security="none"))
        assert clear.publish(_item("app", ["Fix"])).status.value == "sent"
        assert plain.received[0].user == USER and not plain.received[0].tls


def test_implicit_tls_and_an_untrusted_certificate(cert: tuple[Path, Path]) -> None:
    with smtp_server("ssl", *cert) as tls:
        options = _options(tls, security="ssl")
        assert (
            EmailPublisher(options, ssl_context=client_context(cert[0]))
            .publish(_item("app", ["Fix"]))
            .status.value
            == "sent"
        )
        assert tls.received[0].tls
        with pytest.raises(PublishError, match="certificate is not trusted"):
            EmailPublisher(options).publish(_item("app", ["Fix"]))  # system CAs only
        assert len(tls.received) == 1


def test_a_4xx_is_retried_and_a_5xx_is_not(server: SMTPServer, cert: tuple[Path, Path]) -> None:
    waits: list[float] = []
    options = _options(server, max_retries=3, retry_delay=0.5)
    publisher = EmailPublisher(options, ssl_context=client_context(cert[0]), sleep=waits.append)
    server.defer(2)
    assert publisher.publish(_item("app", ["Fix"])).status.value == "sent"
    assert waits == [0.5, 1.0] and len(server.received) == 1
    server.reject()
    with pytest.raises(PublishError) as exc:
        publisher.publish(_item("app", ["Fix"]))
    assert "554" in str(exc.value) and f"email 127.0.0.1:{server.port}" in str(exc.value)
    assert waits == [0.5, 1.0] and server.answers == []
    server.defer(4)
    with pytest.raises(PublishError, match=r"451 .* after 4 attempt\(s\): try again later"):
        publisher.publish(_item("app", ["Fix"]))


@pytest.mark.parametrize("how", ["dropped", "unanswered"])
def test_a_message_the_server_took_without_answering_is_mailed_once(
    how: str, server: SMTPServer, cert: tuple[Path, Path], memory_store: Store
) -> None:
    """After the final "." the server may have queued the mail: no retry, "may have been sent"."""
    options = _options(server, max_retries=3, timeout=1.0)
    target = _target("mail", options, cert[0])
    item = _item("app", ["Fix a crash"])
    server.drop() if how == "dropped" else server.hold()
    first = deliver_one(memory_store, target, item, force=False, dry_run=False)
    assert len(server.received) == 1  # not mailed again on the lost answer
    assert first.status == "uncertain" and first.failed
    line = first.line()
    assert "may have been sent" in line and f"email 127.0.0.1:{server.port}" in line
    assert ("timed out" if how == "unanswered" else "closed the connection") in line
    again = deliver_one(memory_store, target, item, force=False, dry_run=False)
    assert again.status == "uncertain" and len(server.received) == 1
    forced = deliver_one(memory_store, target, item, force=True, dry_run=False)
    assert forced.status == "sent" and len(server.received) == 2
    assert memory_store.claims("mail") == []


def test_a_failure_before_the_message_went_out_is_still_retried(
    server: SMTPServer, cert: tuple[Path, Path]
) -> None:
    """A deferred recipient (before DATA) is retried: the server cannot have the message."""
    waits: list[float] = []
    options = _options(server, max_retries=2, retry_delay=0.5)
    publisher = EmailPublisher(options, ssl_context=client_context(cert[0]), sleep=waits.append)
    server.defer_recipients(2)  # both recipients: nothing can be sent
    assert publisher.publish(_item("app", ["Fix"])).status.value == "sent"
    assert waits == [0.5] and len(server.received) == 1


def test_connection_refused_is_retried_then_reported(cert: tuple[Path, Path]) -> None:
    with smtp_server("starttls", *cert) as gone:
        port = gone.port
    options = _options(gone, port=port, max_retries=2)
    with pytest.raises(PublishError) as exc:
        EmailPublisher(options, sleep=lambda s: None).publish(_item("app", ["Fix"]))
    assert "connection failed" in str(exc.value) and "after 3 attempt(s)" in str(exc.value)


def test_digest_sends_one_mail_for_two_repositories(
    server: SMTPServer, cert: tuple[Path, Path], memory_store: Store, tmp_path: Path
) -> None:
    target = _target("digest", _options(server, digest=True), cert[0])
    batch = Batch()
    outcomes = []
    for name in ("alpha", "beta"):
        item = _item(name, ["Fix a crash", "Add an API"])
        md = tmp_path / f"{name}.md"
        md.write_text(item.markdown, encoding="utf-8")
        md.with_suffix(".json").write_text(item.json, encoding="utf-8")
        outcomes += deliver_days(memory_store, [target], name, {DAY: md}, "zh", batch=batch)
    assert outcomes == [] and server.received == []  # held until every repository is in
    outcomes = batch.flush(memory_store)
    assert [(o.repo, o.status) for o in outcomes] == [("alpha", "sent"), ("beta", "sent")]
    assert len(server.received) == 1
    msg = server.received[0].message
    assert "alpha, beta" in str(msg["Subject"]) and "🔴 2" in str(msg["Subject"])
    text, html = _parts(msg)
    assert "acme/alpha" in text and "acme/beta" in text
    ids = [str(a["id"]) for _, a in _tags(html) if a.get("id")]
    assert len(ids) == len(set(ids))  # two reports, no colliding anchors
    hrefs = [str(a["href"])[1:] for t, a in _tags(html) if str(a.get("href", "")).startswith("#")]
    assert set(hrefs) <= set(ids)
    rows = memory_store.ledger_entries(target="digest")
    assert {r.repo for r in rows} == {"alpha", "beta"}
    assert {r.remote_id for r in rows} == {msg["Message-ID"]}

    # Unchanged: a second run sends nothing.
    again = Batch()
    for name in ("alpha", "beta"):
        md = tmp_path / f"{name}.md"
        outcomes = deliver_days(memory_store, [target], name, {DAY: md}, "zh", batch=again)
        assert [o.status for o in outcomes] == ["unchanged"]
    assert again.flush(memory_store) == [] and len(server.received) == 1


def test_a_digest_that_fails_is_failed_for_every_repository(
    server: SMTPServer, cert: tuple[Path, Path], memory_store: Store
) -> None:
    target = _target("digest", _options(server, digest=True), cert[0])
    batch = Batch()
    for name in ("alpha", "beta"):
        batch.add(target, _item(name, ["Fix"]))
    server.reject()
    outcomes = batch.flush(memory_store)
    assert [o.status for o in outcomes] == ["failed", "failed"]
    assert all("554" in o.message for o in outcomes)
    assert {str(e.status) for e in memory_store.ledger_entries(target="digest")} == {"failed"}


def test_dry_run_measures_each_mail_and_the_digest_and_sends_nothing(
    server: SMTPServer, cert: tuple[Path, Path], memory_store: Store, tmp_path: Path
) -> None:
    single = _target("team-mail", _options(server), cert[0])
    digest = _target("digest-mail", _options(server, digest=True), cert[0])
    outcomes = []
    batch = Batch()
    for name in ("alpha", "beta"):
        item = _item(name, ["Fix a crash"])
        md = tmp_path / f"{name}.md"
        md.write_text(item.markdown, encoding="utf-8")
        md.with_suffix(".json").write_text(item.json, encoding="utf-8")
        outcomes += deliver_days(
            memory_store, [single, digest], name, {DAY: md}, "zh", dry_run=True, batch=batch
        )
    outcomes += batch.flush(memory_store, dry_run=True)
    lines = [o.line() for o in outcomes]
    assert [o.status for o in outcomes] == ["dry-run"] * 4
    assert lines[0].startswith("team-mail: alpha")
    assert f"would send one message to 2 recipient(s) via email 127.0.0.1:{server.port}" in lines[0]
    assert sum("one message for 2 report(s) to 2 recipient(s)" in line for line in lines) == 2
    sizes = {o.target: o.size for o in outcomes if o.repo == "alpha"}
    assert sizes["digest-mail"] > sizes["team-mail"] > len(_item("alpha", ["Fix a crash"]).markdown)
    assert server.received == [] and memory_store.ledger_entries() == []
    assert all(PASSWORD not in line for line in lines)


def _workspace(tmp: Path, port: int) -> Path:
    from tests.gitfixture import GitFixture

    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    when = datetime.combine(yesterday, datetime.min.time(), UTC) + timedelta(hours=12)
    repos = ""
    for name in ("alpha", "beta"):
        fx = GitFixture.init(tmp / name)
        fx.write("mod.py", "def f():\n    return 1\n")
        fx.commit(f"Fix a crash in {name} <script>x</script>", when=when)
        repos += f'\n[[repos]]\nsource = "{name}"\n'
    common = (
        f'type = "email"\nhost = "127.0.0.1"\nport = {port}\nfrom = "herald@example.com"\n'
        'to = ["dev@example.com"]\nusername_env = "SMTP_USER"\nretry_delay = 0\n'
    )
    targets = (
        f'\n[[publish]]\nname = "team-mail"\n{common}password_env = "SMTP_PASSWORD"\n'
        f'\n[[publish]]\nname = "digest-mail"\n{common}password_env = "SMTP_PASSWORD"\n'
        'digest = true\nsubject = "每日摘要 {name} {date}"\n'
        f'\n[[publish]]\nname = "ops-mail"\n{common}password_env = "BAD_PASSWORD"\n'
    )
    (tmp / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\nlang = "zh"\n' + repos + targets, encoding="utf-8"
    )
    return tmp


def test_run_mails_each_report_and_one_digest_and_contains_a_bad_login(
    tmp_path: Path, cert: tuple[Path, Path], server: SMTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.gitfixture import run_repoherald

    monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))  # the default context trusts the test CA
    monkeypatch.setenv("BAD_PASSWORD", "wrong-password-77")
    ws = _workspace(tmp_path, server.port)

    def run(*args: str) -> tuple[int, str, str]:
        proc = run_repoherald(*args, "--home", str(ws / "home"), cwd=ws)
        return proc.returncode, proc.stdout, proc.stderr

    code, out, err = run("run")
    assert code == 1, err
    failures = [line for line in err.splitlines() if "ops-mail" in line]
    assert failures and all("refused the login" in line for line in failures), err
    subjects = sorted(str(r.message["Subject"]) for r in server.received)
    yesterday = (datetime.now(UTC).date() - timedelta(days=1)).isoformat()
    assert len(subjects) == 3, subjects  # alpha, beta, and one digest of both
    assert f"每日摘要 alpha, beta {yesterday}" in subjects
    assert all(r.tls and r.user == USER for r in server.received)
    dump = "\n".join(sqlite3.connect(ws / "home" / "repoherald.db").iterdump())
    archive = "".join(p.read_text(encoding="utf-8") for p in (ws / "reports").rglob("*.*"))
    for text in (out, err, dump, archive):
        assert PASSWORD not in text and "wrong-password-77" not in text
    for received in server.received:
        _, html = _parts(received.message)
        assert "<script>" not in html and "&lt;script&gt;" in html

    monkeypatch.setenv("BAD_PASSWORD", PASSWORD)  # fixed: the next run retries only that
    code, out, err = run("run")
    assert code == 0, err
    assert len(server.received) == 5  # ops-mail: alpha and beta

    code, out, err = run("run", "--date", "yesterday")
    assert code == 0, err
    assert len(server.received) == 5 and "unchanged" in err

    code, out, err = run("publish", "--date", "yesterday", "--dry-run", "--force")
    assert code == 0, err
    assert len(server.received) == 5 and PASSWORD not in out + err
    assert out.count(": unchanged") == 6
