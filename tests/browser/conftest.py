"""The browser tests' shared parts: one Chromium, the built site, and the site served over HTTP.

Everything is session-scoped: Chromium starts once, the site is built once,
and each origin is crawled once (see :mod:`tests.site_crawl`); the tests then
ask different questions of the same pages. A missing Chromium fails the
session with one line saying what to install — it is never a skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repoherald.site.build import build_site
from tests import hostile_archive
from tests.chromium import BrowserMissing, Chromium, chromium
from tests.hostile_archive import Archive
from tests.site_crawl import Crawl, crawl
from tests.static_server import StaticSite, serve


@pytest.fixture(scope="session")
def browser() -> Iterator[Chromium]:
    try:
        with chromium() as session:
            yield session
    except BrowserMissing as exc:
        raise pytest.fail.Exception(str(exc), pytrace=False) from None  # one line, no chain


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    """The pipeline's archive of a repository whose commits carry hostile text."""
    return hostile_archive.build(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def site_dir(hostile: Archive, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from that archive, as ``repoherald site`` builds it."""
    out = tmp_path_factory.mktemp("site") / "site"
    result = build_site(hostile.reports, out)
    assert result.ok, result.problems
    return out


@pytest.fixture(scope="session")
def file_root(site_dir: Path) -> str:
    return site_dir.as_uri() + "/"


@pytest.fixture(scope="session")
def day_url(file_root: str, served: StaticSite) -> dict[str, str]:
    """The English page of the hostile day, by origin (``file`` and ``http``)."""
    day = hostile_archive.DAYS[0]
    rel = f"{day[:4]}/{hostile_archive.NAME}/{day}.en.html"
    return {"file": file_root + rel, "http": served.url + rel}


@pytest.fixture(scope="session")
def served(site_dir: Path) -> Iterator[StaticSite]:
    with serve(site_dir) as site:
        yield site


@pytest.fixture(scope="session")
def file_crawl(browser: Chromium, site_dir: Path, file_root: str) -> Crawl:
    return crawl(browser, file_root + "index.html", file_root, site_dir, axe=False)


@pytest.fixture(scope="session")
def http_crawl(browser: Chromium, served: StaticSite, site_dir: Path) -> Crawl:
    return crawl(browser, served.url + "index.html", served.url, site_dir, axe=True)
