"""A digest a reader can act on (issue 21, item 5), on real repositories, real deliveries.

Each 🔴 line says why; commits that break the configured downstream code come
first, marked and counted; a day without commits is skipped (and filed as
skipped) unless the target asks for such days; a stale local clone says so;
a weekly target gets one roll-up per repository and week, exactly once.
Messages go to the loopback webhook receiver and SMTP server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.errors import ConfigError
from repoherald.pipeline import run
from repoherald.publish import registry
from repoherald.publish.archive.archived import recorded_reports
from repoherald.publish.deliver import deliver_days, failed_days
from repoherald.publish.email.publisher import EmailPublisher
from repoherald.publish.registry import NamedTarget
from repoherald.render import escape
from repoherald.render.digest import TITLE_MAX, why_listed
from repoherald.store.db import SqliteStore as Store
from repoherald.store.ledger import LedgerStatus
from tests.downstream_pair import PLUGIN, build_upstream
from tests.gitfixture import GitFixture
from tests.smtp_server import PASSWORD, USER, SMTPServer, client_context, make_certificate
from tests.smtp_server import smtp_server as start_smtp
from tests.webhook_server import WebhookServer, webhook_server

TOKEN = "tok-digest-1"


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def smtp(cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[SMTPServer]:
    monkeypatch.setenv("SMTP_USER", USER)
    monkeypatch.setenv("SMTP_PASSWORD", PASSWORD)
    with start_smtp("starttls", *cert) as running:
        yield running


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Iterator[WebhookServer]:
    with webhook_server("") as server:
        monkeypatch.setenv("WECOM_URL", f"{server.url}/wecom/{TOKEN}")
        monkeypatch.setenv("SLACK_URL", f"{server.url}/slack/{TOKEN}")
        yield server


def _target(name: str, table: dict[str, Any], cert: Path | None = None) -> NamedTarget:
    """A target validated from its ``[[publish]]`` table, as the config file gives it."""
    target = registry.create(table, where=name)
    if cert is not None:  # the test CA, for the SMTP server's certificate
        options = target.publisher.options  # type: ignore[attr-defined]
        target = replace(target, publisher=EmailPublisher(options, client_context(cert)))
    return NamedTarget(name, target)


def _wecom(name: str, **extra: Any) -> NamedTarget:
    return _target(name, {"type": "webhook", "kind": "wecom", "url_env": "WECOM_URL", **extra})


def _mail(name: str, cert: Path, smtp: SMTPServer, **extra: Any) -> NamedTarget:
    table = {
        "type": "email", "host": "127.0.0.1", "port": smtp.port, "from": "herald@example.com",
        "to": ["dev@example.com"], "username_env": "SMTP_USER", "password_env": "SMTP_PASSWORD",
        "retry_delay": 0, **extra,
    }  # fmt: skip
    return _target(name, table, cert)


def _report(tmp: Path, repo: Path, lang: str, **days: str) -> Store:
    """Run the rules on ``repo`` for ``day`` or ``since``/``until`` (UTC, no LLM)."""
    settings = build_settings(
        repos=(str(repo),), tz="UTC", lang=lang, out=str(tmp / "out"), home=str(tmp / "home"),
        cwd=tmp, no_llm=True, **days,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    return Store.open(settings.db_path)


def _deliver(
    store: Store, targets: list[NamedTarget], days: list[date], lang: str, repo: str = "up"
) -> list[Any]:
    return deliver_days(store, targets, repo, recorded_reports(store, repo, days, lang), lang)


def _wecom_texts(server: WebhookServer) -> list[str]:
    return [r.data["markdown"]["content"] for r in server.accepted("wecom")]


def _twin(tmp: Path, day: str, lang: str) -> dict[str, Any]:
    suffix = ".en.json" if lang == "en" else ".json"
    (path,) = (tmp / "out").rglob(f"{day}{suffix}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _shown(text: str) -> str:
    """A reason or title as a Markdown digest line shows it."""
    text = escape.clean(text)
    text = text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1] + "…"
    return escape.inline(text)


# -- 🔴 reasons, and what breaks your code first ------------------------------------------


def _downstream_day(tmp: Path, lang: str) -> Store:
    build_upstream(tmp / "up")
    plugin = GitFixture.init(tmp / "plugin")
    plugin.write_many({rel: dedent(text) for rel, text in PLUGIN.items()})
    plugin.commit("Plugin", when=datetime(2026, 3, 1, tzinfo=UTC))
    settings = build_settings(
        repos=(str(tmp / "up"),), downstream=("plugin",), day="2026-03-02", tz="UTC", lang=lang,
        out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp, no_llm=True,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    return Store.open(settings.db_path)


@pytest.mark.parametrize(
    ("lang", "breaks_line", "colon"),
    [("en", "commits break your code", ": "), ("zh", "个提交会破坏你的代码", "：")],
)
def test_breaking_commits_come_first_marked_and_counted_and_each_line_says_why(
    tmp_path: Path, hooks: WebhookServer, lang: str, breaks_line: str, colon: str
) -> None:
    store = _downstream_day(tmp_path, lang)
    twin = _twin(tmp_path, "2026-03-02", lang)
    (repo,) = twin["repos"]
    broken = {
        i["sha"] for p in repo["downstream"]["projects"] for i in p["impacts"]
        if i["kind"] == "breaks"
    }  # fmt: skip
    commits = {c["sha"]: c for c in repo["commits"]}
    high = [s for s, c in commits.items() if c["analysis"]["importance"] == "high"]
    assert len(broken) >= 2 and set(high) - broken  # some 🔴 break nothing of the plugin
    with store:
        outcomes = _deliver(store, [_wecom("group")], [date(2026, 3, 2)], lang)
    assert [o.status for o in outcomes] == ["sent"]
    (text,) = _wecom_texts(hooks)
    lines = text.splitlines()
    assert lines[1] == f"⚠️ {len(broken)} {breaks_line}"  # counted, before the 🔴 count
    listed = [ln for ln in lines if ln.startswith(("⚠️ 🔴", "⚠️ 🟡", "⚠️ 🟢", "🔴"))]
    marked = [ln for ln in listed if ln.startswith("⚠️")]
    assert len(marked) == len(broken) and listed[: len(marked)] == marked  # first
    assert len(listed) == len(broken | set(high))
    for sha in broken | set(high):
        c = commits[sha]
        (line,) = [ln for ln in listed if _shown(c["title"]) in ln]  # no web links here
        reason = why_listed(c["analysis"]["reasons"], lang)
        assert not reason.startswith(("Type", "类型")), reason
        assert line.endswith(colon + _shown(reason)), line
        assert line.startswith("⚠️ ") == (sha in broken)


def test_slack_lists_the_reason_escaped_for_slack(
    tmp_path: Path, hooks: WebhookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = GitFixture.init(tmp_path / "up")
    repo.write_many({"pkg/__init__.py": "", "pkg/api.py": "def run(a):\n    return a\n"})
    repo.commit("Initial import", when="2026-04-08T00:30:00+00:00")
    repo.write("pkg/loader.py", "def load(p):\n    return open(p)\n")
    repo.commit("Fix <path> traversal & a security hole", when="2026-04-08T02:00:00+00:00")
    store = _report(tmp_path, tmp_path / "up", "en", day="2026-04-08")
    slack = _target("slack", {"type": "webhook", "kind": "slack", "url_env": "SLACK_URL"})
    with store:
        _deliver(store, [slack], [date(2026, 4, 8)], "en")
    (got,) = hooks.accepted("slack")
    sections = [b["text"]["text"] for b in got.data["blocks"] if b["type"] == "section"]
    (line,) = [ln for s in sections for ln in s.splitlines() if "traversal" in ln]
    assert "Fix &lt;path&gt; traversal &amp; a security hole" in line
    assert line.endswith(": the title names a severe problem (“security”)"), line


# -- quiet days -------------------------------------------------------------------------------


def _two_days(tmp: Path) -> Path:
    """Commits on 2026-04-08, none on 2026-04-09."""
    repo = GitFixture.init(tmp / "up")
    repo.write("mod.py", "def f():\n    return 1\n")
    repo.commit("Initial import", when="2026-04-07T12:00:00+00:00")
    repo.write("mod.py", "def f():\n    return 2\n")
    repo.commit("Fix a crash in f", when="2026-04-08T12:00:00+00:00")
    return tmp / "up"


def test_a_day_without_commits_is_skipped_and_filed_unless_the_target_asks_for_it(
    tmp_path: Path, hooks: WebhookServer, smtp: SMTPServer, cert: tuple[Path, Path]
) -> None:
    store = _report(tmp_path, _two_days(tmp_path), "zh", since="2026-04-08", until="2026-04-09")
    quiet, loud = _wecom("quiet"), _wecom("loud", send_empty=True)
    mail = _mail("mail", cert[0], smtp)
    days = [date(2026, 4, 8), date(2026, 4, 9)]
    with store:
        outcomes = _deliver(store, [quiet, loud, mail], days, "zh")
        got = {(o.target, o.day.day): o.status for o in outcomes}
        assert got == {
            ("quiet", 8): "sent", ("quiet", 9): "skipped", ("loud", 8): "sent",
            ("loud", 9): "sent", ("mail", 8): "sent", ("mail", 9): "skipped",
        }  # fmt: skip
        assert not any(o.failed for o in outcomes)
        skipped = next(o for o in outcomes if o.status == "skipped")
        assert "send_empty = true" in skipped.line()
        entry = store.ledger_get("quiet", "up", days[1])
        assert entry is not None and entry.status is LedgerStatus.SKIPPED
        assert failed_days(store, [quiet, mail], "up") == set()  # not retried
        again = _deliver(store, [quiet, loud, mail], days, "zh")
        assert {o.status for o in again} == {"unchanged", "skipped"}
    texts = _wecom_texts(hooks)
    assert len(texts) == 3  # quiet: one; loud: both days
    assert sum("共 0 个提交" in t for t in texts) == 1
    assert len(smtp.received) == 1


# -- a stale source -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "en",
            "⚠️ The local clone may be out of date: the newest commit on main is from 2025-06-01",
        ),
        ("zh", "⚠️ 本地克隆可能已过时：main 分支的最新提交在 2025-06-01"),
    ],
)
def test_a_stale_clone_says_so_in_the_digest(
    tmp_path: Path, hooks: WebhookServer, lang: str, said: str
) -> None:
    clone = GitFixture.init(tmp_path / "up")
    clone.write("a.py", "x = 1\n")
    clone.commit("feat: a", when="2025-06-01T09:00:00+00:00")
    store = _report(tmp_path, tmp_path / "up", lang, day="2025-06-10")
    with store:
        _deliver(store, [_wecom("loud", send_empty=True)], [date(2025, 6, 10)], lang)
    (text,) = _wecom_texts(hooks)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("⚠️")]
    assert line.startswith(said) and "git pull" in line


# -- the weekly roll-up -----------------------------------------------------------------------

WEEK = [date(2026, 4, 6) + timedelta(days=i) for i in range(7)]  # Monday to Sunday


def _week_repo(tmp: Path) -> Path:
    """A 🔴 fix on Tuesday and Friday, a 🟢 docs change on Wednesday, a quiet Thursday."""
    repo = GitFixture.init(tmp / "up")
    repo.write_many({"pkg/__init__.py": "", "pkg/api.py": "def run(a):\n    return a\n"})
    repo.commit("Initial import", when="2026-04-05T12:00:00+00:00")
    steps = [
        ("2026-04-07", "Fix a security hole in the loader", {"pkg/loader.py": "X = 1\n"}),
        ("2026-04-08", "docs: typo", {"README.md": "hi\n"}),
        ("2026-04-10", "Fix a crash in run", {"pkg/api.py": "def run(a):\n    return a or 0\n"}),
    ]
    for day, title, files in steps:
        repo.write_many(files)
        repo.commit(title, when=f"{day}T12:00:00+00:00")
    return tmp / "up"


@pytest.mark.parametrize(
    ("lang", "title", "subject"),
    [
        (
            "en",
            "**up · week 2026-04-06 to 2026-04-12**",
            "up weekly report 2026-04-06 – 2026-04-12",
        ),
        ("zh", "**up · 周报 2026-04-06 至 2026-04-12**", "up 周报 2026-04-06 – 2026-04-12"),
    ],
)
def test_a_weekly_target_gets_one_roll_up_of_the_weeks_red_items_exactly_once(
    tmp_path: Path,
    hooks: WebhookServer,
    smtp: SMTPServer,
    cert: tuple[Path, Path],
    lang: str,
    title: str,
    subject: str,
) -> None:
    store = _report(tmp_path, _week_repo(tmp_path), lang, since="2026-04-06", until="2026-04-12")
    weekly = _wecom("weekly", schedule="weekly", weekday="mon")
    mail = _mail("weekly-mail", cert[0], smtp, schedule="weekly")
    daily = _wecom("daily")
    with store:
        for day in WEEK:  # one run a day, as cron does it
            _deliver(store, [weekly, mail, daily], [day], lang)
        again = _deliver(store, [weekly, mail, daily], WEEK, lang)
        entry = store.ledger_get("weekly", "up", WEEK[-1])
        assert entry is not None and entry.status is LedgerStatus.SENT
        assert [e.day for e in store.ledger_entries(target="weekly")] == [WEEK[-1]]
    assert {(o.target, o.status) for o in again if o.target != "daily"} == {
        ("weekly", "unchanged"), ("weekly-mail", "unchanged"),
    }  # fmt: skip
    texts = _wecom_texts(hooks)
    week = [t for t in texts if t.startswith(title)]
    assert len(week) == 1 and len(texts) == 1 + 3  # daily: the 3 days with commits
    twins = {d: _twin(tmp_path, d.isoformat(), lang) for d in WEEK[1:5]}
    reds = [
        (d, c) for d, t in twins.items() for c in t["repos"][0]["commits"]
        if c["analysis"]["importance"] == "high"
    ]  # fmt: skip
    assert len(reds) == 2
    lines = week[0].splitlines()
    for d, c in reds:  # with its day and its reason
        shown = _shown(c["title"])  # a local clone has no commit links
        line = f"🔴 {d:%m-%d} " + (f"[{shown}]({c['url']})" if c["url"] else shown)
        colon = ": " if lang == "en" else "："
        assert line + colon + _shown(why_listed(c["analysis"]["reasons"], lang)) in lines
    (mail_got,) = smtp.received
    assert str(mail_got.message["Subject"]).startswith(subject)
    plain = mail_got.message.get_body(("plain",))
    assert plain is not None and _shown(reds[0][1]["title"]) in plain.get_content()


def test_a_week_without_commits_is_skipped_and_a_failed_roll_up_is_retried(
    tmp_path: Path, hooks: WebhookServer
) -> None:
    repo = GitFixture.init(tmp_path / "up")
    repo.write("a.py", "x = 1\n")
    repo.commit("Initial import", when="2026-04-05T12:00:00+00:00")
    store = _report(tmp_path, tmp_path / "up", "en", since="2026-04-06", until="2026-04-12")
    weekly = _wecom("weekly", schedule="weekly")
    loud = _wecom("weekly-loud", schedule="weekly", send_empty=True, max_retries=0)
    hooks.fail("wecom", 500, '{"errcode": 1}')  # the first roll-up fails
    with store:
        first = _deliver(store, [weekly, loud], WEEK, "en")
        assert {(o.target, o.status) for o in first} == {
            ("weekly", "skipped"), ("weekly-loud", "failed"),
        }  # fmt: skip
        assert failed_days(store, [weekly, loud], "up") == {WEEK[-1]}
        retry = _deliver(store, [weekly, loud], sorted(failed_days(store, [loud], "up")), "en")
    assert {(o.target, o.status) for o in retry} == {
        ("weekly", "skipped"), ("weekly-loud", "sent"),
    }  # fmt: skip
    (text,) = _wecom_texts(hooks)
    assert "0 commits" in text and text.startswith("**up · week 2026-04-06 to 2026-04-12**")


def test_weekday_without_a_weekly_schedule_is_refused() -> None:
    table = {"type": "webhook", "kind": "wecom", "url_env": "WECOM_URL", "weekday": "fri"}
    with pytest.raises(ConfigError, match='needs schedule = "weekly"'):
        registry.create(table, where="publish.0")
