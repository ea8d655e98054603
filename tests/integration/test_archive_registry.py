"""``run`` writes its archive through the publisher registry, like every other target."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from repoherald.config import build_settings
from repoherald.errors import ConfigError
from repoherald.pipeline import run
from repoherald.publish import registry
from repoherald.publish.archive.publisher import ArchiveOptions, ArchivePublisher
from repoherald.publish.base import Delivery, Publication, PublisherOptions
from tests.integration.test_archive_pipeline import DAY, make_repo


class CountingArchive(ArchivePublisher):
    """The archive, counting what it is given: proof that ``run`` took it from the registry."""

    written: ClassVar[list[str]] = []

    def publish(self, item: Publication, landed: Callable[[], None] | None = None) -> Delivery:
        CountingArchive.written.append(f"{item.name} {item.day}")
        return super().publish(item, landed)


class NotAnArchive:
    """A plugin that claims the ``archive`` type but writes no archive."""

    type: ClassVar[str] = "archive"
    Options: ClassVar[type[PublisherOptions]] = ArchiveOptions

    def __init__(self, options: ArchiveOptions) -> None:
        self.options = options

    @classmethod
    def env_vars(cls, options: Any) -> tuple[str, ...]:
        return ()

    def publish(self, item: Publication) -> Delivery:
        raise AssertionError("never called: run refuses this publisher before any work")


@pytest.fixture
def archive_type() -> Iterator[Callable[[type[Any]], None]]:
    yield lambda cls: registry.register(cls)
    registry._REGISTERED.pop("archive", None)


def _settings(tmp_path: Path) -> Any:
    make_repo(tmp_path / "proj")
    return build_settings(
        repos=(str(tmp_path / "proj"),), day=DAY, tz="UTC", out=str(tmp_path / "out"),
        home=str(tmp_path / "home"), cwd=tmp_path,
    )  # fmt: skip


def test_run_writes_with_the_publisher_registered_as_archive(
    tmp_path: Path, archive_type: Callable[[type[Any]], None]
) -> None:
    archive_type(CountingArchive)
    CountingArchive.written.clear()
    result = run(_settings(tmp_path))
    assert result.ok, result.failures
    assert CountingArchive.written == [f"proj {DAY}"]
    assert (tmp_path / f"out/2025/proj/{DAY}.md").is_file()


def test_an_archive_type_that_writes_no_archive_is_a_config_error(
    tmp_path: Path, archive_type: Callable[[type[Any]], None]
) -> None:
    archive_type(NotAnArchive)
    with pytest.raises(ConfigError, match="remove the plugin that registers that type"):
        run(_settings(tmp_path))
    assert not (tmp_path / "out").exists()
