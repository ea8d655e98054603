"""Parsed Python APIs and outlines as plain JSON values, so the store can keep them.

A daily run parses whole the first version of each Python file the day
touches, and that version is the one the day before wrote and parsed. The
store keeps each blob's entry (:class:`~repoherald.analysis.pyapi.blobs.BlobApis`)
by blob SHA so the next run reads it instead. The form is JSON of lists,
numbers, strings, booleans and null — never pickle: a store someone else
wrote must not run anything — and decoding checks every type, raising
``TypeError`` or ``ValueError`` on anything this version did not write.

Byte strings (a body's stand-in header and indentation) are stored as the
Latin-1 string of the same code points: one character per byte, exact for
every byte value, escaped by JSON where needed.

An entry with an outline stores only the outline: its API is the fold of the
outline's events (:meth:`Outline.api`), exactly what the parse returned.

:data:`CODEC_VERSION` changes whenever the form or what the parsers put in
it changes; the store keys rows by it, so an old row is simply not found.
"""

from __future__ import annotations

import sys
from typing import Any

from repoherald.analysis.pyapi.api import AllUpdate, ApiEvent, Definition, PublicApi
from repoherald.analysis.pyapi.outline import Body, Outline, Statement

Entry = tuple[PublicApi | None, Outline | None]

CODEC_VERSION = f"api1/py{sys.version_info[0]}.{sys.version_info[1]}"
"""The form's version and the Python whose ``ast`` parsed the blob: another
Python may parse (and unparse signatures) differently, so its rows are apart."""


def encode(entry: Entry) -> Any:
    """A JSON value for one entry; ``None`` for a blob that could not be parsed."""
    api, outline = entry
    if outline is not None:
        return {"o": _outline(outline)}
    if api is not None:
        return {"a": [[name, kind, sig] for name, (kind, sig) in api.items()]}
    return None


def decode(value: Any) -> Entry:
    """The entry :func:`encode` was given; ``TypeError``/``ValueError`` for anything else."""
    if value is None:
        return None, None
    if not isinstance(value, dict) or len(value) != 1:
        raise TypeError("not an API entry")
    if "o" in value:
        outline = _read_outline(value["o"])
        return outline.api(), outline
    if "a" not in value:
        raise TypeError("not an API entry")
    api: PublicApi = {}
    for item in _list(value["a"]):
        name, kind, sig = _fixed(item, 3)
        api[_str(name)] = (_str(kind), _str(sig))
    return api, None


# -- encoding ------------------------------------------------------------------


def _outline(outline: Outline) -> list[Any]:
    return [outline.lines, [_statement(s) for s in outline.statements]]


def _statement(s: Statement) -> list[Any]:
    return [s.start, [_event(e) for e in s.events], _body(s.body)]


def _event(e: ApiEvent) -> list[Any]:
    if isinstance(e, Definition):
        return ["d", e.name, e.kind, e.signature]
    return ["a", list(e.names) if e.names is not None else None, e.replaces]


def _body(b: Body | None) -> list[Any] | None:
    if b is None:
        return None
    return [
        b.wrapper.decode("latin-1"),
        b.end,
        list(b.starts),
        b.indent.decode("latin-1"),
        [_body(i) for i in b.inner],
    ]


# -- decoding -------------------------------------------------------------------


def _read_outline(value: Any) -> Outline:
    lines, statements = _fixed(value, 2)
    return Outline(_int(lines), tuple(_read_statement(s) for s in _list(statements)))


def _read_statement(value: Any) -> Statement:
    start, events, body = _fixed(value, 3)
    return Statement(_int(start), tuple(_read_event(e) for e in _list(events)), _read_body(body))


def _read_event(value: Any) -> ApiEvent:
    items = _list(value)
    if items[:1] == ["d"]:
        _, name, kind, sig = _fixed(items, 4)
        return Definition(_str(name), _str(kind), _str(sig))
    _, names, replaces = _fixed(items, 3)
    if items[0] != "a" or not isinstance(replaces, bool):
        raise TypeError("not an API event")
    return AllUpdate(tuple(_str(n) for n in _list(names)) if names is not None else None, replaces)


def _read_body(value: Any) -> Body | None:
    if value is None:
        return None
    wrapper, end, starts, indent, inner = _fixed(value, 5)
    return Body(
        _str(wrapper).encode("latin-1"),
        _int(end),
        tuple(_int(s) for s in _list(starts)),
        _str(indent).encode("latin-1"),
        tuple(_read_body(i) for i in _list(inner)),
    )


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("expected a list")
    return value


def _fixed(value: Any, n: int) -> list[Any]:
    items = _list(value)
    if len(items) != n:
        raise ValueError(f"expected {n} items, found {len(items)}")
    return items


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("expected an integer")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value
