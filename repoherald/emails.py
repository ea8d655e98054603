"""E-mail addresses never reach a report or a prompt: one pattern, one replacement.

Commit messages carry addresses in trailers, in prose and in angle brackets
(``Ann <ann@example.com>``). The rules' write-up, the LLM prompt and the
renderers' last pass all hide them the same way, bracket and all.
"""

from __future__ import annotations

import re

EMAIL = re.compile(r"<?[\w.+-]+@[\w-]+(\.[\w-]+)+>?")
PLACEHOLDER = "<email>"


def hide_emails(text: str) -> str:
    """``text`` with every address (and its angle brackets) replaced by ``<email>``."""
    return EMAIL.sub(PLACEHOLDER, text) if "@" in text else text


ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.ASCII)
"""One plain ASCII address: what a ``[[publish]]`` e-mail table may send from and to."""
_NAMED = re.compile(r"([^<>\"\\\x00-\x1f\x7f]*?)\s*<([^<>]*)>")


def is_address(text: str) -> bool:
    """True for ``ann@example.com`` or ``Ann Lee <ann@example.com>`` (one line, ASCII address)."""
    m = _NAMED.fullmatch(text.strip())
    return ADDRESS.fullmatch(m.group(2) if m else text.strip()) is not None
