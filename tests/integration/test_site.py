"""``repoherald site`` on a real archive written by the pipeline: inert, linked, incremental."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from repoherald.render.invisible import INVISIBLE
from repoherald.site import build_site
from repoherald.site.searchindex import term_key
from repoherald.site.terms import tokens
from tests.gitfixture import run_repoherald
from tests.sitearchive import BIDI, DAY1, DAY2, WEB_URL, make_archive, make_repo, report


class _Page(HTMLParser):
    """Links, script sources and element ids of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.scripts: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        for key in ("href", "src", "action"):
            if a.get(key) is not None:
                self.links.append(str(a[key]))
        if tag == "script":
            self.scripts.append(a.get("src"))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_archive(tmp_path_factory.mktemp("site"))


@pytest.fixture
def built(archive: Path, tmp_path: Path) -> Path:
    result = build_site(archive, tmp_path / "site", "en")
    assert result.ok and result.pages == 3
    return tmp_path / "site"


def test_hostile_commit_text_renders_inert(built: Path) -> None:
    pages = list(built.rglob("*.html"))
    assert len(pages) >= 8
    for path in pages:
        html = path.read_text(encoding="utf-8")
        assert "<script>alert" not in html and 'onmouseover="' not in html, path
        assert not re.search(f"[{INVISIBLE}]", html), path
        parsed = _parse(path)
        for link in parsed.links:
            assert not link.lower().lstrip().startswith(("javascript:", "data:")), (path, link)
            if link.startswith(("http:", "https:")):
                assert link == WEB_URL or link.startswith(WEB_URL + "/"), (path, link)
        # The only scripts are the site's own files: no inline script at all.
        assert all(src and src.endswith(".js") for src in parsed.scripts), path
    day = (built / f"2026/upstream/{DAY1}.en.html").read_text(encoding="utf-8")
    assert "Fix &lt;script&gt;alert(1)&lt;/script&gt; in [x](javascript:alert(1)) evil" in day
    assert re.search("Eve&(quot|#34); onmouseover=&(quot|#34);alert\\(2\\)", day)
    assert BIDI not in day
    # Commit links on the forge are kept.
    assert f'href="{WEB_URL}/commit/' in day


