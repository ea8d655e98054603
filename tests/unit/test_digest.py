"""The chat digest: counts, 🔴 lines with links, and fitting a limit by whole lines."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

import pytest
from pydantic import ValidationError

from repoherald.publish.webhook.publisher import WebhookOptions
from repoherald.publish.webhook.report_url import check_report_url, report_url
from repoherald.render.digest import (
    Digest,
    DigestItem,
    digest_from_view,
    render_digest,
    size,
    slack_blocks,
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


def test_slack_blocks_split_sections_at_item_boundaries() -> None:
    blocks, left = slack_blocks(_digest(40, "en"), section_max=700)
    assert left == 0
    assert blocks[0]["type"] == "header" and blocks[-1]["type"] == "context"
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert len(sections) > 3 and all(len(s) <= 700 for s in sections)
    lines = [ln for s in sections for ln in s.splitlines()]
    assert len(lines) == 40  # every item once, none split across two sections
    for i, line in enumerate(lines):
        assert line.startswith(f"🔴 <https://github.com/o/r/pull/{i}|") and line.endswith(">")


@pytest.mark.parametrize(("max_blocks", "total_max"), [(5, 100_000), (50, 2_000)])
def test_slack_blocks_cut_whole_items_and_say_how_many(max_blocks: int, total_max: int) -> None:
    blocks, left = slack_blocks(
        _digest(100, "en"), section_max=500, max_blocks=max_blocks, total_max=total_max
    )
    assert len(blocks) <= max_blocks and 0 < left < 100
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    kept = [ln for s in sections for ln in s.splitlines()]
    assert len(kept) + left == 100 and all(ln.endswith(">") for ln in kept)
    context = [e["text"] for e in blocks[-1]["elements"]]
    assert f"… and {left} more 🔴 {'item' if left == 1 else 'items'} left out" in context
    assert blocks[0]["text"]["text"] == "vllm · 2026-04-01" and "110 commits" in context[0]


def test_slack_header_is_plain_text_within_150_characters() -> None:
    d = Digest("名" * 300, DAY, "zh", {"high": 0}, ())
    blocks, _ = slack_blocks(d)
    header = blocks[0]["text"]
    assert header["type"] == "plain_text" and len(header["text"]) == 150
    assert header["text"].endswith("…")


def test_without_report_url_the_digest_says_where_the_report_is() -> None:
    d = replace(_digest(1), report_url=None, location="reports/2026/vllm/2026-04-01.md")
    text, _ = render_digest(d, "markdown", 10_000)
    assert "完整报告：归档中的 `reports/2026/vllm/2026-04-01.md`" in text
    en = replace(d, lang="en")
    assert (
        "Full report: `reports/2026/vllm/2026-04-01.md` in the archive"
        in (render_digest(en, "slack", 10_000)[0])
    )
    linked = replace(d, report_url="https://example.com/r/2026-04-01.md")
    text, _ = render_digest(linked, "markdown", 10_000)
    assert "[完整报告](https://example.com/r/2026-04-01.md)" in text and "归档中" not in text


def test_report_url_fills_every_field_and_quotes_the_name() -> None:
    template = "https://h/{year}/{month}/{day}/{name}/{date}.{lang}.md"
    url = report_url(template, name="my app#1", day=DAY, lang="zh")
    assert url == "https://h/2026/04/01/my%20app%231/2026-04-01.zh.md"
    assert check_report_url(template) == template


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("https://h/{dat}.md", "field {dat} is not allowed"),
        ("https://h/{date.md", "a literal brace"),
    ],
)
def test_a_bad_report_url_is_a_config_error(template: str, message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        WebhookOptions(kind="slack", url_env="HOOK", report_url=template)
