"""Webhook delivery against a real receiver on 127.0.0.1: signatures, shapes, limits, ledger."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
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
from repoherald.publish.deliver import deliver_days, deliver_one, load_publication
from repoherald.publish.registry import NamedTarget
from repoherald.publish.webhook.publisher import RobotPacer, WebhookOptions, WebhookPublisher
from repoherald.render import twin
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture, run_repoherald
from tests.webhook_server import TOO_FAST, webhook_server

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


COMMIT_URL = "https://github.com/acme/app/commit/"
REPORT_URL = "https://example.com/2026/app/2026-04-01.md"
_MD_LINK = re.compile(r"\]\(([^)]*)\)")
_SLACK_LINK = re.compile(r"<([^<>|]*)\|[^<>]*>")


def _texts(kind: str, data: dict[str, Any]) -> list[str]:
    """Every text a platform shows from one message."""
    if kind == "feishu":
        return [e["text"]["content"] for e in data["card"]["elements"] if e["tag"] == "div"]
    if kind == "dingtalk":
        return [data["markdown"]["text"]]
    if kind == "wecom":
        return [data["markdown"]["content"]]
    texts = []
    for block in data["blocks"]:
        if block["type"] in ("header", "section"):
            texts.append(block["text"]["text"])
        elif block["type"] == "context":
            texts += [e["text"] for e in block["elements"]]
    return texts


def _check_whole_items(kind: str, texts: list[str], high: int) -> None:
    """Kept 🔴 items are whole links; the rest are counted in the "not shown" line."""
    full = "\n".join(texts)
    links = (_SLACK_LINK if kind == "slack" else _MD_LINK).findall(full)
    assert links, kind
    for url in links:  # every link complete: a known commit or the report, nothing cut
        assert url == REPORT_URL or re.fullmatch(re.escape(COMMIT_URL) + "[0-9a-f]{40}", url)
    opener = "🔴 <" if kind == "slack" else "🔴 ["
    kept = [ln for text in texts for ln in text.splitlines() if ln.startswith(opener)]
    whole = re.escape(COMMIT_URL) + "[0-9a-f]{40}" + (r"\|[^<>]*>" if kind == "slack" else r"\)")
    for line in kept:  # the link whole, then the item's reason
        assert re.search(whole + "(：|: ).+$", line), (kind, line)
    assert sum(COMMIT_URL in url for url in links) == len(kept)
    more = re.search(r"另有 (\d+) 条 🔴 未列出", full)
    assert more is not None, kind  # items were left out, and it says how many
    assert len(kept) + int(more.group(1)) == high and len(kept) > 0
    assert "🟡 150" in full and REPORT_URL in full


def test_a_300_commit_day_fits_every_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chinese titles, 150 🔴: every platform's receiver accepts its size and shape."""
    report = _big_report()
    view = build_view(report)
    item = Publication("app", "", report.day, "zh", render_markdown(view), twin.write(view), report)
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
            (got,) = server.accepted(kind)
            _check_whole_items(kind, _texts(kind, got.data), 150)
        assert len(server.accepted("feishu")[0].body) <= 20_000
        wecom = server.accepted("wecom")[0].data["markdown"]["content"]
        assert 3_000 < len(wecom.encode("utf-8")) <= 4096  # filled, in bytes not characters
        blocks = server.accepted("slack")[0].data["blocks"]
        assert [b["type"] for b in blocks[:1] + blocks[-1:]] == ["header", "context"]
        sections = [b for b in blocks if b["type"] == "section"]
        assert len(sections) >= 2  # more than one section's worth of 🔴 lines was sent
        assert blocks[0]["text"]["text"] == "app · 2026-04-01"


def test_the_receiver_refuses_what_breaks_a_platform_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The checks above can fail: oversized or misshapen messages are refused."""
    with webhook_server(SECRET) as server:
        long_section = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}
        long_header = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
        many = [{"type": "divider"}] * 51
        for blocks in ([long_section], [long_header], many):
            problems = server.check("slack", {}, {}, json.dumps({"blocks": blocks}).encode())
            assert problems, blocks[0]
        card = {"msg_type": "interactive", "card": {"elements": [{"tag": "div", "text": {}}]}}
        assert server.check("feishu", {}, {}, json.dumps(card).encode())
        wecom = {"msgtype": "markdown", "markdown": {"content": "长" * 1366}}  # 4,098 bytes
        assert server.check("wecom", {}, {}, json.dumps(wecom).encode())


class FakeClock:
    """Time that passes only when slept: pacing is tested without waiting."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += max(seconds, 0.0)