def test_links_that_are_not_plain_https_to_a_known_host_are_text(
    archive: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "archive"
    twin = json.loads((archive / f"2026/upstream/{DAY2}.json").read_text(encoding="utf-8"))
    commit = twin["repos"][0]["commits"][0]
    commit["url"] = "javascript:alert(document.cookie)"
    commit["pr_url"] = "https://evil.example/pull/1"
    commit["pr_number"] = 1
    twin["repos"][0]["web_url"] = "javascript:alert(3)"
    (copy / "2026/upstream").mkdir(parents=True)
    (copy / f"2026/upstream/{DAY2}.json").write_text(json.dumps(twin), encoding="utf-8")
    build_site(copy, tmp_path / "site", "en")
    html = (tmp_path / f"site/2026/upstream/{DAY2}.html").read_text(encoding="utf-8")
    assert "javascript:" not in html
    assert "evil.example" not in html
    assert "PR <code>#1</code>" in html


def test_every_internal_link_resolves_to_a_file_and_anchor(built: Path) -> None:
    checked = 0
    for path in built.rglob("*.html"):
        for link in _parse(path).links:
            if link.startswith(("http:", "https:")):
                continue
            parts = urlsplit(link)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            assert target.is_file(), (path, link)
            assert built.resolve() in target.parents, (path, link)
            if parts.fragment:
                assert unquote(parts.fragment) in _parse(target).ids, (path, link)
            checked += 1
    assert checked > 50


def test_pages_show_what_the_report_says(built: Path) -> None:
    home = (built / "index.html").read_text(encoding="utf-8")
    assert 'href="repos/upstream.html"' in home and "<svg" in home
    assert 'data-date="2026-08-20" data-commits="3"' in home
    en = _parse(built / f"2026/upstream/{DAY1}.en.html")
    zh = (built / f"2026/upstream/{DAY1}.html").read_text(encoding="utf-8")
    assert f"{DAY1}.html" in en.links  # the language switch, both ways
    assert f"{DAY1}.en.html" in _parse(built / f"2026/upstream/{DAY1}.html").links
    assert '<html lang="zh">' in zh and "每日更新报告" in zh
    # Every commit is in the HTML (filters only hide), with its filter data.
    day = (built / f"2026/upstream/{DAY1}.en.html").read_text(encoding="utf-8")
    assert day.count('<article class="commit"') == 3
    assert 'data-importance="medium" data-type="bugfix"' in day
    repo = (built / "repos/upstream.html").read_text(encoding="utf-8")
    assert repo.count("data-day-link") == 3  # DAY1 in two languages, DAY2 once
    trends = (built / "trends.html").read_text(encoding="utf-8")
    assert 'data-chart="types"' in trends and 'data-table="types"' in trends
    # DAY1 and DAY2 are one ISO week: 4 commits, counted once though DAY1 has two languages.
    week = re.search(r'data-table="types".*?</table>', trends, re.S)
    assert week is not None
    cells = [int(n) for n in re.findall(r"<td>(\d+)</td>", week.group(0))]
    assert sum(cells) == 4


def test_search_index_finds_titles_authors_shas_and_reasons(built: Path) -> None:
    index = (built / "search/index.js").read_text(encoding="utf-8")
    assert '"id":"2026-08","first":0' in index and '"count":4' in index

    def shard(term: str) -> dict[str, str]:
        text = (built / f"search/t-{term_key(term)}.js").read_text(encoding="utf-8")
        body = text[text.index("{") : text.rindex(")")]
        result: dict[str, str] = json.loads(body)
        return result

    assert "attention_backend" in shard("attention") and "backend" in shard("backend")
    assert "eve" in shard("eve")  # the author
    search = (built / "search.html").read_text(encoding="utf-8")
    assert '<option value="pkg">pkg</option>' in search  # filters across every day
    for path in (built / "search").rglob("*.js"):  # no e-mail address reaches the index
        assert "@example.com" not in path.read_text(encoding="utf-8"), path
    store = json.loads((built / ".repoherald-site/upstream@2026-08.json").read_text("utf-8"))
    sha = store[f"2026/upstream/{DAY2}.json"]["commits"][0][1]
    assert sha[:12] in shard(sha[:12])
    assert tokens("注意力机制") == {"注意", "意力", "力机", "机制"}


def test_an_unchanged_archive_builds_nothing_and_a_new_day_only_itself(
    archive: Path, tmp_path: Path
) -> None:
    work = tmp_path / "archive"
    shutil.copytree(archive, work)
    site = tmp_path / "site"
    first = build_site(work, site, "en")
    assert len(first.days_built) == 3
    day1 = site / f"2026/upstream/{DAY1}.html"
    before = day1.stat().st_mtime_ns
    again = build_site(work, site, "en")
    assert again.days_built == () and again.ok
    # A new day in the archive: only its page is built.
    repo = make_repo(tmp_path / "up2")
    repo.write("pkg/more.py", "def h():\n    return 2\n")
    repo.commit("Add more", when="2026-08-22T05:00:00+00:00")
    written = report(tmp_path, repo.path, "2026-08-22", "zh")
    for path in written:
        target = work / path.relative_to(tmp_path / "archive")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    third = build_site(work, site, "en")
    assert third.days_built == ("2026/upstream/2026-08-22.json",)
    assert day1.stat().st_mtime_ns == before
    assert "2026-08-22" in (site / "repos/upstream.html").read_text(encoding="utf-8")
    # A twin removed from the archive takes its page with it.
    (work / "2026/upstream/2026-08-22.json").unlink()
    fourth = build_site(work, site, "en")
    assert fourth.removed == ("2026/upstream/2026-08-22.html",)
    assert not (site / "2026/upstream/2026-08-22.html").exists()


def test_a_newer_or_corrupt_twin_is_one_line_and_the_rest_is_built(
    archive: Path, tmp_path: Path
) -> None:
    work = tmp_path / "archive"
    shutil.copytree(archive, work)
    (work / "2026/upstream/2026-08-23.json").write_text(
        '{"schema_version": 99, "date": "2026-08-23", "repos": []}', encoding="utf-8"
    )
    (work / "2026/upstream/2026-08-24.json").write_text('{"repos": [', encoding="utf-8")
    (work / "2026/upstream/2026-08-25.json").write_text(
        '{"schema_version": 1, "date": "2026-08-25", "repos": [{"name": 3, "commits": 7}]}',
        encoding="utf-8",
    )
    proc = run_repoherald(
        "site", "--archive", str(work), "--out", str(tmp_path / "site"), cwd=tmp_path
    )
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if "skipped:" in line]
    assert len(lines) == 3, proc.stderr
    assert "2026-08-23.json: written by a newer repoherald" in lines[0]
    assert "upgrade repoherald" in lines[0]
    assert "2026-08-24.json: not valid JSON" in lines[1]
    assert "2026-08-25.json: its report is damaged" in lines[2]
    assert "Traceback" not in proc.stderr
    home = (tmp_path / "site/index.html").read_text(encoding="utf-8")
    assert home.count("data-problem=") == 3
    assert (tmp_path / f"site/2026/upstream/{DAY1}.html").is_file()


