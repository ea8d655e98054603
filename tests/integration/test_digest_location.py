"""Where a chat digest says the report is, when no ``report_url`` links it.

The path must read as the archive's own (``reports/2026/app/<day>.md``),
whatever folder the archive sits in on this machine: an absolute path would
put ``/home/<user>/…`` into a group chat.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repoherald.publish import registry
from repoherald.publish.deliver import deliver_days, load_publication
from repoherald.publish.registry import NamedTarget
from repoherald.publish.webhook.publisher import WebhookOptions, WebhookPublisher
from repoherald.store.db import SqliteStore as Store
from tests.integration.test_webhook_delivery import TOKEN, _days_on_disk
from tests.webhook_server import webhook_server


def test_the_digest_names_the_report_inside_the_archive_not_the_machine(
    tmp_path: Path, memory_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "home" / "alice" / "reports"
    (root / "2026" / "app").mkdir(parents=True)
    paths = _days_on_disk(root / "2026" / "app", 1)
    (day,) = paths
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # the archive is outside the working directory
    with webhook_server("") as server:
        monkeypatch.setenv("HOOK_URL", f"{server.url}/wecom/{TOKEN}")
        publisher = WebhookPublisher(WebhookOptions(kind="wecom", url_env="HOOK_URL"))
        target = NamedTarget("group", registry.Target("webhook", publisher))
        outcomes = deliver_days(memory_store, [target], "app", paths, "zh", archive=root)
        text = server.accepted("wecom")[0].data["markdown"]["content"]
    assert [o.status for o in outcomes] == ["sent"]
    assert f"`reports/2026/app/{day}.md`" in text
    assert "alice" not in text and str(tmp_path) not in text


def test_outside_the_archive_and_the_working_directory_only_the_file_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "home" / "alice").mkdir(parents=True)
    ((day, md),) = _days_on_disk(tmp_path / "home" / "alice", 1).items()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert load_publication("app", day, "zh", md).location == f"{day}.md"
    other = tmp_path / "elsewhere"
    assert load_publication("app", day, "zh", md, archive=other).location == f"{day}.md"
