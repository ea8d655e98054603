"""Cached rows: a checksum on write, a check and a decode on read.

A cached row is trusted only if it is exactly what repoherald wrote. Bit rot,
a hand edit or a row written by a newer version (an enum value this version
does not know) must not change a report silently; such a row is a cache
miss: the commit is analysed again and the row rewritten.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from repoherald.redact import redact

log = logging.getLogger("repoherald")

T = TypeVar("T")


def checksum(key: Sequence[str], data: bytes) -> str:
    """The checksum of one cached row: its key and its JSON bytes.

    The key is included so a row copied under another SHA is caught too.
    Migration 3 fills this in for rows written before it existed, so the
    function must never change; a new scheme would need a new column.
    """
    h = hashlib.blake2b(digest_size=16)
    for part in key:
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    h.update(b"\x1e")
    h.update(data)
    return h.hexdigest()


def encode(key: Sequence[str], payload: Any) -> tuple[str, str]:
    """The JSON text to store for ``payload`` and its checksum."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text, checksum(key, text.encode("utf-8"))


class Unreadable(Exception):
    """A cached row that failed its checksum or could not be decoded."""


def decode(
    key: Sequence[str], data: bytes | None, stored: str | None, build: Callable[[Any], T]
) -> T:
    """Rebuild a cached object, or raise :class:`Unreadable` saying why."""
    if data is None or stored is None:
        raise Unreadable("no checksum")
    if checksum(key, data) != stored:
        raise Unreadable("checksum mismatch")
    try:
        return build(json.loads(data.decode("utf-8")))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        # ValueError covers bad UTF-8, bad JSON and unknown enum values.
        raise Unreadable(f"{type(exc).__name__}: {exc}") from None


@dataclass
class Misses:
    """Unreadable rows met during one read, reported as one log line."""

    rows: list[str] = field(default_factory=list)

    def add(self, table: str, key: Sequence[str], exc: Unreadable) -> None:
        self.rows.append(f"{table} {key[0][:12]}: {exc}")

    def report(self) -> None:
        if not self.rows:
            return
        log.warning(
            "%s",
            redact(
                f"the store had {len(self.rows)} unreadable cached row(s), treated as cache"
                f" misses and analysed again (first: {self.rows[0]})"
            ),
        )
