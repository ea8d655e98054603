"""An issue GitHub opens with a number that is not a number: one failed delivery, no traceback."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from repoherald.publish.deliver import deliver_one
from repoherald.store.db import SqliteStore as Store
from tests.github_server import FakeGitHub
from tests.integration.test_github_issue import REPO, TOKEN, _item, _target


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GH_ISSUE_TOKEN", TOKEN)
    with FakeGitHub(token=TOKEN) as server:
        server.issues.add_repo(REPO)
        yield server


def _number(text: str) -> Callable[[Any], Any]:
    def edit(obj: Any) -> Any:
        return json.dumps({**obj, "number": 0}).replace('"number": 0', f'"number": {text}').encode()

    return edit


@pytest.mark.parametrize("number", ['"abc"', "1e400", "-1", "true"])
def test_an_opened_issue_without_a_real_number_is_one_failed_delivery(
    fake: FakeGitHub, memory_store: Store, number: str
) -> None:
    fake.fault(rf"/repos/{REPO}/issues$", "edit", edit=_number(number))
    outcome = deliver_one(memory_store, _target(fake), _item(), force=False, dry_run=False)
    assert outcome.failed
    assert "not a number" in outcome.message and "\n" not in outcome.message
    assert TOKEN not in outcome.message
