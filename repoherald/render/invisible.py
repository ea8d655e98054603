"""The one filter for characters that change how text *displays* without being seen.

"Trojan Source": bidi embeddings, overrides and isolates (U+202A–U+202E,
U+2066–U+2069), the directional marks (U+200E, U+200F and the Arabic letter
mark U+061C) and the invisible operators and joiners that have no place in a
commit title, a path or a model's summary can make a line read differently
from what it holds. Every renderer passes its finished output through
:func:`strip_invisible`, so no field — a title, a summary in the JSON twin, a
reason, a path — is forgotten, and :func:`repoherald.render.escape.clean`
uses the same set for one-line text.

Left alone on purpose: U+200B (the zero-width space :mod:`escape` inserts to
stop ``@mentions``), and U+200C/U+200D (joiners that Indic scripts and emoji
sequences need).
"""

from __future__ import annotations

import re

INVISIBLE = "\u061c\u180e\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb"
"""A regular-expression character class body: the characters :func:`strip_invisible` removes."""

_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def strip_invisible(text: str) -> str:
    """``text`` without bidi controls and invisible format characters (see the module)."""
    return _INVISIBLE.sub("", text)
