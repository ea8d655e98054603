"""Webhook delivery against a real receiver on 127.0.0.1: signatures, shapes, limits, ledger."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from repoherald.analysis.facts import AreaRules, FactsExtractor
from repoherald.analysis.rules import RuleAnalyser
from repoherald.config import NamedTarget
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
from repoherald.publish.deliver import deliver_one
from repoherald.publish.webhook import WebhookOptions, WebhookPublisher
from repoherald.render.json_twin import render_json
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from repoherald.store.db import Store
from tests.gitfixture import GitFixture, run_repoherald
from tests.webhook_server import webhook_server

SECRET = "s3cr3t-signing-key-XYZ"
TOKEN = "tok-9f8e7d6c5b4a"
KINDS = ("feishu", "dingtalk", "wecom", "slack", "json")
TZ = ZoneInfo("Asia/Shanghai")


def _big_report(n: int = 300) -> DayReport:
    extractor = FactsExtractor(AreaRules(), lambda oid: None)
    rules = RuleAnalyser()
    entries = []
    for i in range(n):
        who = Person("开发者 <dev@example.com>", "dev@example.com")
        ts = int(datetime(2026, 4, 1, 3, tzinfo=UTC).timestamp()) + i
        title = f"[Bugfix] 修复调度器在高并发下的崩溃问题 第{i}个 & <tag> | `code` " + "长" * 40
        commit = Commit(f"{i:040x}", ("f" * 40,), who, ts, 480, who, ts, 480, title)
        facts = extractor.extract(commit, [FileChange("src/a.py", FileStatus.MODIFIED, 3, 1)])
        imp = Importance.HIGH if i % 2 else Importance.MEDIUM
        entries.append(Entry(commit, facts, replace(rules.analyse(commit, facts), importance=imp)))
    return DayReport(
        day=date(2026, 4, 1),
        tz_name="Asia/Shanghai",
        start=datetime(2026, 4, 1, tzinfo=TZ),
        end=datetime(2026, 4, 2, tzinfo=TZ),
        lang="zh",
        sections=(RepoSection("acme/app", "main", "https://github.com/acme/app", tuple(entries)),),
        analysers=(RuleAnalyser.name,),
        generated_at=datetime(2026, 4, 2, tzinfo=UTC),
        version="9.9",
    )


def test_a_300_commit_day_fits_every_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _big_report()
    view = build_view(report)
    item = Publication(
        "app", "", report.day, "zh", render_markdown(view), render_json(view), report
    )
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        for kind in KINDS:
            monkeypatch.setenv("HOOK_URL", f"{server.url}/{kind}/{TOKEN}")
            opts = WebhookOptions(
                kind=kind,
                url_env="HOOK_URL",
                secret_env="HOOK_SECRET",
                report_url="https://example.com/{year}/{name}/{date}.md",
            )
            delivery = WebhookPublisher(opts).publish(item)
            assert delivery.status.value == "sent", delivery.message
            got = server.received[-1]
            assert got.problems == [], (kind, got.problems)
        for kind in ("feishu", "dingtalk", "wecom", "slack"):
            text = server.accepted(kind)[0].body.decode("utf-8")
            assert "150" in text  # the 🟡 count (and 🔴 150 in the counts)
            assert "https://example.com/2026/app/2026-04-01.md" in text
        wecom = server.accepted("wecom")[0].data["markdown"]["content"]
        assert "未列出" in wecom  # items were left out, and it says so
        for line in wecom.splitlines():
            if line.startswith("🔴 ["):  # every kept item has a whole link
                assert line.endswith(")") and "](https://github.com/acme/app/commit/" in line


def _workspace(tmp: Path, url: str) -> Path:
    fx = GitFixture.init(tmp / "alpha")
    fx.write("mod.py", "def f():\n    return 1\n")
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    when = datetime.combine(yesterday, datetime.min.time(), UTC) + timedelta(hours=12)
    fx.commit("Fix a crash in the scheduler", when=when)
    tables = "".join(
        f'\n[[publish]]\ntype = "webhook"\nname = "{k}-group"\nkind = "{k}"\n'
        f'url_env = "HOOK_URL_{k.upper()}"\nsecret_env = "HOOK_SECRET"\nretry_delay = 0\n'
        for k in KINDS
    )
    (tmp / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\n\n[[repos]]\nsource = "alpha"\n' + tables, encoding="utf-8"
    )
    return tmp


def _run(ws: Path, *args: str) -> tuple[int, str, str]:
    proc = run_repoherald(*args, "--home", str(ws / "home"), cwd=ws)
    return proc.returncode, proc.stdout, proc.stderr


def test_run_delivers_once_contains_a_failure_and_retries_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        for k in KINDS:
            monkeypatch.setenv(
                f"HOOK_URL_{k.upper()}", f"{server.url}/{k}/{TOKEN}?access_token={TOKEN}"
            )
        ws = _workspace(tmp_path, server.url)
        server.fail("feishu", 500, "oops")  # transient: retried, then delivered
        server.fail("wecom", 200, "<html>login</html>", "text/html")
        server.fail("dingtalk", 200, '{"errcode": 310000, "errmsg": "keywords not in content"}')
        code, out, err = _run(ws, "run")
        assert code == 1, err
        assert "wecom-group" in err and "HTML" in err
        assert "dingtalk-group" in err and "310000" in err
        for kind in ("feishu", "slack", "json"):
            assert len(server.accepted(kind)) == 1, kind
        home = ws / "home"
        stored = sqlite3.connect(home / "repoherald.db").iterdump()
        dump = "\n".join(stored)
        archive = "".join(p.read_text() for p in (ws / "reports").rglob("*.*"))
        for text in (out, err, dump, archive):
            assert TOKEN not in text and SECRET not in text and "127.0.0.1" not in text

        # The next run retries only what failed; what was sent is not sent again.
        before = {k: len(server.accepted(k)) for k in KINDS}
        code, out, err = _run(ws, "run")
        assert code == 0, err
        after = {k: len(server.accepted(k)) for k in KINDS}
        assert after == {**before, "wecom": 1, "dingtalk": 1}

        # An explicit re-run of the same day: unchanged, nothing is sent.
        code, out, err = _run(ws, "run", "--date", "yesterday")
        assert code == 0, err
        assert {k: len(server.accepted(k)) for k in KINDS} == after
        assert "unchanged" in err

        code, out, err = _run(ws, "publish", "--date", "yesterday", "--dry-run", "--force")
        assert code == 0, err
        assert "unchanged" in out
        assert TOKEN not in out + err and "127.0.0.1" not in out + err
        code, out, err = _run(ws, "publish", "--only", "nope")
        assert code == 2 and "--only 'nope' is not a [[publish]] target" in err


def test_ledger_unchanged_changed_force_and_dry_run(
    memory_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _big_report(5)
    view = build_view(report)
    item = Publication("app", "", report.day, "en", render_markdown(view), render_json(view))
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_URL", f"{server.url}/slack/{TOKEN}")
        table = {"type": "webhook", "kind": "slack", "url_env": "HOOK_URL", "retry_delay": 0}
        chat = NamedTarget("chat", registry.create(table))
        server.fail("slack", 429, "slow down")  # Retry-After: 0, then delivered
        assert deliver_one(memory_store, chat, item, force=False, dry_run=False).status == "sent"
        assert len(server.accepted("slack")) == 1
        again = deliver_one(memory_store, chat, item, force=False, dry_run=False)
        assert again.status == "unchanged"
        changed = replace(item, markdown=item.markdown + "\nmore\n")
        outcome = deliver_one(memory_store, chat, changed, force=False, dry_run=False)
        assert outcome.status == "changed" and "--force" in outcome.line()
        assert len(server.accepted("slack")) == 1
        forced = deliver_one(memory_store, chat, changed, force=True, dry_run=False)
        assert forced.status == "sent" and len(server.accepted("slack")) == 2

        fresh = NamedTarget("fresh", registry.create(table))
        dry = deliver_one(memory_store, fresh, item, force=False, dry_run=True)
        assert dry.status == "dry-run" and dry.size > 100
        assert "fresh" in dry.line() and "webhook slack" in dry.line()
        assert TOKEN not in dry.line() and "127.0.0.1" not in dry.line()
        assert len(server.received) == 3  # the 429, the first and the forced message
        assert memory_store.ledger_get("fresh", "app", report.day) is None


def test_a_platform_error_code_is_a_failure_naming_the_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = _big_report(2)
    view = build_view(report)
    item = Publication("app", "", report.day, "zh", render_markdown(view), render_json(view))
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_URL", f"{server.url}/feishu/{TOKEN}")
        monkeypatch.setenv("HOOK_SECRET", "a-different-secret")  # the server will refuse it
        opts = WebhookOptions(kind="feishu", url_env="HOOK_URL", secret_env="HOOK_SECRET")
        with pytest.raises(PublishError) as exc:
            WebhookPublisher(opts).publish(item)
        assert "webhook feishu ($HOOK_URL)" in str(exc.value) and "19021" in str(exc.value)
        assert TOKEN not in str(exc.value)
        monkeypatch.setenv("HOOK_URL", "ftp://example.com/hook")
        with pytest.raises(PublishError, match="is not an http"):
            WebhookPublisher(opts).publish(item)
