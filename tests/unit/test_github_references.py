"""Rendered text must not ping anyone or link an issue when it is posted on GitHub.

GitHub looks for ``@name``, ``#12``, ``GH-12`` and ``owner/repo#12`` in the
*rendered* text of an issue, outside code spans and links, so these tests
render the Markdown and look where GitHub looks.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from markdown_it import MarkdownIt

from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.models import Commit, Entry, FileChange, FileStatus, Person, RepoSection
from repoherald.render import escape
from repoherald.render.markdown import render_markdown
from repoherald.render.view import build_view
from tests.unit.test_view import _report

MD = MarkdownIt("commonmark").enable("table")
REFERENCE = re.compile(r"@[A-Za-z0-9]|#[0-9]|\bGH-[0-9]", re.IGNORECASE)
HOSTILE = "Fix #123 (acme/app#9, GH-77, gh-5), thanks @alice and @bob-x"


def github_references(markdown: str) -> list[str]:
    """The mentions and issue references GitHub would find in ``markdown``'s rendered text."""
    found: list[str] = []
    for block in MD.parse(markdown):
        in_link = 0
        for tok in block.children or []:
            in_link += tok.type == "link_open"
            in_link -= tok.type == "link_close"
            if tok.type == "text" and not in_link:
                found += [m.group(0) for m in REFERENCE.finditer(tok.content)]
    return found


def test_the_helper_sees_what_github_links() -> None:
    assert github_references("Fix #123, thanks @alice, GH-7") == ["#1", "@a", "GH-7"]
    assert github_references("a `#123 @alice` [#4](https://x.test/4)") == []
    assert github_references("\\#123") == ["#1"], "a backslash does not hide it from GitHub"


def test_untrusted_text_neither_pings_nor_links_and_reads_the_same() -> None:
    for render in (escape.inline, escape.cell, escape.rich, escape.rich_cell):
        md = render(HOSTILE)
        assert github_references(md) == [], (render.__name__, md)
        shown = "".join(t.content for b in MD.parse(md) for t in b.children or [])
        assert shown.replace("\u200b", "") == HOSTILE


def test_code_spans_stay_literal() -> None:
    md = escape.rich("use `@cache` and `#include <x>` for @alice")
    codes = [t.content for b in MD.parse(md) for t in b.children or [] if t.type == "code_inline"]
    assert codes == ["@cache", "#include <x>"]
    assert github_references(md) == []
    assert escape.plain_heading_text("`@cache` for @alice") == "@cache for @\u200balice"


def _entry(title: str, i: int) -> Entry:
    who = Person("Dev <dev@example.com>", "dev@example.com")
    ts = int(datetime(2026, 4, 1, 3, i, tzinfo=UTC).timestamp())
    commit = Commit(f"{i:x}" * 40, ("f" * 40,), who, ts, 480, who, ts, 480, title)
    changes = [FileChange(path=f"src/m{i}.py", status=FileStatus.MODIFIED, added=3, deleted=1)]
    facts = FactsExtractor(AreaRules(), lambda oid: None).extract(commit, changes)
    return Entry(commit, facts, RuleAnalyser().analyse(commit, facts))


def test_a_report_without_links_names_its_pull_requests_without_linking_them() -> None:
    """A local repository has no web URL: ``PR #3`` would link issue 3 of the issue's repo."""
    entries = (_entry("[Bugfix] Fix a crash in the scheduler (#3)", 1), _entry(HOSTILE, 2))
    for lang in ("zh", "en"):
        section = RepoSection("acme/app", "main", None, entries)
        markdown = render_markdown(build_view(_report(lang, (section,))))
        assert "PR `#3`" in markdown
        assert github_references(markdown) == []
