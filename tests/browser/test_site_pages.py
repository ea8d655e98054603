"""Every page of the built site, from disk and over HTTP: links, console, accessibility.

Both origins matter: ``file://`` is how someone opens a downloaded site, and
HTTP is how GitHub Pages serves it; a page can work on one and not the other
(a directory link, a fetch() that ``file://`` forbids).
"""

from __future__ import annotations

import pytest

from tests.site_crawl import Crawl
from tests.static_server import StaticSite


@pytest.fixture(params=["file", "http"])
def crawled(request: pytest.FixtureRequest) -> Crawl:
    crawl: Crawl = request.getfixturevalue(f"{request.param}_crawl")
    return crawl


def test_every_link_leads_to_a_page_and_every_anchor_to_an_element(crawled: Crawl) -> None:
    assert len(crawled.pages) > 1
    assert crawled.internal_links() > 0
    assert crawled.problems == []


def test_no_page_logs_a_console_error(crawled: Crawl) -> None:
    errors = {
        url: page.console_errors for url, page in crawled.pages.items() if page.console_errors
    }
    assert errors == {}


def test_the_server_was_never_asked_for_a_missing_file(
    http_crawl: Crawl, served: StaticSite
) -> None:
    assert http_crawl.pages
    assert served.missing == []


def test_axe_finds_nothing_serious_or_critical(http_crawl: Crawl) -> None:
    found = {url: [str(v) for v in page.violations] for url, page in http_crawl.pages.items()}
    assert {url: v for url, v in found.items() if v} == {}
