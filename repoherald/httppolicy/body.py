"""An answer's body read within a size cap, decompressed by us, and its JSON parsed safely.

httpx decompresses a whole chunk at once and keeps the whole body: a 1 MB
gzip that expands to 1 GiB costs gigabytes before anyone can say no. Here the
raw bytes are fed through :mod:`zlib` with an output limit, so the cap holds
while streaming and after decompression, and memory stays near the cap.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from repoherald.httppolicy.limits import BadEncoding, BodyTooLarge, Limits

ACCEPT_ENCODING = "gzip, deflate"
"""The only encodings asked for, so the only ones decoded."""
_STEP = 1 << 20
"""Bytes decompressed at a time: memory stays near the cap, not twice it."""


def _size(n: int) -> str:
    return f"{n / (1 << 20):g} MB" if n >= 1 << 20 else f"{n:,} bytes"


class BodyReader:
    """Feed raw chunks in order; :meth:`finish` returns the decoded body.

    Raises :class:`BodyTooLarge` as soon as the decoded (or raw) size passes
    ``limits.max_body``, and :class:`BadEncoding` for damaged or unknown encodings.
    """

    def __init__(self, content_encoding: str | None, limits: Limits) -> None:
        self._max = limits.max_body
        self._raw = 0
        self._out = bytearray()
        encoding = (content_encoding or "identity").strip().lower()
        self._encoding = encoding
        self._first = True
        if encoding in ("", "identity"):
            self._zlib: Any = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        else:
            raise BadEncoding(
                f"the answer is encoded as {encoding[:40]!r}, which was not asked for"
                f" (only {ACCEPT_ENCODING})"
            )

    def feed(self, chunk: bytes) -> None:
        self._raw += len(chunk)
        if self._raw > self._max:
            raise BodyTooLarge(f"the answer is larger than {_size(self._max)}, the limit")
        if self._zlib is None:
            self._out += chunk
        else:
            self._inflate(chunk)

    def _inflate(self, data: bytes) -> None:
        """Decompress ``data`` a step at a time, so no piece is larger than :data:`_STEP`."""
        pending = data
        while True:
            room = min(self._max - len(self._out) + 1, _STEP)
            try:
                piece = self._zlib.decompress(pending, room)
            except zlib.error:
                if self._encoding == "deflate" and self._first:
                    # some servers send raw deflate without the zlib header (httpx reads it too)
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BadEncoding(f"the answer's {self._encoding} data is damaged") from None
            self._first = False
            self._out += piece
            if len(self._out) > self._max:
                raise BodyTooLarge(
                    f"the answer expands to more than {_size(self._max)}, the limit"
                    f" ({self._encoding} of {_size(self._raw)} so far)"
                )
            pending = self._zlib.unconsumed_tail
            if not pending and len(piece) < room:
                return  # all input read and no output held back by the step's limit

    def finish(self) -> bytes:
        if self._zlib is not None and self._raw:
            if not self._zlib.eof:
                raise BadEncoding(f"the answer's {self._encoding} data is cut off")
            self._out += self._zlib.flush()
            if len(self._out) > self._max:
                raise BodyTooLarge(f"the answer expands to more than {_size(self._max)}, the limit")
        return bytes(self._out)


class JsonTooDeep(ValueError):
    """JSON nested deeper than the interpreter can parse (``[[[[…`` 200,000 deep)."""


def loads(data: bytes | str) -> Any:
    """``json.loads`` that fails with a :class:`ValueError` instead of a ``RecursionError``.

    Callers already treat ``ValueError`` as "not valid JSON"; a subclass lets
    them word the deep case apart.
    """
    try:
        return json.loads(data)
    except RecursionError:
        raise JsonTooDeep("the JSON is nested too deeply to read") from None
