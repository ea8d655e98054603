"""Untrusted text as HTML: the report's escaping policy, in HTML instead of Markdown.

Jinja2's autoescape makes every value inert; these filters add what the
Markdown renderer does with the same text (:mod:`repoherald.render.escape`):
one clean line (controls, bidi and invisible characters removed), and
paired backticks shown as code. The finished page also passes through
:func:`repoherald.render.invisible.strip_invisible`, like every renderer's
output.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from repoherald.render.escape import clean


def line(text: object) -> str:
    """One visible line of untrusted text (autoescaped by the template)."""
    return clean(str(text)) if text is not None else ""


def rich(text: object) -> Markup:
    """Escaped text whose paired backticks become ``<code>`` (an odd count: shown literally)."""
    value = line(text)
    if value.count("`") % 2:
        return Markup(escape(value))
    parts = value.split("`")
    out = [
        Markup("<code>{}</code>").format(part) if i % 2 and part.strip() else escape(part)
        for i, part in enumerate(parts)
    ]
    return Markup("").join(out)
