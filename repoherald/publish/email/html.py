"""The HTML part of a report e-mail: the Markdown report, rendered for mail clients.

Mail clients drop ``<style>`` blocks and external CSS (Gmail, Outlook), so
every style sits in a ``style`` attribute of the element it styles. Headings
get the ids the report's table of contents links to (GitHub's slugs, see
:mod:`repoherald.render.slug`), so the contents work inside the mail.

The report quotes commit messages, which are untrusted: raw HTML is never
passed through (``html=False`` makes ``<script>`` text), links go only to
``http(s)``, ``mailto`` or ``#anchors`` (a ``javascript:`` link stays
text), and images are not rendered (a remote image is a read receipt).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from repoherald.render.slug import Slugger, slugify

FONT = "-apple-system,'Segoe UI',Helvetica,Arial,'PingFang SC','Microsoft YaHei',sans-serif"
MONO = "SFMono-Regular,Consolas,'Liberation Mono',Menlo,monospace"
STYLES: dict[str, str] = {
    "h1": "font-size:24px;margin:24px 0 12px;border-bottom:1px solid #d0d7de;padding-bottom:6px",
    "h2": "font-size:20px;margin:22px 0 10px;border-bottom:1px solid #d0d7de;padding-bottom:4px",
    "h3": "font-size:17px;margin:18px 0 8px",
    "h4": "font-size:15px;margin:16px 0 6px",
    "h5": "font-size:14px;margin:14px 0 6px",
    "h6": "font-size:13px;margin:12px 0 6px;color:#57606a",
    "table": "border-collapse:collapse;margin:8px 0 16px;font-size:13px",
    "th": "border:1px solid #d0d7de;padding:4px 8px;background:#f6f8fa;text-align:left",
    "td": "border:1px solid #d0d7de;padding:4px 8px;vertical-align:top",
    "code": f"font-family:{MONO};font-size:12px;background:#f6f8fa;padding:1px 4px;"
    "border-radius:3px",
    "pre": f"font-family:{MONO};font-size:12px;background:#f6f8fa;padding:8px 12px;"
    "border-radius:4px;overflow-x:auto;white-space:pre-wrap",
    "blockquote": "margin:8px 0;padding:2px 12px;color:#57606a;border-left:4px solid #d0d7de",
    "a": "color:#0969da",
    "hr": "border:0;border-top:1px solid #d0d7de;margin:24px 0",
}
BODY_STYLE = f"font-family:{FONT};font-size:14px;line-height:1.5;color:#1f2328;max-width:980px"
SAFE_SCHEMES = ("http://", "https://", "mailto:")


def _safe_link(url: str) -> bool:
    """Only web, mail and in-document links; anything else stays text."""
    lowered = url.strip().lower()
    return lowered.startswith(SAFE_SCHEMES) or lowered.startswith("#")


class _MailMarkdown(MarkdownIt):
    """CommonMark with the mail's link rule."""

    def validateLink(self, url: str) -> bool:
        return _safe_link(url)


def _parser() -> MarkdownIt:
    md = _MailMarkdown("commonmark", {"html": False}).enable("table").disable("image")
    md.add_render_rule("fence", _render_code)
    md.add_render_rule("code_block", _render_code)
    return md


def _render_code(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    code = html.escape(tokens[idx].content)
    return f'<pre style="{STYLES["pre"]}"><code>{code}</code></pre>\n'


def _heading_text(inline: Token) -> str:
    """The heading's rendered text, the way GitHub slugs it."""
    kinds = ("text", "code_inline")
    return "".join(c.content for c in (inline.children or []) if c.type in kinds)


def _style(token: Token, tag: str) -> None:
    extra = STYLES.get(tag)
    if extra is None:
        return
    own = token.attrGet("style")  # a table column's text-align
    token.attrSet("style", f"{extra};{own}" if own else extra)


def _decorate(tokens: Sequence[Token], prefix: str) -> None:
    """Ids on headings, styles on everything, and in-document links made ``prefix``-unique."""
    slugger = Slugger()
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            token.attrSet("id", prefix + slugger.slug(_heading_text(tokens[i + 1])))
        if token.nesting == 1 or token.type in ("hr", "code_inline"):
            _style(token, token.tag)
        for child in token.children or []:
            if child.type in ("code_inline", "link_open"):
                _style(child, child.tag)
            href = child.attrGet("href") if child.type == "link_open" else None
            if isinstance(href, str) and href.startswith("#"):  # the id as written, not %-encoded
                child.attrSet("href", "#" + prefix + unquote(href[1:]))


def render_fragment(markdown: str, prefix: str = "") -> str:
    """The report as HTML body content; ``prefix`` goes before every heading id and #link.

    Several reports in one mail need a prefix each, or their anchors collide.
    """
    md = _parser()
    tokens = md.parse(markdown)
    _decorate(tokens, prefix)
    return str(md.renderer.render(tokens, md.options, {}))


def anchor_prefix(name: str, day_iso: str) -> str:
    """The id prefix of one report inside a digest mail."""
    return slugify(f"{name} {day_iso}") + "--"


def render_document(title: str, fragments: Sequence[str]) -> str:
    """A whole HTML document around ``fragments`` (separated by a rule), styled inline."""
    rule = f'\n<hr style="{STYLES["hr"]}">\n'
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n</head>\n"
        f'<body style="{BODY_STYLE}">\n{rule.join(fragments)}</body>\n</html>\n'
    )
