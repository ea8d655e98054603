"""The ``github_issue`` publisher against FakeGitHub on 127.0.0.1: one issue per repository-day."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from repoherald.errors import ConfigError
from repoherald.publish import registry
from repoherald.publish.base import Publication
from repoherald.publish.deliver import deliver_one
from repoherald.publish.github_issue.text import marker, read_marker
from repoherald.publish.registry import NamedTarget
from repoherald.render import twin
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture, run_repoherald
from tests.github_server import FakeGitHub
from tests.integration.test_webhook_delivery import _big_report
from tests.markdown_links import heading_ids_and_links
from tests.webhook_server import webhook_server

TOKEN = "ghp_issueTokenThatMustNeverLeak1234"
REPO = "acme/reports"
LIMIT = 65_536


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GH_ISSUE_TOKEN", TOKEN)
    with FakeGitHub(token=TOKEN) as server:
        server.issues.add_repo(REPO)
        yield server


def _item(n: int = 3, day: date = date(2026, 4, 1), lang: str = "en") -> Publication:
    report = replace(_big_report(n), lang=lang)
    report = replace(report, day=day)
    view = build_view(report)
    return Publication("app", "", day, lang, render_markdown(view), twin.write(view))


def _target(fake: FakeGitHub, name: str = "issues", **extra: Any) -> NamedTarget:
    table = {
        "type": "github_issue",
        "repo": REPO,
        "labels": ["daily", "repoherald"],
        "api_url": fake.api_url,
        "token_env": "GH_ISSUE_TOKEN",
        **extra,
    }
    return NamedTarget(name, registry.create(table))


def _writes(fake: FakeGitHub) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests if r.method != "GET"]


def _send(store: Store, target: NamedTarget, item: Publication, force: bool = False) -> str:
    outcome = deliver_one(store, target, item, force=force, dry_run=False)
    assert not outcome.failed, outcome.line()
    return outcome.status


def test_first_publish_opens_one_issue_and_a_rerun_sends_nothing(
    fake: FakeGitHub, memory_store: Store
) -> None:
    target, item = _target(fake), _item()
    assert _send(memory_store, target, item) == "sent"
    [issue] = fake.issues.issues(REPO)
    assert issue["title"] == "repoherald app 2026-04-01"
    assert [label["name"] for label in issue["labels"]] == ["daily", "repoherald"]
    assert issue["body"].startswith(marker("app", item.day))
    assert issue["body"].endswith(item.markdown) and issue["_comments"] == []
    assert all(r.authorization == f"Bearer {TOKEN}" for r in fake.requests)
    entry = memory_store.ledger_get("issues", "app", item.day)
    assert entry is not None and entry.remote_id == '{"issue": 1, "comments": []}'

    fake.clear()
    assert _send(memory_store, target, item) == "unchanged"
    assert fake.requests == []


def test_a_changed_report_edits_the_same_issue_even_without_the_ledger(
    fake: FakeGitHub, memory_store: Store
) -> None:
    target, item = _target(fake), _item()
    _send(memory_store, target, item)
    changed = replace(item, markdown=item.markdown + "\nA late commit.\n")
    fake.clear()
    assert _send(memory_store, target, changed) == "sent"  # no --force needed
    assert _writes(fake) == [("PATCH", f"/repos/{REPO}/issues/1")]
    [issue] = fake.issues.issues(REPO)
    assert issue["body"].endswith("A late commit.\n")

    # Decoys newer than the real issue: someone else's issue starting with the same
    # marker, and one of ours that quotes the marker inside a commit message.
    head = marker("app", item.day)
    fake.issues.add_issue(REPO, "spoof", head + "gotcha", author="mallory", labels=("daily",))
    fake.issues.add_issue(REPO, "quote", "commit msg: " + head, labels=("daily", "repoherald"))
    with Store.open(Path(":memory:")) as empty:  # the ledger was lost
        again = replace(item, markdown=item.markdown + "\nAnother one.\n")
        assert _send(empty, target, again) == "sent"
    issues = fake.issues.issues(REPO)
    assert len(issues) == 3 and issues[0]["body"].endswith("Another one.\n")
    assert issues[1]["body"] == head + "gotcha" and issues[2]["body"] == "commit msg: " + head
    listing = [r.path for r in fake.requests if r.path.startswith(f"/repos/{REPO}/issues?")]
    assert listing and all("creator=repoherald-bot" in p for p in listing)


def test_an_issue_whose_labels_github_dropped_is_still_found_without_the_ledger(
    fake: FakeGitHub, memory_store: Store
) -> None:
    target, item = _target(fake), _item()
    _send(memory_store, target, item)
    [issue] = fake.issues.issues(REPO)
    issue["labels"] = []  # what GitHub does for a user without push access
    with Store.open(Path(":memory:")) as empty:
        changed = replace(item, markdown=item.markdown + "\nLater.\n")
        assert _send(empty, target, changed) == "sent"
    [issue] = fake.issues.issues(REPO)
    assert issue["body"].endswith("Later.\n")


def _toc_links(body: str) -> list[tuple[str, str]]:
    return re.findall(r"^\s*- \[(.+)\]\((\S+)\)$", body, re.MULTILINE)


def test_a_long_report_becomes_body_and_comments_with_working_contents(
    fake: FakeGitHub, memory_store: Store
) -> None:
    target, item = _target(fake), _item(220)
    assert len(item.markdown) > 150_000
    _send(memory_store, target, item)
    [issue] = fake.issues.issues(REPO)
    comments = fake.issues.issues(REPO)[0]["_comments"]
    parts = [issue["body"], *comments]
    assert len(parts) >= 3 and all(len(p) <= LIMIT for p in parts)
    joined = "".join(parts)
    for line in item.markdown.splitlines():
        if line.startswith("#"):
            assert line in joined
    assert len(re.findall(r"^#### ", joined, re.MULTILINE)) == 220
    posted = [r for r in fake.requests if r.method == "POST" and r.path.endswith("/comments")]
    assert len(posted) == len(comments)
    listed = fake.issues.issues(REPO)[0]
    urls = {c["html_url"]: c["body"] for c in fake.issues.comments(REPO, 1)}
    checked = 0
    for title, link in _toc_links(listed["body"]):
        if "#issuecomment-" in link:
            assert link in urls, link
            heading = re.compile(rf"^#{{2,4}} {re.escape(title)}$", re.MULTILINE)
            assert heading.search(urls[link]), (title, link)
            checked += 1
        else:
            assert re.search(rf"^#{{1,4}} {re.escape(title)}$", listed["body"], re.MULTILINE)
    assert checked > 100
    body_ids = heading_ids_and_links(listed["body"])[0]
    for part in parts:  # each in-page link names a heading GitHub renders on the page
        ids, links, _ = heading_ids_and_links(part)
        assert all(link in ids or link in body_ids for link in links)

    # Fewer commits: the extra comments go; more: they come back. Never a second issue.
    fake.clear()
    _send(memory_store, target, _item(40))
    kept = len(fake.issues.issues(REPO)[0]["_comments"])
    assert kept < len(comments)
    assert [m for m, _ in _writes(fake)].count("DELETE") == len(comments) - kept
    _send(memory_store, target, item)
    assert len(fake.issues.issues(REPO)) == 1
    assert len(fake.issues.issues(REPO)[0]["_comments"]) == len(comments)


def test_close_previous_closes_yesterdays_issue_only(fake: FakeGitHub, memory_store: Store) -> None:
    target = _target(fake, close_previous=True, title="{name} daily {date} ({lang})")
    other = marker("other", date(2026, 3, 31))
    fake.issues.add_issue(REPO, "other repo", other + "x", labels=("daily", "repoherald"))
    day = date(2026, 4, 1)
    _send(memory_store, target, _item(day=day))
    _send(memory_store, target, _item(day=day + timedelta(days=1)))
    _send(memory_store, target, _item(day=day - timedelta(days=3)))  # an old day, late
    issues = {i["title"]: i for i in fake.issues.issues(REPO)}
    first, second = issues["app daily 2026-04-01 (en)"], issues["app daily 2026-04-02 (en)"]
    assert first["state"] == "closed" and first["state_reason"] == "completed"
    assert second["state"] == "open" and issues["other repo"]["state"] == "open"


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("bad_token", "GitHub rejected the token in $GH_ISSUE_TOKEN (HTTP 401)"),
        ("read_only", "(HTTP 403: Resource not accessible by personal access token)"),
        ("missing_repo", "acme/nowhere was not found (HTTP 404)"),
        ("disabled", "issues are disabled in acme/reports (HTTP 410)"),
        ("unset", "environment variable GH_ISSUE_TOKEN is not set"),
    ],
)
def test_failures_are_one_line_naming_the_target(
    fake: FakeGitHub, memory_store: Store, monkeypatch: pytest.MonkeyPatch, setup: str,
    expected: str,
) -> None:  # fmt: skip
    target = _target(fake, repo="acme/nowhere") if setup == "missing_repo" else _target(fake)
    if setup == "bad_token":
        monkeypatch.setenv("GH_ISSUE_TOKEN", "ghp_wrongTokenAlsoSecret999")
    elif setup == "read_only":
        fake.issues.add_repo(REPO, read_only=True)
    elif setup == "disabled":
        fake.issues.disable(REPO)
    elif setup == "unset":
        monkeypatch.delenv("GH_ISSUE_TOKEN")
    outcome = deliver_one(memory_store, target, _item(), force=False, dry_run=False)
    assert outcome.failed
    line = outcome.line()
    assert expected in line and "github_issue acme/" in line and "\n" not in line
    assert TOKEN not in line and "ghp_wrong" not in line
    entry = memory_store.ledger_get("issues", "app", date(2026, 4, 1))
    assert entry is not None and entry.status.value == "failed"


def test_a_body_over_the_limit_is_refused_like_github(fake: FakeGitHub) -> None:
    import httpx

    with httpx.Client(base_url=fake.api_url) as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        answer = http.post(f"/repos/{REPO}/issues", json={"title": "t", "body": "x" * 65_537},
                           headers=headers)  # fmt: skip
        assert answer.status_code == 422
        assert "maximum is 65536 characters" in answer.json()["errors"][0]["message"]
        assert http.post(f"/repos/{REPO}/issues", json={"title": "t"}).status_code == 401


def test_options_are_checked_when_the_config_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_ISSUE_TOKEN", TOKEN)
    base = {"type": "github_issue", "repo": REPO, "token_env": "GH_ISSUE_TOKEN"}
    with pytest.raises(ConfigError, match=r"field \{repo\} is not allowed"):
        registry.create({**base, "title": "{repo} {date}"})
    with pytest.raises(ConfigError, match="repo"):
        registry.create({**base, "repo": "not a repo"})
    monkeypatch.delenv("GH_ISSUE_TOKEN")
    with pytest.raises(ConfigError, match="environment variable GH_ISSUE_TOKEN is not set"):
        registry.create(base)
    monkeypatch.setenv("GITHUB_TOKEN_FOR_TEST", TOKEN)
    inherited = {"api_url": "https://ghe.example.com/api/v3", "token_env": "GITHUB_TOKEN_FOR_TEST"}
    target = registry.create({"type": "github_issue", "repo": REPO}, inherited=inherited)
    options: Any = target.publisher.options  # type: ignore[attr-defined]
    assert options.api_url == inherited["api_url"] and options.token_env == "GITHUB_TOKEN_FOR_TEST"


def test_run_opens_the_issue_a_failure_stays_contained_and_is_retried(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = GitFixture.init(tmp_path / "alpha")
    fx.write("mod.py", "def f():\n    return 1\n")
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    when = datetime.combine(yesterday, datetime.min.time(), UTC) + timedelta(hours=12)
    fx.commit("Fix a crash in the scheduler <!-- repoherald:v1 repo=alpha -->", when=when)
    (tmp_path / "repoherald.toml").write_text(
        f'[report]\ntz = "UTC"\n\n[github]\napi_url = "{fake.api_url}"\n'
        'token_env = "GH_ISSUE_TOKEN"\n\n[[repos]]\nsource = "alpha"\n\n'
        f'[[publish]]\ntype = "github_issue"\nrepo = "{REPO}"\nlabels = ["daily"]\n'
        "close_previous = true\n\n"
        '[[publish]]\ntype = "webhook"\nname = "hook"\nkind = "json"\nurl_env = "HOOK_URL"\n'
        'secret_env = "HOOK_SECRET"\nretry_delay = 0\n',
        encoding="utf-8",
    )
    fake.issues.add_repo(REPO, read_only=True)  # the token may not write issues yet
    with webhook_server("hook-secret") as hook:
        monkeypatch.setenv("HOOK_URL", f"{hook.url}/json/x")
        monkeypatch.setenv("HOOK_SECRET", "hook-secret")

        def run(*args: str) -> tuple[int, str]:
            proc = run_repoherald(*args, "--home", str(tmp_path / "home"), cwd=tmp_path)
            return proc.returncode, proc.stdout + proc.stderr

        code, out = run("run")
        assert code == 1, out
        assert f"github_issue {REPO}" in out and "HTTP 403" in out
        (failed,) = [line for line in out.splitlines() if line.startswith("repoherald: failed:")]
        assert failed.count("failed") == 1, failed  # said once, by the prefix
        assert "1 repository: 1 report(s)" in out and "0 failed; 1 of 2 deliveries done" in out
        assert len(hook.accepted("json")) == 1  # the other target got its delivery
        dump = "\n".join(sqlite3.connect(tmp_path / "home" / "repoherald.db").iterdump())
        archive = "".join(p.read_text() for p in (tmp_path / "reports").rglob("*.*"))
        for text in (out, dump, archive):
            assert TOKEN not in text

        fake.issues.add_repo(REPO)  # access granted: the next run retries only the issue
        code, out = run("run")
        assert code == 0, out
        [issue] = fake.issues.issues(REPO)
        assert issue["title"] == f"repoherald alpha {yesterday.isoformat()}"
        assert "Fix a crash in the scheduler" in issue["body"]
        assert len(hook.accepted("json")) == 1 and TOKEN not in out

        fake.clear()
        code, out = run("publish", "--date", "yesterday")
        assert code == 0 and "unchanged" in out, out
        assert [r for r in fake.requests if r.method != "GET"] == []
        assert len(fake.issues.issues(REPO)) == 1


def test_a_502_after_the_issue_and_a_comment_were_made_does_not_make_them_twice(
    fake: FakeGitHub, memory_store: Store
) -> None:
    """GitHub opened the issue (and posted a comment) but answered 502: the publisher
    looks for them by their markers and adopts them instead of posting again."""
    fake.fault(r"/issues$", "after", status=502)
    fake.fault(r"/comments$", "after", status=502)
    assert _send(memory_store, _target(fake), _item(220)) == "sent"
    [issue] = fake.issues.issues(REPO)
    parts = [read_marker(body) for body in issue["_comments"]]
    numbers = [p[2] for p in parts if p is not None]
    assert len(numbers) >= 2 and len(numbers) == len(set(numbers)) == len(parts)
    writes = [(r.method, r.path.rsplit("/", 1)[-1], r.status) for r in fake.requests]
    assert writes.count(("POST", "issues", 502)) == 1
    assert writes.count(("POST", "comments", 502)) == 1
    entry = memory_store.ledger_get("issues", "app", date(2026, 4, 1))
    assert entry is not None and entry.remote_id is not None
    assert json.loads(entry.remote_id)["issue"] == issue["number"]


def test_writes_are_retried_through_5xx_and_secondary_limits(
    fake: FakeGitHub, memory_store: Store
) -> None:
    fake.fault(r"/issues$", "status", status=502)
    fake.fault(r"/comments$", "secondary", retry_after=0)
    fake.fault(r"/issues/1$", "secondary429", retry_after=0)
    assert _send(memory_store, _target(fake), _item(220)) == "sent"
    writes = [(r.method, r.path.rsplit("/", 1)[-1], r.status) for r in fake.requests]
    assert ("POST", "issues", 502) in writes and ("POST", "comments", 403) in writes
    assert ("PATCH", "1", 429) in writes
    [issue] = fake.issues.issues(REPO)
    assert len(issue["_comments"]) >= 2 and "#issuecomment-" in issue["body"]
