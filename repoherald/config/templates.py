"""The ``{field}`` templates of the configuration: archive paths, link, title and subject.

Each template is checked when the configuration is read, so a typo is a
one-line config error and not a traceback at the first delivery. One checker
serves all four, so they accept and refuse the same things and say it the
same way: an unbalanced brace, an unknown field (attribute and index access
such as ``{name.__class__}`` count as unknown), or a format spec or
conversion, which none of them needs and which could fail only later.

It lives in ``config/`` because the configuration checks ``[report] path``
while reading the file and must not reach up into ``publish/``; the
publishers import the checks from here.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

from pydantic_core import PydanticCustomError

PATH_FIELDS = ("year", "month", "day", "date", "name")
"""The path template's fields: ``{year}`` 2026, ``{month}`` 08, ``{day}`` 20, ``{date}``
2026-08-20, ``{name}`` the repository's folder name."""


def template_fields(template: str, known: Iterable[str], what: str) -> list[str]:
    """The fields ``template`` uses, in order; ValueError naming ``what`` and the problem."""
    allowed = tuple(known)
    listing = ", ".join("{" + f + "}" for f in allowed)
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        raise ValueError(
            f"{what} has an unbalanced brace: write fields as {{{allowed[0]}}},"
            " a literal brace as {{ or }}"
        ) from None
    fields: list[str] = []
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in allowed or spec or conversion:
            shown = "{" + field + (f"!{conversion}" if conversion else "")
            shown += (f":{spec}" if spec else "") + "}"
            raise ValueError(f"{what} field {shown} is not allowed: use {listing}")
        fields.append(field)
    return fields


def path_pieces(template: str) -> list[tuple[str, str | None]]:
    """A path template as (literal text, field name or None) pairs; ValueError naming the
    first problem."""
    if not template.strip():
        raise ValueError("the path template is empty: use e.g. {year}/{name}/{date}")
    if any(ord(ch) < 0x20 for ch in template):
        raise ValueError("the path template contains a control character (NUL, newline): remove it")
    template_fields(template, PATH_FIELDS, "the path template")
    return [(literal, field) for literal, field, _, _ in string.Formatter().parse(template)]


def check_template(template: str) -> str:
    """Return ``template`` if it is a valid path template, else raise ValueError saying why.

    Besides well-formed fields it must contain ``{date}`` (each day needs its
    own file) and stay inside the archive (no ``..`` segment).
    """
    pieces = path_pieces(template)
    if "date" not in {field for _, field in pieces}:
        raise ValueError("the path template must contain {date}: each day needs its own file")
    if ".." in re.split(r"[/\\]", template):
        raise ValueError("the path template must stay inside the archive: remove the '..' segment")
    return template


def template_validator(value: str) -> str:
    """:func:`check_template` for a pydantic field: the message without a "Value error" prefix."""
    try:
        return check_template(value)
    except ValueError as exc:
        raise PydanticCustomError("path_template", str(exc)) from None
