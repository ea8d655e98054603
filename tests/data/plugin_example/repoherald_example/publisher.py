"""``[[publish]] type = "example"``: one line per delivered report, appended to a file."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from repoherald import Delivery, Publication, PublishError
from repoherald.publish.base import PublisherOptions, Status


class ExampleOptions(PublisherOptions):
    """The keys of an ``example`` table besides ``type`` and ``repos``."""

    path: Path
    prefix: str = "report"


class ExamplePublisher:
    """Appends ``<prefix> <name> <day> <lang> <bytes>`` to ``path``."""

    type: ClassVar[str] = "example"
    Options: ClassVar[type[ExampleOptions]] = ExampleOptions

    def __init__(self, options: ExampleOptions) -> None:
        self.options = options

    @classmethod
    def env_vars(cls, options: ExampleOptions) -> tuple[str, ...]:
        return ()

    def publish(self, item: Publication) -> Delivery:
        line = f"{self.options.prefix} {item.name} {item.day} {item.lang} {len(item.markdown)}\n"
        try:
            with self.options.path.open("a", encoding="utf-8") as f:
                f.write(line)
        except OSError as exc:
            raise PublishError(f"example: cannot write {self.options.path}: {exc}") from None
        return Delivery(Status.SENT, str(self.options.path), item.content_hash())
