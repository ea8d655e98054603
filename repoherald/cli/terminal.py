"""What the CLI prints to a terminal: redacted, and stripped of control characters.

Remote text reaches the terminal inside messages: a GitHub 403's ``message``,
a repository's ``full_name``, a webhook's error body. A terminal obeys escape
sequences in it: ``ESC ] 0;…`` retitles the window, ``ESC [2J`` clears the
screen, others rewrite what was printed before. Every line the CLI prints,
and every log record, goes through :func:`printable`, which keeps the text
and drops ESC sequences, C0 controls but newline and tab, DEL and the C1
controls (``U+0080``–``U+009F``, which some terminals read as ESC sequences).
"""

from __future__ import annotations

import logging
import re

import click

from repoherald.redact import redact

_ESC_SEQUENCE = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]?"  # CSI: ESC [ params intermediates final
    r"|[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC ... terminator
    r"|[ -/]*[0-~]?"  # two-character and nF sequences
    r")"
)
_C1_SEQUENCE = re.compile(
    r"\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?"  # 8-bit OSC, DCS, SOS, PM, APC
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without escape sequences or control characters (newline and tab stay)."""
    if not text:
        return text
    text = _ESC_SEQUENCE.sub("", text)
    text = _C1_SEQUENCE.sub("", text)
    return _CONTROL.sub("", text)


def say(text: str, *, err: bool = True) -> None:
    """Print one line (to stderr unless ``err=False``), redacted and printable."""
    click.echo(printable(redact(text)), err=err)


class PrintableFilter(logging.Filter):
    """A logging filter that applies :func:`printable` to every record's final message."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = printable(record.getMessage())
        record.args = None
        return True
