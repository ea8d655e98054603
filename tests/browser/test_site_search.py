"""Search across the archive in the browser: typed, answered from the built index, inert text.

A word only one commit carries finds exactly that commit, and its result
leads to the commit on its day page; a SHA prefix finds it too; the home
page's search box lands on the search page with the query in the URL; a
filter narrows a search across days and the URL keeps both. A result made
of hostile commit text is shown as text.
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests import hostile_archive
from tests.chromium import Chromium
from tests.hostile_archive import Archive
from tests.static_server import StaticSite

_RESULTS = """
return [...document.querySelectorAll("#search-results li")].map((li) => {
  const a = li.querySelector("a[href]");
  return {text: li.innerText, href: a ? a.href : null};
});
"""
_SHAS = (
    "return [...document.querySelectorAll('#search-results li')].map((li) => li.dataset.result);"
)


def _only(shas: list[str]) -> str:
    """The one SHA shown (results carry the first ten characters)."""
    assert len(shas) == 1, shas
    return shas[0][:10]


# The page searches on load and on every keystroke, so a status can belong to
# an earlier query: the page has answered once what it shows is what the
# search function (window.RHSearch.run, the site's documented hook) answers for
# the text now in the box.
_SETTLED = """
const done = arguments[arguments.length - 1];
const form = document.getElementById("filters");
const filters = form && window.RHFilters ? window.RHFilters.fromForm(form) : {};
window.RHSearch.run(document.getElementById("q").value, filters).then((answer) => {
  const status = document.getElementById("search-status");
  const shown = [...document.querySelectorAll("#search-results li")].map((li) => li.dataset.result);
  const wanted = answer.results.map((result) => result.sha);
  done(status.dataset.count === String(answer.count)
       && JSON.stringify(shown) === JSON.stringify(wanted));
}, () => done(false));
"""


def _settle(browser: Chromium) -> None:
    WebDriverWait(browser.driver, 30).until(lambda _: browser.driver.execute_async_script(_SETTLED))


def _search(browser: Chromium, url: str, query: str) -> list[dict[str, str]]:
    browser.open(url)
    box = browser.driver.find_element(By.ID, "q")
    box.clear()
    box.send_keys(query, Keys.ENTER)
    _settle(browser)
    results: list[dict[str, str]] = browser.run(_RESULTS)
    return results


def test_a_word_finds_its_one_commit_and_leads_to_it(browser: Chromium, served: StaticSite) -> None:
    results = _search(browser, served.url + "search.html", hostile_archive.SEARCH_WORD)
    assert len(results) == 1
    assert hostile_archive.SEARCH_TITLE in results[0]["text"]
    target = results[0]["href"]
    assert target.startswith(served.url)
    assert "#" in target
    browser.open(target)
    anchor = target.split("#", 1)[1]
    shown = browser.run(  # the anchor may be a marker inside the commit's article
        "const el = document.getElementById(arguments[0]);"
        "return el ? (el.closest('article') || el).innerText : null;",
        unquote(anchor),
    )
    assert shown is not None
    assert hostile_archive.SEARCH_WORD in shown
    assert browser.console_errors() == []


def test_a_sha_prefix_finds_its_commit(
    browser: Chromium, served: StaticSite, hostile: Archive
) -> None:
    sha = hostile_archive.sha_of(hostile, hostile_archive.SEARCH_TITLE)
    results = _search(browser, served.url + "search.html", sha[:8])
    assert len(results) == 1
    assert hostile_archive.SEARCH_TITLE in results[0]["text"]


def test_search_works_from_disk(browser: Chromium, file_root: str) -> None:
    results = _search(browser, file_root + "search.html", hostile_archive.SEARCH_WORD)
    assert results
    assert all(hostile_archive.SEARCH_TITLE in r["text"] for r in results)
    assert browser.console_errors() == []


def test_the_home_search_box_carries_the_query_to_the_search_page(
    browser: Chromium, served: StaticSite
) -> None:
    browser.open(served.url + "index.html")
    browser.driver.find_element(By.ID, "home-q").send_keys(hostile_archive.SEARCH_WORD, Keys.ENTER)
    WebDriverWait(browser.driver, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results li")
    )
    assert f"q={hostile_archive.SEARCH_WORD}" in browser.driver.current_url
    browser.driver.refresh()
    WebDriverWait(browser.driver, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results li")
    )
    results = browser.run(_RESULTS)
    assert all(hostile_archive.SEARCH_TITLE in r["text"] for r in results)


def test_hostile_titles_come_back_from_search_as_text(
    browser: Chromium, served: StaticSite
) -> None:
    results = _search(browser, served.url + "search.html", "harden parser")
    assert any("<script>alert(1)</script>" in r["text"] for r in results)
    results = _search(browser, served.url + "search.html", "badges")
    assert any('onerror="alert(2)"' in r["text"] for r in results)
    assert browser.dialogs() == []
    markup = "return document.querySelectorAll('#search-results script, #search-results img');"
    assert browser.run(markup) == []


def test_a_filter_narrows_a_search_across_days_and_the_url_keeps_both(
    browser: Chromium, served: StaticSite, hostile: Archive
) -> None:
    both = _search(browser, served.url + "search.html", "parse")
    days = {hostile_archive.DAYS[0], hostile_archive.DAYS[1]}
    assert {day for day in days for r in both if day in r["text"]} == days

    Select(browser.driver.find_element(By.NAME, "importance")).select_by_value("high")
    _settle(browser)
    high = hostile_archive.sha_of(hostile, "Remove parse from the public API")
    assert _only(browser.run(_SHAS)) == high[:10]
    query = parse_qs(urlsplit(browser.driver.current_url).query)
    assert query == {"q": ["parse"], "importance": ["high"]}

    browser.driver.refresh()
    _settle(browser)
    assert _only(browser.run(_SHAS)) == high[:10]
    assert browser.driver.find_element(By.ID, "q").get_attribute("value") == "parse"