def _days_on_disk(tmp: Path, n: int) -> dict[date, Path]:
    """``n`` archived days of a small report (the files ``publish`` reads back)."""
    paths = {}
    for i in range(n):
        report = replace(_big_report(3), day=date(2026, 4, 1) + timedelta(days=i))
        view = build_view(report)
        md = tmp / f"{report.day}.md"
        md.write_text(render_markdown(view), encoding="utf-8")
        md.with_suffix(".json").write_text(twin.write(view), encoding="utf-8")
        paths[report.day] = md
    return paths


def _ding_target(pacer: RobotPacer, sleep: Any) -> NamedTarget:
    opts = WebhookOptions(kind="dingtalk", url_env="HOOK_URL", secret_env="HOOK_SECRET")
    publisher = WebhookPublisher(opts, sleep=sleep, pacer=pacer)
    return NamedTarget("ding", registry.Target("webhook", publisher))


def test_dingtalk_is_paced_to_20_a_minute_across_the_days_of_one_publish(
    tmp_path: Path, memory_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _days_on_disk(tmp_path, 25)
    clock = FakeClock()
    with webhook_server(SECRET) as server:
        server.clock = clock
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        monkeypatch.setenv("HOOK_URL", f"{server.url}/dingtalk/{TOKEN}")
        target = _ding_target(RobotPacer(clock, clock.sleep), clock.sleep)
        outcomes = deliver_days(memory_store, [target], "app", paths, "zh")
        assert [o.status for o in outcomes] == ["sent"] * 25, [o.line() for o in outcomes]
        got = server.accepted("dingtalk")
        assert len(got) == 25 and len(server.received) == 25  # none refused as too fast
        times = sorted(r.at for r in got)
        for first, twenty_first in zip(times, times[20:], strict=False):
            assert twenty_first - first >= 60  # never 21 in any 60 s of the clock
        assert clock.now - 1_000.0 >= 60  # it waited instead of being refused

        # Without pacing the receiver refuses the 21st: the check above can fail.
        clock.now += 3_600
        unpaced = RobotPacer(clock, clock.sleep, limit=1_000)
        monkeypatch.setenv("HOOK_URL", f"{server.url}/dingtalk/other")
        opts = WebhookOptions(
            kind="dingtalk", url_env="HOOK_URL", secret_env="HOOK_SECRET", max_retries=0
        )
        publisher = WebhookPublisher(opts, sleep=clock.sleep, pacer=unpaced)
        items = [load_publication("app", d, "zh", p) for d, p in sorted(paths.items())]
        for item in items[:20]:
            publisher.publish(item)
        with pytest.raises(PublishError, match="130101"):
            publisher.publish(items[20])


def test_dingtalk_send_too_fast_is_waited_out_and_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = _big_report(2)
    view = build_view(report)
    item = Publication("app", "", report.day, "zh", render_markdown(view), twin.write(view))
    clock = FakeClock()
    with webhook_server(SECRET) as server:
        server.clock = clock
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        monkeypatch.setenv("HOOK_URL", f"{server.url}/dingtalk/{TOKEN}")
        server.fail("dingtalk", 200, json.dumps(TOO_FAST))
        target = _ding_target(RobotPacer(clock, clock.sleep), clock.sleep)
        delivery = target.target.publisher.publish(item)
        assert delivery.status.value == "sent"
        assert len(server.received) == 2 and len(server.accepted("dingtalk")) == 1
        assert clock.now - 1_000.0 >= 60  # a whole window passed before the retry


def test_without_report_url_the_digest_names_the_archived_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "reports").mkdir()
    ((day, md),) = _days_on_disk(tmp_path / "reports", 1).items()
    monkeypatch.chdir(tmp_path)
    item = load_publication("app", day, "en", md)
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_URL", f"{server.url}/wecom/{TOKEN}")
        opts = WebhookOptions(kind="wecom", url_env="HOOK_URL")
        WebhookPublisher(opts).publish(item)
        text = server.accepted("wecom")[0].data["markdown"]["content"]
    assert f"`reports/{day}.md`" in text and str(tmp_path) not in text


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
    item = Publication("app", "", report.day, "en", render_markdown(view), twin.write(view))
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
    item = Publication("app", "", report.day, "zh", render_markdown(view), twin.write(view))
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
