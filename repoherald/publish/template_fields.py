"""The ``{field}`` templates of the configuration: archive paths, link, title and subject.

Each template is checked when the configuration is read, so a typo is a
one-line config error and not a traceback at the first delivery. One checker
serves all four, so they accept and refuse the same things and say it the
same way: an unbalanced brace, an unknown field (attribute and index access
such as ``{name.__class__}`` count as unknown), or a format spec or
conversion, which none of them needs and which could fail only later.
"""

from __future__ import annotations

import string
from collections.abc import Iterable


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
