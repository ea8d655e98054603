"""Filters on a day page: chosen by a click, carried by the URL, kept by a reload, shareable.

The day page lists every commit in its HTML (so it reads without JavaScript);
the filter form hides what does not match and writes the choice into the
query string. The expected sets come from the day's JSON twin, not from the
page under test.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests import hostile_archive
from tests.chromium import Chromium
from tests.hostile_archive import Archive

DAY = hostile_archive.DAYS[0]

_SHOWN = """
return [...document.querySelectorAll("article[data-commit]")]
  .filter((a) => !a.hidden && a.offsetParent !== null)
  .map((a) => a.dataset.importance);
"""


def _importances(archive: Archive) -> list[str]:
    twin = archive.reports / DAY[:4] / hostile_archive.NAME / f"{DAY}.en.json"
    commits = json.loads(twin.read_text("utf-8"))["repos"][0]["commits"]
    return [c["analysis"]["importance"] for c in commits]


def _query(browser: Chromium) -> dict[str, list[str]]:
    return parse_qs(urlsplit(browser.driver.current_url).query)


def _choose(browser: Chromium, name: str, value: str) -> None:
    """Pick ``value`` in the filter ``name`` and wait for the URL to carry it."""
    Select(browser.driver.find_element(By.NAME, name)).select_by_value(value)
    WebDriverWait(browser.driver, 30).until(lambda _: _query(browser).get(name) == [value])


@pytest.mark.parametrize("origin", ["file", "http"])
def test_an_importance_filter_is_in_the_url_and_survives_a_reload(
    browser: Chromium, origin: str, day_url: dict[str, str], hostile: Archive
) -> None:
    importances = _importances(hostile)
    assert {"medium", "low"} <= set(importances)
    browser.open(day_url[origin])
    assert sorted(browser.run(_SHOWN)) == sorted(importances)

    _choose(browser, "importance", "low")
    assert _query(browser)["importance"] == ["low"]
    assert browser.run(_SHOWN) == ["low"] * importances.count("low")
    assert browser.driver.find_element(By.ID, "filter-count").text == str(importances.count("low"))

    browser.driver.refresh()
    selected = Select(browser.driver.find_element(By.NAME, "importance")).first_selected_option
    assert selected.get_attribute("value") == "low"
    assert browser.run(_SHOWN) == ["low"] * importances.count("low")
    assert browser.console_errors() == []


def test_a_shared_link_opens_filtered_and_clearing_the_filter_shows_every_commit(
    browser: Chromium, day_url: dict[str, str], hostile: Archive
) -> None:
    importances = _importances(hostile)
    browser.open(day_url["http"] + "?importance=medium")
    assert browser.run(_SHOWN) == ["medium"] * importances.count("medium")

    Select(browser.driver.find_element(By.NAME, "importance")).select_by_value("")
    WebDriverWait(browser.driver, 30).until(lambda _: "importance" not in _query(browser))
    assert sorted(browser.run(_SHOWN)) == sorted(importances)


def test_two_filters_combine_in_the_url(browser: Chromium, day_url: dict[str, str]) -> None:
    browser.open(day_url["http"])
    _choose(browser, "importance", "medium")
    areas = browser.run(
        "return [...document.querySelectorAll('#f-area option')].map((o) => o.value)"
        ".filter((v) => v);"
    )
    assert areas
    _choose(browser, "area", areas[0])
    assert _query(browser) == {"importance": ["medium"], "area": [areas[0]]}
    shown = browser.run(
        """return [...document.querySelectorAll("article[data-commit]")].filter((a) => !a.hidden)
          .map((a) => [a.dataset.importance, JSON.parse(a.dataset.areas)]);"""
    )
    assert all(imp == "medium" and areas[0] in commit_areas for imp, commit_areas in shown)


def test_without_javascript_a_filtered_link_still_shows_every_commit(
    browser: Chromium, day_url: dict[str, str], hostile: Archive
) -> None:
    browser.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        browser.open(day_url["http"] + "?importance=low")
        shown = [
            a.get_attribute("data-importance")
            for a in browser.driver.find_elements(By.CSS_SELECTOR, "article[data-commit]")
            if a.is_displayed()
        ]
    finally:
        browser.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    assert sorted(shown) == sorted(_importances(hostile))