def test_run_builds_the_site_when_site_out_is_set(tmp_path: Path) -> None:
    make_repo(tmp_path / "upstream")
    (tmp_path / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\nout = "reports"\n\n[site]\nout = "public"\nlang = "en"\n\n'
        '[[repos]]\nsource = "upstream"\nname = "upstream"\n',
        encoding="utf-8",
    )
    proc = run_repoherald("run", "--home", str(tmp_path / "home"), "--date", DAY1, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / f"public/2026/upstream/{DAY1}.html").is_file()
    assert '<html lang="en">' in (tmp_path / "public/index.html").read_text(encoding="utf-8")
    assert "site: " in proc.stderr


def test_a_report_of_two_repositories_lists_each_ones_commits_on_its_page(
    archive: Path, tmp_path: Path
) -> None:
    twin = json.loads((archive / f"2026/upstream/{DAY2}.json").read_text(encoding="utf-8"))
    first = twin["repos"][0]
    second = json.loads(json.dumps(first))
    second["name"] = "second"
    second["anchor"] = "second"
    for c in second["commits"]:
        c["analysis"]["importance"] = "high"
        c["title"] = "Second repository's high commit"
        c["anchor"] = "second-repositorys-high-commit"
    twin["repos"].append(second)
    work = tmp_path / "archive"
    (work / "2026/both").mkdir(parents=True)
    (work / f"2026/both/{DAY2}.json").write_text(json.dumps(twin), encoding="utf-8")
    assert build_site(work, tmp_path / "site", "en").ok
    page = (tmp_path / "site/repos/second.html").read_text(encoding="utf-8")
    assert "Second repository&#x27;s high commit" in page


def test_a_damaged_kept_postings_file_rebuilds_its_month(archive: Path, tmp_path: Path) -> None:
    work = tmp_path / "archive"
    shutil.copytree(archive, work)
    site = tmp_path / "site"
    build_site(work, site, "en")
    shard = site / f"search/t-{term_key('attention')}.js"
    kept = site / ".repoherald-site/search/2026-08.json"
    kept.write_text('{"meta": {', encoding="utf-8")
    # A day of another month: the archive's term shards are joined again, August's too.
    repo = make_repo(tmp_path / "up2")
    repo.write("pkg/more.py", "def h():\n    return 2\n")
    repo.commit("Add more", when="2026-09-02T05:00:00+00:00")
    for path in report(tmp_path, repo.path, "2026-09-02", "en"):
        target = work / path.relative_to(tmp_path / "archive")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    again = build_site(work, site, "en")
    assert again.ok
    assert "attention_backend" in shard.read_text(encoding="utf-8")
    assert json.loads(kept.read_text(encoding="utf-8"))["meta"]["count"] == 4
