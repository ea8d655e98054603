"""Untrusted text renders as exactly its own visible text, with no markup of its own."""

from __future__ import annotations

import random

import pytest
from markdown_it import MarkdownIt

from repoherald.render import escape

NASTY = [
    "# Title | with pipes `code` <script>alert(1)</script>",
    "[x](javascript:alert(1)) ![img](http://x/y.png) [ref][1]",
    "*bold* _em_ __strong__ ~~strike~~ $x^2$ &amp; &lt;b&gt;",
    "- starts like a list",
    "1. starts like an ordered list",
    "> starts like a quote",
    "=== setext?",
    "trailing hashes ##",
    "back\\slash \\[not escaped\\]",
    "snake_case_name and _leading and trailing_",
    "tab\there and\nnewline\r\nand \u202eRTL override\u202c",
    "<img src=x onerror=alert(1)>",
    "`` double ` backtick ``",
    "`odd backtick",
    "| a | b |",
    "@someone please look",
    "emoji 🔴 and 中文（全角）",
    "",
]

MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def visible_text(md: str) -> tuple[str, set[str]]:
    """Rendered text of a one-paragraph document and the inline token types in it."""
    tokens = MD.parse(md)
    inline = [t for t in tokens if t.type == "inline"]
    kinds: set[str] = set()
    text = []
    for tok in inline:
        for child in tok.children or []:
            kinds.add(child.type)
            if child.type in ("text", "code_inline"):
                text.append(child.content)
            elif child.type == "softbreak":
                text.append("\n")
    return "".join(text), kinds


@pytest.mark.parametrize("raw", NASTY)
def test_inline_is_inert(raw: str) -> None:
    md = escape.inline(raw)
    text, kinds = visible_text(f"x {md}" if md else "x")
    assert kinds <= {"text"}, f"markup leaked: {kinds} from {md!r}"
    assert text == ("x " + escape._defuse(escape.clean(raw))).strip()


@pytest.mark.parametrize("raw", NASTY)
def test_rich_allows_only_code_spans(raw: str) -> None:
    md = escape.rich(raw)
    text, kinds = visible_text(f"x {md}")
    assert kinds <= {"text", "code_inline"}, f"markup leaked: {kinds} from {md!r}"
    assert text == ("x " + escape.plain_heading_text(raw)).strip()


@pytest.mark.parametrize("raw", NASTY)
def test_table_cell_keeps_table_shape(raw: str) -> None:
    row = f"| {escape.cell(raw)} | {escape.rich_cell(raw)} |"
    html = MD.render("| a | b |\n|---|---|\n" + row + "\n")
    body = html.split("<tbody>")[1]
    assert body.count("<td") == 2
    assert "<script" not in html and "<img" not in html and "href" not in html


def test_heading_text_matches_render() -> None:
    raw = "Move `get_routed_experts` logic | fast"
    text, _ = visible_text("# " + escape.rich(raw))
    assert text == escape.plain_heading_text(raw) == "Move get_routed_experts logic | fast"


def test_mentions_are_defused() -> None:
    assert "@\u200bsomeone" in escape.inline("@someone")


def test_code_span_handles_backticks() -> None:
    text, kinds = visible_text("x " + escape.code("a `` b"))
    assert kinds == {"text", "code_inline"} and text == "x a `` b"


def test_url_refuses_scripts() -> None:
    assert escape.url("https://github.com/a/b/commit/0") == "https://github.com/a/b/commit/0"
    assert escape.url("javascript:alert(1)") is None


def _escape_plain_by_characters(text: str) -> str:
    """The rule, one character at a time: markup escaped, ``_`` kept only inside a word."""
    out = []
    for i, ch in enumerate(text):
        if ch in "\\`*[]<>|~&$#":
            out.append("\\" + ch)
        elif ch == "_":
            before = text[i - 1] if i > 0 else " "
            after = text[i + 1] if i + 1 < len(text) else " "
            out.append("_" if before.isalnum() and after.isalnum() else "\\_")
        else:
            out.append(ch)
    return "".join(out)


def test_plain_escaping_follows_the_rule_for_every_character_next_to_an_underscore() -> None:
    rng = random.Random(7)
    alphabet = list("ab1_ _*[]\\`<>|~&$#é٣½Ⅻ\u0301\u200b.-__")
    samples = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(5000)
    ]
    for c in range(0x3000):
        samples += [chr(c) + "_a", "a_" + chr(c), chr(c) + "_" + chr(c)]
    for text in samples:
        assert escape._escape_plain(text) == _escape_plain_by_characters(text), repr(text)
