"""Cutting a report for GitHub issues: within the limit, at commit boundaries, nothing lost."""

from __future__ import annotations

import re
from datetime import date

from repoherald.i18n import t
from repoherald.publish.github_issue.split import link_parts, size, split_report
from repoherald.publish.github_issue.text import marker, no_backlinks, read_marker

NOTE = "\n\n" + t("en", "issue.continued") + "\n"


def _commit(i: int, lines: int, width: int = 60) -> str:
    body = "".join(f"- line {j} of commit {i} " + "é" * width + "\n" for j in range(lines))
    return f"#### Commit {i}\n\n**SHA**：`{i:07x}` · [view](https://example.com/c/{i})\n{body}\n"


def _report(commits: list[str]) -> str:
    toc = "".join(f"  - [Commit {i}](#commit-{i})\n" for i in range(len(commits)))
    return (
        "# Day\n\n**Contents**\n\n- [app](#app)\n"
        + toc
        + "\n## app\n\n### 🔴 High\n"
        + ("".join(commits))
    )


def _unsplit(parts: list[str]) -> str:
    """The parts joined, without the notes the cut added (a cut line was given a newline)."""
    return "".join(p.replace(NOTE, "") for p in parts)


def test_parts_break_between_commits_and_fit() -> None:
    md = _report([_commit(i, 30) for i in range(40)])
    parts = split_report(md, 20_000, 80, "en")
    assert len(parts) > 3 and all(size(p.text) <= 20_000 for p in parts)
    assert "".join(p.text for p in parts) == md  # no commit was cut: nothing added
    assert parts[0].text.startswith("# Day") and "[Commit 39](#commit-39)" in parts[0].text
    for p in parts[1:]:
        assert p.text.startswith("#### Commit ")
    final = link_parts(parts, "https://gh/o/n/issues/7", list(range(101, 101 + len(parts))))
    for i, text in enumerate(final):
        assert size(text) <= 20_000
        for n, target in re.findall(r"\[Commit (\d+)\]\(([^)]*)\)", text):
            home = next(k for k, p in enumerate(parts) if f"#### Commit {n}\n" in p.text)
            expected = "#commit-" + n if home in (0, i) else f"#issuecomment-{100 + home}"
            assert target.endswith(expected), (i, n, target)


def test_a_commit_longer_than_a_part_is_cut_at_lines_with_a_note() -> None:
    huge = _commit(1, 900)
    md = _report([_commit(0, 3), huge, _commit(2, 3)])
    parts = [p.text for p in split_report(md, 20_000, 80, "en")]
    assert all(size(p) <= 20_000 for p in parts)
    assert _unsplit(parts) == md
    cut = [p for p in parts if p.endswith(NOTE)]
    assert cut and all(p[: -len(NOTE)].endswith("\n") for p in cut)  # whole lines only


def test_one_line_longer_than_a_part_is_cut_at_a_space_outside_links() -> None:
    words = " ".join(f"[w{i} x y](https://example.com/{i})" for i in range(3000))
    md = "# Day\n\n## app\n\n#### Big\n\n" + words + "\n"
    parts = [p.text for p in split_report(md, 10_000, 0, "en")]
    assert len(parts) > 5 and all(size(p) <= 10_000 for p in parts)
    for p in parts:
        text = p.replace(NOTE, "")
        assert text.count("[") == text.count("](")  # every link whole
    joined = "".join(p.replace(NOTE, "") for p in parts)
    assert " \n" not in md and joined.replace(" \n", " ") == md  # cuts only after spaces


def test_emoji_count_twice_so_parts_stay_under_githubs_count() -> None:
    md = "# Day\n\n" + "".join(f"#### 🔴 {i}\n\n" + "🟢" * 500 + "\n\n" for i in range(50))
    parts = split_report(md, 5_000, 0, "en")
    assert all(len(p.text.encode("utf-16-le")) // 2 <= 5_000 for p in parts)
    assert "".join(p.text for p in parts) == md


def test_the_marker_counts_only_at_the_very_start() -> None:
    head = marker("owner/app", date(2026, 4, 1))
    assert read_marker(head + "report") == ("owner/app", date(2026, 4, 1), None)
    assert read_marker("text\n" + head) is None and read_marker(" " + head) is None
    assert read_marker(marker("app", date(2026, 4, 1), 3)) == ("app", date(2026, 4, 1), 3)
    assert read_marker(head.replace("2026-04-01", "2026-13-01")) is None
    assert marker("a b-->", date(2026, 4, 1)).count("-->") == 1


def test_links_to_upstream_pull_requests_leave_no_mention_on_them() -> None:
    md = (
        "[PR #12](https://github.com/o/n/pull/12) [c](https://github.com/o/n/commit/abc)"
        " [i](https://github.com/o/n/issues/3) [e](https://ghe.example.com/o/n/pull/1)"
    )
    assert no_backlinks(md) == (
        "[PR #12](https://redirect.github.com/o/n/pull/12) [c](https://github.com/o/n/commit/abc)"
        " [i](https://redirect.github.com/o/n/issues/3) [e](https://ghe.example.com/o/n/pull/1)"
    )


def test_bare_urls_of_upstream_pull_requests_leave_no_mention_either() -> None:
    """A commit message quoting a PR's address: GitHub links a bare URL in text itself."""
    md = "see https://github.com/o/n/pull/12, (https://github.com/o/n/issues/3) or <https://github.com/o/n/pull/4>"
    assert no_backlinks(md) == md.replace("https://github.com/", "https://redirect.github.com/")
    assert no_backlinks("https://x.test/https://github.com/o/n/pull/1") == (
        "https://x.test/https://github.com/o/n/pull/1"
    )
