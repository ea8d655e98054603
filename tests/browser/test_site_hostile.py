"""Hostile commit text renders inert on every page: shown as text, never run, never a link.

The archive's commits carry a ``<script>`` tag, an ``<img onerror>``,
``javascript:`` links and a bidi override (see :mod:`tests.hostile_archive`).
On every page of the site, from disk and over HTTP: no dialog opened, no
script or event handler came from commit text, no link has a scheme other
than http(s), and the text itself is readable as written, minus the bidi
control.
"""

from __future__ import annotations

import pytest

from tests import hostile_archive
from tests.chromium import Chromium
from tests.site_crawl import Crawl

_INERT = """
const root = arguments[0];
const handlers = [...document.querySelectorAll("*")].flatMap((e) =>
  [...e.attributes].filter((a) => a.name.startsWith("on")).map((a) => e.tagName + " " + a.name));
const scripts = [...document.scripts]
  .filter((s) => !s.src || !s.src.startsWith(root) || s.textContent.includes("alert("))
  .map((s) => s.outerHTML.slice(0, 120));
const links = [...document.querySelectorAll("a[href]")]
  .map((a) => a.getAttribute("href"))
  .filter((href) => !["http:", "https:", "file:", "mailto:"].includes(
    new URL(href, document.baseURI).protocol));
return {handlers, scripts, links, text: document.body.innerText};
"""


@pytest.mark.parametrize("origin", ["file", "http"])
def test_no_page_opened_a_dialog(origin: str, request: pytest.FixtureRequest) -> None:
    crawl: Crawl = request.getfixturevalue(f"{origin}_crawl")
    assert crawl.pages
    assert {url: p.dialogs for url, p in crawl.pages.items() if p.dialogs} == {}


def test_hostile_text_is_shown_as_text_and_runs_nothing(
    browser: Chromium, http_crawl: Crawl, day_url: dict[str, str]
) -> None:
    pages = {}
    for url in http_crawl.pages:
        browser.open(url)
        found = browser.run(_INERT, http_crawl.root)
        if found["handlers"] or found["scripts"] or found["links"] or "\u202e" in found["text"]:
            pages[url] = {k: v for k, v in found.items() if k != "text" and v}
    assert pages == {}

    browser.open(day_url["http"])
    text = browser.run(_INERT, http_crawl.root)["text"]
    assert hostile_archive.SCRIPT_TITLE in text
    assert hostile_archive.IMG_TITLE in text
    assert hostile_archive.BIDI_TITLE.replace("\u202e", "") in text
    assert browser.dialogs() == []
