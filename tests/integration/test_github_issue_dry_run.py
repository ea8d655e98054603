"""``publish --dry-run`` to a GitHub issue says what it would do, and asks GitHub nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from repoherald.publish.deliver import deliver_one
from repoherald.store.db import SqliteStore as Store
from tests.github_server import FakeGitHub
from tests.integration.test_github_issue import REPO, TOKEN, _item, _send, _target


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GH_ISSUE_TOKEN", TOKEN)
    with FakeGitHub(token=TOKEN) as server:
        server.issues.add_repo(REPO)
        yield server


def test_a_first_dry_run_would_open_or_edit_with_its_comments_and_needs_no_token(
    fake: FakeGitHub, memory_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _target(fake)
    monkeypatch.delenv("GH_ISSUE_TOKEN")  # describing reads no token
    outcome = deliver_one(memory_store, target, _item(220), force=False, dry_run=True)
    line = outcome.line()
    assert outcome.status == "dry-run", line
    assert f"would open or edit the day's issue in {REPO}: body + " in line
    comments = int(line.split("body + ")[1].split(" comment(s)")[0])
    assert comments >= 2 and "of 65,536 characters" in line
    assert outcome.size > 150_000
    assert fake.requests == [] and memory_store.ledger_entries() == []


def test_a_dry_run_after_a_send_names_the_issue_to_edit(
    fake: FakeGitHub, memory_store: Store
) -> None:
    target, item = _target(fake), _item(220)
    _send(memory_store, target, item)
    entry = memory_store.ledger_get("issues", "app", item.day)
    assert entry is not None and entry.remote_id is not None
    sent = json.loads(entry.remote_id)
    fake.clear()
    changed = replace(item, markdown=item.markdown + "\nA late commit.\n")
    outcome = deliver_one(memory_store, target, changed, force=False, dry_run=True)
    line = outcome.line()
    assert f"would edit issue #{sent['issue']} in {REPO}: " in line, line
    assert f"body + {len(sent['comments'])} comment(s)" in line
    assert fake.requests == [] and TOKEN not in line
