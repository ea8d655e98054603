"""Read a generated report the way GitHub does: its heading ids and its internal links.

Independent of the renderer: the Markdown is parsed with a CommonMark parser,
each heading's rendered text goes through GitHub's slugger, and every
``#fragment`` link is collected, so a test can require each link to name a
heading that exists.
"""

from __future__ import annotations

from urllib.parse import unquote

from markdown_it import MarkdownIt

from repoherald.render.slug import Slugger


def heading_ids_and_links(md: str) -> tuple[list[str], list[str], list[tuple[int, str]]]:
    """(heading ids in order, fragment links, (level, text) of headings)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    slugger = Slugger()
    ids: list[str] = []
    heads: list[tuple[int, str]] = []
    links: list[str] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            inline = tokens[i + 1]
            text = "".join(
                c.content for c in (inline.children or []) if c.type in ("text", "code_inline")
            )
            ids.append(slugger.slug(text))
            heads.append((int(tok.tag[1]), text))
        if tok.type == "inline":
            for child in tok.children or []:
                if child.type == "link_open":
                    href = str(child.attrs.get("href", ""))
                    if href.startswith("#"):
                        links.append(unquote(href[1:]))
    return ids, links, heads
