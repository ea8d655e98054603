"""``--dry-run``: what a delivery would do, said without sending or writing anything remote.

A publisher may say it itself with ``describe(items) -> (what, size in
bytes)`` (the GitHub issue names the issue and its comments, the e-mail its
recipients); otherwise the target's type and the size of what would be sent
are said. Nothing here reads a token or opens a connection: a dry run must
work before any secret is exported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from repoherald.publish.base import Publication
from repoherald.publish.registry import NamedTarget


def preview(target: NamedTarget, items: Sequence[Publication]) -> tuple[str, int]:
    """What delivering ``items`` (one message) to ``target`` would do, and its size in bytes.

    Raises :class:`~repoherald.errors.PublishError` when the message could not be built.
    """
    publisher: Any = target.target.publisher
    describe = getattr(publisher, "describe", None)
    if describe is not None:
        what, size = describe(items)
        return str(what), int(size)
    if len(items) > 1:
        size = len(publisher.message_bytes(items))
        return f"would send to {target.target.type} (one message for {len(items)} report(s))", size
    (item,) = items
    kind = getattr(getattr(publisher, "options", None), "kind", None)
    where = f"{target.target.type}" + (f" {kind}" if kind else "")
    size = len(publisher.payload(item)[0]) if hasattr(publisher, "payload") else 0
    size = size or len(item.markdown.encode("utf-8")) + len(item.json.encode("utf-8"))
    return f"would send to {where}", size
