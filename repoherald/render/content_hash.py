"""The content hash of a report pair: what the report says, not when it was made.

Two runs of an unchanged day must give the same hash, so a re-run can tell
"nothing new" from "the report changed" (the archive leaves its files
alone, a chat target waits for ``--force``, an issue is not edited). The
only part of a pair that differs between two such runs is the moment it was
generated: the ``generated_at`` member of the twin and the line of the
Markdown that shows it. Both are found from the twin's own data — the
member by its value, the line by rendering that value through the
language's catalogue, exactly as :func:`~repoherald.render.view.build_view`
did — so a report in any language with a catalogue hashes the same on
every run, and no reader has to know the words of any language.

The bytes hashed are those of the pair with those two removed (the line's
text, not its line end), which is what earlier versions hashed for the
languages they knew: ledgers and archives written by them stay "unchanged".
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from repoherald.i18n import CATALOGUES
from repoherald.render import twin
from repoherald.render.markdown import stamp_line

_HEAD = twin.HEAD_BYTES
"""Both stamps sit near the top of their file; only this much is searched for them."""


def _stamps(twin_data: bytes) -> tuple[bytes | None, bytes | None]:
    """The Markdown's "generated" line and the twin's ``generated_at`` member, as bytes.

    None for what a twin does not say (a roll-up has no ``generated_at``; a
    damaged twin says nothing): the pair is then hashed as it is. Twins are
    written compact; earlier ones were indented (``": "``), and still hash the same.
    """
    try:
        stamp = twin.read_head(twin_data)
    except twin.TwinError:
        return None, None
    if stamp.generated_at is None:
        return None, None
    value = json.dumps(stamp.generated_at, ensure_ascii=False).encode()
    member = b'"generated_at":' + value
    if member not in twin_data[: _HEAD + len(member)]:
        member = b'"generated_at": ' + value
    if stamp.lang not in CATALOGUES:
        return None, member
    try:
        at = datetime.fromisoformat(stamp.generated_at)
    except ValueError:
        return None, member
    return stamp_line(stamp.lang, at).encode("utf-8"), member


def _update_without(digest: Any, data: bytes, stamp: bytes | None, line: bool) -> None:
    """Hash ``data`` minus the first occurrence of ``stamp`` in its head.

    With ``line``, only an occurrence that is a whole line counts.
    """
    start = -1 if stamp is None else data.find(stamp, 0, _HEAD + len(stamp))
    if stamp is None or start < 0 or (line and not _whole_line(data, start, len(stamp))):
        digest.update(data)
        return
    view = memoryview(data)
    digest.update(view[:start])
    digest.update(view[start + len(stamp) :])


def _whole_line(data: bytes, start: int, length: int) -> bool:
    end = start + length
    return (start == 0 or data[start - 1] == 0x0A) and data[end : end + 1] in (b"\n", b"")


def content_hash_bytes(markdown: bytes, twin_data: bytes) -> str:
    """SHA-256 of a report pair (UTF-8) without the moment it was generated."""
    line, member = _stamps(twin_data)
    digest = hashlib.sha256()
    _update_without(digest, markdown, line, line=True)
    digest.update(b"\0")
    _update_without(digest, twin_data, member, line=False)
    return digest.hexdigest()


def content_hash(markdown: str, twin_text: str) -> str:
    """:func:`content_hash_bytes` of the two texts."""
    return content_hash_bytes(markdown.encode("utf-8"), twin_text.encode("utf-8"))
