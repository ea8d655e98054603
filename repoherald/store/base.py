"""What the rest of the tree may know about the store: interfaces, not a database.

Code outside :mod:`repoherald.store` is handed a store (or one of these
smaller interfaces) and never opens a database itself, so a second backend
is a new module that satisfies them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Cached:
    """One stored answer of an HTTP API: its ETag, body and ``Link`` header."""

    etag: str
    body: bytes
    link: str


class EtagCache(Protocol):
    """``url -> (etag, body, link)`` for conditional requests; safe to call from threads."""

    def get(self, url: str) -> Cached | None:
        """The answer stored for ``url``, or None."""
        ...

    def put(self, url: str, etag: str, body: bytes, link: str) -> None:
        """Keep (or replace) the answer for ``url``."""
        ...

    def touch(self, url: str) -> None:
        """Mark ``url``'s answer as still in use (a ``304`` confirmed it)."""
        ...
