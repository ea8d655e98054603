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
        if encoding in ("", "identity"):
            self._zlib: Any = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
            self._first = True
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
        room = self._max - len(self._out) + 1
        try:
            piece = self._zlib.decompress(data, room)
        except zlib.error:
            if self._encoding == "deflate" and getattr(self, "_first", False):
                # some servers send raw deflate without the zlib header (httpx does the same)
                self._first = False
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                self._inflate(data)
                return
            raise BadEncoding(f"the answer's {self._encoding} data is damaged") from None
        self._first = False
        self._out += piece
        while len(self._out) <= self._max and self._zlib.unconsumed_tail:
            room = self._max - len(self._out) + 1
            try:
                piece = self._zlib.decompress(self._zlib.unconsumed_tail, room)
            except zlib.error:
                raise BadEncoding(f"the answer's {self._encoding} data is damaged") from None
            self._out += piece
        if len(self._out) > self._max:
            raise BodyTooLarge(
                f"the answer expands to more than {_size(self._max)}, the limit"
                f" ({self._encoding} of {_size(self._raw)} so far)"
            )

    def finish(self) -> bytes:
        if self._zlib is not None and self._raw and not self._zlib.eof:
            raise BadEncoding(f"the answer's {self._encoding} data is cut off")
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
