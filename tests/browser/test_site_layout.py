"""Every page reads on a phone and in the dark: no sideways scroll at 390 px, axe in dark mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chromium import DESKTOP, PHONE, Chromium
from tests.site_crawl import Crawl


@pytest.fixture
def phone(browser: Chromium) -> Iterator[Chromium]:
    browser.viewport(*PHONE, mobile=True)
    try:
        yield browser
    finally:
        browser.viewport(*DESKTOP)


@pytest.fixture
def dark(browser: Chromium) -> Iterator[Chromium]:
    browser.color_scheme("dark")
    try:
        yield browser
    finally:
        browser.color_scheme("light")


def test_no_page_scrolls_sideways_on_a_phone(phone: Chromium, http_crawl: Crawl) -> None:
    wide = {}
    for url in http_crawl.pages:
        phone.open(url)
        if (overflow := phone.overflows(PHONE[0])) > 0:
            wide[url] = overflow
    assert len(http_crawl.pages) > 1
    assert wide == {}


def test_axe_finds_nothing_serious_in_dark_mode(dark: Chromium, http_crawl: Crawl) -> None:
    found = {}
    for url in http_crawl.pages:
        dark.open(url)
        if violations := dark.axe():
            found[url] = [str(v) for v in violations]
    assert len(http_crawl.pages) > 1
    assert found == {}
