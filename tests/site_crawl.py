"""Visit every page of a built site in Chromium, the way a reader clicking every link would.

From the start page, every ``<a href>`` is read as the browser resolved it. A
link inside the site is checked: its file must exist (``file://``) or answer
200 (``http://``), an HTML page is visited in turn, and a ``#fragment`` must
name an element on the page it points to. A link elsewhere must be plain
http(s) — ``javascript:``, ``data:`` and the like are problems wherever they
appear. Each visited page is also checked once for what a test asks of every
page (console errors, dialogs, axe), so the site is loaded only once per origin.

A link to a directory is a problem on ``file://`` (the browser shows a
listing there, not the page): links name their ``index.html``.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

from tests.chromium import Chromium, Violation

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

_PAGE_FACTS = """
// SVG links (the heat-map's days) have no string .href: resolve the attribute.
const links = [...document.querySelectorAll("a[href]")].map((a) => {
  const raw = a.getAttribute("href");
  let url;
  try { url = new URL(raw, document.baseURI).href; } catch (e) { url = "invalid:" + raw; }
  return [raw, url];
});
const ids = [...document.querySelectorAll("[id], a[name]")].map((e) => e.id || e.name);
return {links, ids};
"""


@dataclass
class Page:
    """What one visited page showed: its anchors, links and what the checks found on it."""

    url: str
    ids: set[str]
    links: list[tuple[str, str]]
    """(the ``href`` as written, the URL the browser resolved it to)."""
    console_errors: list[str]
    dialogs: list[str]
    violations: list[Violation]


@dataclass
class Crawl:
    """Every page reached from the start page, and every problem found on the way."""

    root: str
    pages: dict[str, Page] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    external: set[str] = field(default_factory=set)

    def internal_links(self) -> int:
        return sum(
            1 for p in self.pages.values() for _, url in p.links if url.startswith(self.root)
        )


def _is_page(path: str) -> bool:
    return path.endswith((".html", "/")) or path == ""


def _exists(root: str, url: str, site_dir: Path) -> bool:
    """Whether the site file behind ``url`` (no query, no fragment) is there."""
    if root.startswith("file:"):
        rel = unquote(url[len(root) :])
        return (site_dir / rel).is_file()
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return int(answer.status) == 200
    except (urllib.error.URLError, OSError):
        return False


def crawl(browser: Chromium, start: str, root: str, site_dir: Path, *, axe: bool) -> Crawl:
    """Visit every page reachable from ``start`` under ``root`` (a URL ending with ``/``).

    ``site_dir`` is the built site on disk (for ``file://`` existence checks);
    with ``axe`` each page is also checked by axe-core.
    """
    result = Crawl(root)
    queue = [start]
    checked: set[str] = set()
    fragments: list[tuple[str, str, str]] = []  # (from page, target page, fragment)
    while queue:
        url = queue.pop()
        if url in result.pages:
            continue
        browser.open(url)
        facts = browser.run(_PAGE_FACTS)
        page = Page(
            url=url,
            ids=set(facts["ids"]),
            links=[(raw, href) for raw, href in facts["links"]],
            console_errors=browser.console_errors(),
            dialogs=browser.dialogs(),
            violations=browser.axe() if axe else [],
        )
        result.pages[url] = page
        for raw, href in page.links:
            scheme = urlsplit(href).scheme.lower()
            if not href.startswith(root):
                if scheme not in SAFE_SCHEMES:
                    result.problems.append(f"{url}: link {raw!r} is {scheme}:, not http(s)")
                elif scheme in ("http", "https"):
                    result.external.add(href)
                continue
            target, fragment = urldefrag(href)
            target = target.split("?", 1)[0]
            if root.startswith("file:") and target.endswith("/"):
                result.problems.append(f"{url}: link {raw!r} names a directory, not its index.html")
                continue
            if target not in checked:
                checked.add(target)
                if not _exists(root, target, site_dir):
                    result.problems.append(f"{url}: link {raw!r} leads nowhere ({target})")
                    continue
                if _is_page(urlsplit(target).path):
                    queue.append(target)
            if fragment:
                fragments.append((url, target, unquote(fragment)))
    for source, target, fragment in fragments:
        page = result.pages.get(target)
        if page is not None and fragment not in page.ids:
            result.problems.append(f"{source}: anchor #{fragment} is not on {target}")
    return result
