"""Webhooks against a hostile receiver on 127.0.0.1: bounded time and memory, 2xx plus the
platform's own rule as the only success, and no part of the URL's secret in any output.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.errors import PublishError
from repoherald.models import DayReport, RepoSection
from repoherald.publish import registry
from repoherald.publish.base import Publication
from repoherald.publish.deliver import deliver_one
from repoherald.publish.registry import NamedTarget
from repoherald.publish.webhook.publisher import WebhookOptions, WebhookPublisher, platform_verdict
from repoherald.redact import _forget_all
from repoherald.render import twin
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from repoherald.store.db import SqliteStore as Store
from tests.webhook_server import WebhookServer, webhook_server

SLACK_SECRET = "Zq8xW3vK9mN2pL5rT7yU1aB4"
TZ = ZoneInfo("UTC")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[WebhookServer]:
    _forget_all()
    with webhook_server("unused") as s:
        yield s
    _forget_all()


def item() -> Publication:
    """A quiet day's report, rendered as the pipeline renders it."""
    day = date(2026, 4, 1)
    report = DayReport(
        day=day,
        tz_name="UTC",
        start=datetime(2026, 4, 1, tzinfo=TZ),
        end=datetime(2026, 4, 2, tzinfo=TZ),
        lang="en",
        sections=(RepoSection("acme/app", "main", "https://github.com/acme/app", ()),),
        analysers=(RuleAnalyser.name,),
        generated_at=datetime(2026, 4, 2, tzinfo=UTC),
        version="9.9",
    )
    view = build_view(report)
    return Publication("app", "", day, "en", render_markdown(view), twin.write(view))


def publisher(
    server: WebhookServer, kind: str, monkeypatch: pytest.MonkeyPatch, **kw: object
) -> WebhookPublisher:
    monkeypatch.setenv("HOOK_URL", f"{server.url}/{kind}/tok-9f8e7d6c5b4a")
    opts = WebhookOptions.model_validate(
        {"kind": kind, "url_env": "HOOK_URL", "max_retries": 0, **kw}
    )
    return WebhookPublisher(opts, sleep=lambda s: None)


def refusal(server: WebhookServer, kind: str, monkeypatch: pytest.MonkeyPatch, **kw: object) -> str:
    with pytest.raises(PublishError) as caught:
        publisher(server, kind, monkeypatch, **kw).publish(item())
    text = str(caught.value)
    assert text.startswith(f"webhook {kind} ($HOOK_URL): ") and "\n" not in text
    assert "tok-9f8e7d6c5b4a" not in text
    return text


def test_a_dripping_receiver_fails_at_the_deadline(
    server: WebhookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.hostile("wecom", "drip", 0.5)
    text = refusal(server, "wecom", monkeypatch, timeout=1.5)
    # The message went out: a receiver that never finishes its answer may have it.
    assert "took longer than 1.5 s" in text and "no answer came back" in text


@pytest.mark.parametrize(("mode", "said"), [("bomb", "expands to more"), ("huge", "larger than")])
def test_an_answer_too_large_is_refused_at_the_cap(
    server: WebhookServer, monkeypatch: pytest.MonkeyPatch, mode: str, said: str
) -> None:
    server.hostile("json", mode, 1 << 30)
    text = refusal(server, "json", monkeypatch)
    assert f"{said} than 1 MB, the limit" in text or f"{said} 1 MB" in text


def test_a_307_is_not_a_delivery_and_is_not_followed(
    server: WebhookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.hostile("json", "redirect")
    assert "answered HTTP 307, a redirect" in refusal(server, "json", monkeypatch)
    assert [r.kind for r in server.received] == ["json"]


@pytest.mark.parametrize(
    ("kind", "body", "verdict"),
    [
        ("slack", b"ok", None),
        ("slack", b"invalid_payload", "answered 'invalid_payload', not ok"),
        ("slack", b"", "answered '', not ok"),
        ("feishu", b'{"code": 0, "msg": "success"}', None),
        ("feishu", b'{"StatusCode": 0, "StatusMessage": "success"}', None),
        ("feishu", b'{"code": 19021, "msg": "sign match fail"}', "code 19021: sign match fail"),
        ("feishu", b"{}", "answered without code or StatusCode"),
        ("dingtalk", b'{"errcode": 0, "errmsg": "ok"}', None),
        ("dingtalk", b'{"errmsg": "ok"}', "answered without errcode"),
        ("wecom", b'{"errcode": "0"}', "code 0: "),
        ("wecom", b"[" * 200_000, "answered something that is not JSON"),
        ("json", b"anything at all", None),
    ],
)
def test_each_platform_has_its_own_success_rule(
    kind: str, body: bytes, verdict: str | None
) -> None:
    assert platform_verdict(kind, body) == verdict


def test_a_200_without_the_platforms_answer_is_not_a_delivery(
    server: WebhookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.fail("dingtalk", 200, "{}")
    assert "answered without errcode" in refusal(server, "dingtalk", monkeypatch)


def test_a_400_echoing_the_webhook_path_leaks_no_secret_to_the_error_or_the_store(
    server: WebhookServer, monkeypatch: pytest.MonkeyPatch, memory_store: Store
) -> None:
    url = f"{server.url}/slack/services/T0001/B0002/{SLACK_SECRET}"
    monkeypatch.setenv("HOOK_URL", url)
    server.hostile("slack", "echo")
    table = {"type": "webhook", "kind": "slack", "url_env": "HOOK_URL", "max_retries": 0}
    target = NamedTarget("chat", registry.create(table))
    outcome = deliver_one(memory_store, target, item(), force=False, dry_run=False)
    assert outcome.status == "failed" and "HTTP 400" in outcome.line()
    entry = memory_store.ledger_get("chat", "app", date(2026, 4, 1))
    assert entry is not None and "invalid_token" in entry.last_error
    dump = "\n".join(memory_store.conn.iterdump())
    for text in (outcome.line(), entry.last_error, dump):
        assert SLACK_SECRET not in text and "T0001/B0002" not in text


@pytest.mark.parametrize(("value", "slept"), [("3600", 60.0), ("inf", 2.0), ("1e300", 2.0)])
def test_a_429_retry_after_is_capped_or_replaced_by_the_backoff(
    server: WebhookServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    value: str,
    slept: float,
) -> None:
    server.retry_after = value
    server.fail("wecom", 429, '{"errcode": 45009, "errmsg": "api freq out of limit"}')
    sleeps: list[float] = []
    monkeypatch.setenv("HOOK_URL", f"{server.url}/wecom/tok-9f8e7d6c5b4a")
    opts = WebhookOptions(kind="wecom", url_env="HOOK_URL", max_retries=1, retry_delay=2.0)
    WebhookPublisher(opts, sleep=sleeps.append).publish(item())
    assert sleeps == [slept] and len(server.accepted("wecom")) == 1
    if value == "3600":
        assert "asked to wait 3600 s (Retry-After); waiting 60 s, the cap" in caplog.text
