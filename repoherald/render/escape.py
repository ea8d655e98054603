"""Make text written by strangers inert in GitHub-flavoured Markdown.

Commit titles, paths and descriptions are data. Whatever they contain
(``|``, backticks, ``<script>``, ``[x](javascript:…)``, a leading ``#``,
``@mentions``, bidi overrides) must render as the same visible text and never
change the structure of the report. The functions here are the only way
untrusted text reaches a template.

GitHub also reads the *rendered* text of an issue or comment, outside code
spans and links: ``@name`` notifies that user, and ``#12``, ``GH-12`` and
``owner/repo#12`` link to an issue of the repository the text is posted in
(and add a "mentioned this" event there). A Markdown backslash does not stop
that, because the escape is gone by the time GitHub looks. So a zero-width
space goes between the sigil and what follows, outside code spans: the text
reads the same and nothing pings anyone. This is done here, for every
output, because only the renderer knows which text is a stranger's; a
publisher sees finished Markdown where our own ``[#12](url)`` links and
``(#heading)`` anchors look the same, and a report from the archive is
pasted into issues by hand too.
"""

from __future__ import annotations

import re

from repoherald.render.invisible import INVISIBLE

# Characters removed outright: C0/C1 controls (tab and newline become spaces
# first), and the bidi and invisible characters that can make text display
# differently from how it reads ("Trojan Source", :mod:`invisible`).
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}]")
_WS = re.compile(r"[\t\n\r\u2028\u2029]+")

# Always escaped: characters that open inline markup anywhere in a line.
_ALWAYS = set("\\`*[]<>|~&$#")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"(#|\bGH-)(?=[0-9])", re.IGNORECASE)
_LINE_START = re.compile(r"^(\s*)([-+=>]|\d{1,9}[.)])")
_ZWSP = "\u200b"


def clean(text: str) -> str:
    """One line of visible text: controls removed, line breaks turned into spaces."""
    return _CONTROL.sub("", _WS.sub(" ", text)).strip()


_ESCAPES = [(ch, "\\" + ch) for ch in sorted(_ALWAYS, key=lambda ch: ch != "\\")]
"""``(char, escaped)`` for :data:`_ALWAYS`, the backslash first so no escape is escaped again."""
_LONE_UNDERSCORE = re.compile(r"_(?:(?<![^\W_]_)|(?![^\W_]))")
"""An underscore without a letter or digit on both sides (``[^\\W_]`` is ``isalnum``)."""


def _escape_plain(text: str) -> str:
    """Escape markup characters; an underscore inside a word (``snake_case``) stays.

    The backslashes added first only ever stand before a character that is
    not a letter or digit, so the neighbours of an underscore test the same
    as in the original text. (A loop over the characters took three times
    as long: a report escapes every title, path and reason it shows.)
    """
    for ch, escaped in _ESCAPES:
        if ch in text:
            text = text.replace(ch, escaped)
    return _LONE_UNDERSCORE.sub(r"\\_", text) if "_" in text else text


def _defuse(text: str) -> str:
    """Stop ``@name`` notifying people, and ``#12``/``GH-12`` linking issues, on GitHub."""
    return _REFERENCE.sub(lambda m: m.group(1) + _ZWSP, _MENTION.sub("@" + _ZWSP, text))


def _escape_line_start(md: str) -> str:
    """Escape a leading ``-``, ``+``, ``=``, ``>`` or ``1.`` that would start a block."""
    m = _LINE_START.match(md)
    if not m:
        return md
    lead, mark = m.group(1), m.group(2)
    return lead + mark[:-1] + "\\" + mark[-1] + md[m.end() :]


def inline(text: str) -> str:
    """Escape untrusted text for a paragraph, list item or heading: no markup survives."""
    return _escape_line_start(_escape_plain(_defuse(clean(text))))


def cell(text: str) -> str:
    """Escape untrusted text for a table cell (``inline`` already escapes ``|``)."""
    return inline(text) or " "


def code(text: str) -> str:
    """A code span that shows ``text`` literally, whatever backticks it holds."""
    text = clean(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}" if text else "` `"


def rich(text: str) -> str:
    """Escape text that may mark code with paired backticks (our own rule texts, titles).

    Paired backticks become code spans, as a reader of the title expects;
    everything outside them is escaped. An odd number of backticks cannot be
    paired reliably, so then every backtick is shown literally.
    """
    text = clean(text)
    if text.count("`") % 2:
        return inline(text)
    parts = text.split("`")
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(_escape_plain(_defuse(part)))
        elif part.strip():
            out.append(code(part))
        else:
            out.append("\\`" + _escape_plain(part) + "\\`")
    return _escape_line_start("".join(out))


def rich_cell(text: str) -> str:
    """:func:`rich` for a table cell: pipes inside code spans need escaping too."""
    out = rich(text)
    # Pipes outside code are already escaped; GFM splits cells on unescaped
    # pipes even inside code spans, so escape those as well.
    return re.sub(r"(?<!\\)\|", r"\\|", out) or " "


def plain_heading_text(text: str) -> str:
    """The visible text that :func:`rich` renders to (what GitHub slugs a heading from)."""
    text = clean(text)
    if text.count("`") % 2:
        return _defuse(text)
    out: list[str] = []
    for i, part in enumerate(text.split("`")):
        if i % 2 == 0:
            out.append(_defuse(part))
        elif part.strip():
            # CommonMark strips one space from both ends of a code span.
            if len(part) >= 2 and part[0] == " " and part[-1] == " ":
                part = part[1:-1]
            out.append(part)
        else:
            out.append("`" + part + "`")
    return "".join(out)


_URL_SAFE = re.compile(r"^https?://[^\s<>()\[\]`\"']+$")


def url(value: str) -> str | None:
    """``value`` as a link target when it is plain http(s), else None.

    A link is built from text a server sent (a ``web_url``, a SHA, a pull
    request's ``html_url``): one holding ``javascript:``, ``<`` or ``)`` must
    not become a link, and must not stop the report either. The caller shows
    its label without a link, which is inert text.
    """
    return value if _URL_SAFE.match(value) else None
