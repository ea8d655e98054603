"""The publisher registry: a dict by ``type``, options validated from ``[[publish]]`` tables."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field

from repoherald.errors import ConfigError, PublishError
from repoherald.models import DayReport
from repoherald.publish import registry
from repoherald.publish.archive.publisher import ArchiveOptions, ArchivePublisher
from repoherald.publish.base import (
    Delivery,
    Publication,
    Publisher,
    PublisherOptions,
    Status,
    content_hash,
    deliver,
    join_identities,
    same_identity,
    source_identity,
)
from repoherald.render.markdown import stamp_line

DAY = date(2026, 8, 20)


class RecordingOptions(PublisherOptions):
    channel: str
    token_env: str = Field(default="RH_TEST_RECORDING_TOKEN")
    fail: bool = False


class RecordingPublisher:
    """A third-party publisher: it registers exactly like the built-in ones."""

    type: ClassVar[str] = "recording"
    Options: ClassVar[type[PublisherOptions]] = RecordingOptions

    def __init__(self, options: RecordingOptions) -> None:
        self.options = options
        self.received: list[Publication] = []

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        return (options.token_env,)

    def publish(self, item: Publication) -> Delivery:
        if self.options.fail:
            raise PublishError(f"{self.options.channel} refused the message: check the channel")
        self.received.append(item)
        return Delivery(Status.SENT, f"msg-{len(self.received)}", item.content_hash())


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("RH_TEST_RECORDING_TOKEN", "tok-123456")
    registry.register(RecordingPublisher)
    yield
    registry._REGISTERED.pop("recording", None)


def publication(markdown: str = "# r\n", json_text: str = '{"repos":[]}\n') -> Publication:
    now = datetime(2026, 8, 21, 2, tzinfo=UTC)
    report = DayReport(DAY, "UTC", now, now, "zh", (), ("rules/1",), now, "0")
    return Publication("proj", "/src/proj", DAY, "zh", markdown, json_text, report)


def test_archive_is_registered_like_any_publisher() -> None:
    assert "archive" in registry.known_types()
    assert registry.get("archive") is ArchivePublisher
    assert isinstance(ArchivePublisher(ArchiveOptions(out=Path("x"))), Publisher)


def test_unknown_type_lists_the_known_ones(recording: None) -> None:
    with pytest.raises(ConfigError) as err:
        registry.get("feishu-typo")
    assert str(err.value) == (
        "unknown publisher type 'feishu-typo': known types are archive, email, github_issue,"
        " recording, webhook"
    )
    with pytest.raises(ConfigError, match=r"publish\.2: set `type`"):
        registry.create({"channel": "x"}, where="publish.2")


def test_a_third_party_publisher_is_created_from_its_table(recording: None) -> None:
    target = registry.create({"type": "recording", "channel": "team", "repos": ["vllm"]})
    assert target.type == "recording" and target.repos == ("vllm",)
    publisher = target.publisher
    assert isinstance(publisher, RecordingPublisher)
    delivery = deliver(publisher, publication())
    assert delivery.status is Status.SENT and delivery.remote_id == "msg-1"
    assert publisher.received[0].name == "proj"


def test_unknown_option_and_bad_values_are_config_errors(recording: None) -> None:
    with pytest.raises(ConfigError) as err:
        registry.create({"type": "recording", "channel": "x", "chanel": "y"}, where="publish.0")
    assert err.value.exit_code == 2
    assert str(err.value).startswith("publish.0 (recording): chanel: Extra inputs")
    with pytest.raises(ConfigError, match="channel: Field required"):
        registry.create({"type": "recording"})
    with pytest.raises(ConfigError, match="`repos` must be a list"):
        registry.create({"type": "recording", "channel": "x", "repos": "vllm"})


def test_a_missing_env_var_is_named_not_its_value(
    recording: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RH_TEST_RECORDING_TOKEN")
    with pytest.raises(ConfigError) as err:
        registry.create({"type": "recording", "channel": "x"})
    assert "environment variable RH_TEST_RECORDING_TOKEN is not set" in str(err.value)


def test_archive_template_is_checked_with_the_table() -> None:
    with pytest.raises(ConfigError) as err:
        registry.create({"type": "archive", "out": "reports", "path": "{name.__class__}/{date}"})
    assert "path: the path template field {name.__class__} is not allowed" in str(err.value)


def test_deliver_turns_a_publish_error_into_a_failed_delivery(recording: None) -> None:
    target = registry.create({"type": "recording", "channel": "ops", "fail": True})
    delivery = deliver(target.publisher, publication())
    assert delivery.status is Status.FAILED
    assert delivery.message == "ops refused the message: check the channel"
    assert delivery.content_hash == publication().content_hash()


def _pair(lang: str, at: str, body: str = "body", repos: str = "[]") -> tuple[str, str]:
    """A Markdown page and its twin that agree on when they were generated (as rendered)."""
    md = f"# t\n\n> x\n{stamp_line(lang, datetime.fromisoformat(at))}\n\n{body}\n"
    js = (
        f'{{"schema_version":1,"date":"2026-08-20","lang":"{lang}",'
        f'"generated_at":"{at}","repos":{repos}}}\n'
    )
    return md, js


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_content_hash_ignores_only_when_it_was_generated(lang: str) -> None:
    md, js = _pair(lang, "2026-08-21T02:00:00+08:00")
    later = _pair(lang, "2026-08-21T09:30:00+08:00")
    assert md != later[0] and js != later[1]
    assert content_hash(md, js) == content_hash(*later)
    assert content_hash(md, js) != content_hash(*_pair(lang, "2026-08-21T02:00:00+08:00", "b!"))
    changed = _pair(lang, "2026-08-21T02:00:00+08:00", repos='[{"name":"a"}]')
    assert content_hash(md, js) != content_hash(*changed)


def test_content_hash_reads_only_the_head_of_a_large_twin() -> None:
    """The twin's head is cut mid-character (3-byte characters run past 4096 bytes)."""
    repos = '[{"name":"' + "字" * 3000 + '"}]'
    first = _pair("zh", "2026-08-21T02:00:00+08:00", repos=repos)
    later = _pair("zh", "2026-08-21T09:30:00+08:00", repos=repos)
    assert len(first[1].encode()) > 4096
    assert content_hash(*first) == content_hash(*later)


def test_identities_drop_credentials_and_compare_by_what_they_name() -> None:
    raw = "https://user:ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/Org/Repo.git/"
    ident = source_identity(raw)
    assert "ghp_" not in ident and "user" not in ident
    assert ident == "https://github.com/Org/Repo"
    assert same_identity(ident, "ssh://git@GitHub.com/Org/Repo.git")
    assert same_identity(ident, source_identity("git@github.com:Org/Repo.git"))
    assert not same_identity(ident, "https://github.com/Org/Other")
    assert not same_identity("/srv/a/repo", "/srv/b/repo")
    both = join_identities(["/srv/a", "https://x.org/b"])
    assert same_identity(both, join_identities(["https://x.org/b.git", "/srv/a"]))
    assert not same_identity(both, "/srv/a")
