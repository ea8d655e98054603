"""The browser tests' shared parts: one Chromium, the built site, and the site served over HTTP.

Everything is session-scoped: Chromium starts once, the site is built once,
and each origin is crawled once (see :mod:`tests.site_crawl`); the tests then
ask different questions of the same pages. A missing Chromium fails the
session with one line saying what to install — it is never a skip.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import BrowserMissing, Chromium, chromium
from tests.site_crawl import Crawl, crawl
from tests.static_server import StaticSite, serve

STUB = Path(__file__).parent.parent / "data" / "site_stub"


@pytest.fixture(scope="session")
def browser() -> Iterator[Chromium]:
    try:
        with chromium() as session:
            yield session
    except BrowserMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    shutil.copytree(STUB, out)
    return out


@pytest.fixture(scope="session")
def served(site_dir: Path) -> Iterator[StaticSite]:
    with serve(site_dir) as site:
        yield site


@pytest.fixture(scope="session")
def file_crawl(browser: Chromium, site_dir: Path) -> Crawl:
    root = site_dir.as_uri() + "/"
    return crawl(browser, root + "index.html", root, site_dir, axe=False)


@pytest.fixture(scope="session")
def http_crawl(browser: Chromium, served: StaticSite, site_dir: Path) -> Crawl:
    return crawl(browser, served.url + "index.html", served.url, site_dir, axe=True)
