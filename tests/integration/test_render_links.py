"""Generated reports are well-formed GitHub Markdown whose internal links all resolve.

The checker is independent of the renderer: it parses the Markdown with a
CommonMark parser, takes each heading's rendered text and runs it through
GitHub's slugger, then requires every ``#fragment`` link to name one of them.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import date
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from bench.replay import BASELINE_TITLE, build_repo, load_shapes
from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.markdown_links import heading_ids_and_links

SAMPLE = Path(__file__).parents[1] / "data" / "shapes-2026-08-17_22.jsonl"
DAYS = [date(2026, 8, d) for d in range(17, 23)]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    base = tmp_path_factory.mktemp("links")
    build_repo(load_shapes(SAMPLE, None, None), base / "repo")
    out: dict[str, list[Path]] = {}
    for lang in ("zh", "en"):
        settings = build_settings(
            repos=(str(base / "repo"),), since="2026-08-17", until="2026-08-22", lang=lang,
            out=str(base / f"out-{lang}"), home=str(base / "home"), cwd=base,
        )  # fmt: skip
        result = run(settings)
        assert result.ok, result.failures
        out[lang] = sorted(p for p in result.written if p.suffix == ".md")
    return out


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_internal_link_resolves(reports: dict[str, list[Path]], lang: str) -> None:
    assert len(reports[lang]) == len(DAYS)
    for path in reports[lang]:
        md = path.read_text(encoding="utf-8")
        ids, links, _ = heading_ids_and_links(md)
        assert links, f"{path} has a table of contents"
        missing = [link for link in links if link not in ids]
        assert not missing, f"{path}: dead links {missing[:5]}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hierarchy_and_counts(reports: dict[str, list[Path]], lang: str) -> None:
    shapes = load_shapes(SAMPLE, None, None)
    for path in reports[lang]:
        md = path.read_text(encoding="utf-8")
        twin = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        day = twin["date"]
        expected = [s for s in shapes if _local_day(s["committer_date"]) == day]
        commits = twin["repos"][0]["commits"]
        titles = [c["title"] for c in commits if c["title"] != BASELINE_TITLE]
        assert titles == [s["title"] for s in reversed(expected)], day
        expected_n = len(commits)
        _, _, heads = heading_ids_and_links(md)
        levels = [lvl for lvl, _ in heads]
        assert levels[0] == 1 and levels.count(1) == 1
        assert levels.count(2) == 1, "one H2 per repository"
        assert levels.count(4) == expected_n, "one H4 per commit, nothing more"
        for prev, cur in itertools.pairwise(levels):
            assert cur <= prev + 1, f"heading level jumps in {path}"
        html = MarkdownIt("commonmark").enable("table").render(md)
        if not expected_n:
            assert "<table" not in html
            assert "本日没有新的提交" in md or "No new commits" in md
            continue
        table_rows = html.split("</table>")[0].count("<tr") - 1
        assert table_rows == expected_n
        stat = re.search(r"(\d+) (?:个提交|commits today)", md)
        assert stat and int(stat.group(1)) == expected_n
        for c in commits:
            assert md.count(f"`{c['short_sha']}`") >= 2, "in the table and in the details"


def _local_day(iso: str) -> str:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return datetime.fromisoformat(iso).astimezone(ZoneInfo("Asia/Shanghai")).date().isoformat()
