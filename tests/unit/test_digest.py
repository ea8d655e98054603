"""The chat digest: counts, 🔴 lines with links, and fitting a limit by whole lines."""

from __future__ import annotations

from datetime import date

import pytest

from repoherald.render.digest import (
    Digest,
    DigestItem,
    digest_from_view,
    render_digest,
    report_url,
    size,
)
from repoherald.render.view import ReportView, build_view
from tests.unit.test_view import _report

DAY = date(2026, 4, 1)


def _digest(n: int, lang: str = "zh") -> Digest:
    items = tuple(
        DigestItem(
            f"修复第{i}个崩溃 <b>&amp; [x](javascript:1)", f"https://github.com/o/r/pull/{i}"
        )
        for i in range(n)
    )
    counts = {"high": n, "medium": 7, "low": 3}
    return Digest("vllm", DAY, lang, counts, items, "https://example.com/r/2026-04-01.md")


def test_everything_fits_when_there_is_room() -> None:
    text, left = render_digest(_digest(3), "markdown", 10_000)
    assert left == 0
    assert text.count("🔴 [") == 3
    assert "🟡 7" in text and "共 13 个提交" in text
    assert "(https://example.com/r/2026-04-01.md)" in text
    assert "[x](javascript" not in text  # the title's markup is escaped, not a link


@pytest.mark.parametrize("limit", [300, 777, 1500, 4096])
def test_a_limit_in_bytes_cuts_whole_items_and_says_how_many(limit: int) -> None:
    text, left = render_digest(_digest(100), "markdown", limit, "bytes")
    assert size(text, "bytes") <= limit
    text.encode("utf-8").decode("utf-8")  # whole characters
    kept = [line for line in text.splitlines() if line.startswith("🔴 [")]
    assert len(kept) + left == 100 and left > 0
    assert f"另有 {left} 条" in text
    for line in kept:
        assert line.endswith(")") and "](https://github.com/o/r/pull/" in line


def test_slack_escapes_its_three_characters_and_links_with_pipes() -> None:
    text, _ = render_digest(_digest(1, "en"), "slack", 3000)
    assert "&lt;b&gt;&amp;amp;" in text
    assert "<https://github.com/o/r/pull/0|" in text
    assert "*vllm · 2026-04-01*" in text


def test_the_view_gives_the_same_counts_as_the_report() -> None:
    view: ReportView = build_view(_report("en"))
    d = digest_from_view(view, "app")
    assert d.total == len(view.commits)
    assert len(d.high) == d.counts["high"]


def test_report_url_template() -> None:
    url = report_url("https://h/{year}/{name}/{date}.{lang}.md", name="a", day=DAY, lang="en")
    assert url == "https://h/2026/a/2026-04-01.en.md"
    assert report_url(None, name="a", day=DAY, lang="en") is None
