"""The typed report view, and the two renderers that read it.

The view is built once per report and language; the Markdown page and the
JSON twin must show the same commits, counts, groups and anchors because
they read the same object.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from repoherald import i18n
from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.models import (
    Commit,
    DayReport,
    Entry,
    FileChange,
    FileStatus,
    Importance,
    Person,
    RepoSection,
    Text,
)
from repoherald.publish.base import Publication
from repoherald.render import twin
from repoherald.render.markdown import render_markdown
from repoherald.render.view import ReportView, build_view

M, A = FileStatus.MODIFIED, FileStatus.ADDED
TZ = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 4, 1)
COMMITS = [
    ("[Bugfix] Fix crash in the scheduler (#3)", [("src/app/sched.py", M, 9, 2)]),
    ("[Doc] Update the guide", [("docs/guide.md", M, 4, 1)]),
    ("Add a cache for <ann@example.com> lookups", [("src/app/cache.py", A, 40, 0)]),
    ("[Doc] Update the guide", [("docs/other.md", M, 1, 1)]),
]


def _entries() -> tuple[Entry, ...]:
    extractor = FactsExtractor(AreaRules(), lambda oid: None)
    rules = RuleAnalyser()
    out = []
    for i, (title, files) in enumerate(COMMITS):
        who = Person(f"Dev {i % 2} <dev{i % 2}@example.com>", f"dev{i}@example.com")
        ts = int(datetime(2026, 4, 1, 3 - i, tzinfo=UTC).timestamp())
        sha = f"{i:x}" * 40
        commit = Commit(sha, ("f" * 40,), who, ts, 480, who, ts, 480, title)
        changes = [FileChange(path=p, status=s, added=a, deleted=d) for p, s, a, d in files]
        facts = extractor.extract(commit, changes)
        out.append(Entry(commit, facts, rules.analyse(commit, facts)))
    return tuple(out)


def _report(lang: str, sections: tuple[RepoSection, ...] | None = None) -> DayReport:
    start = datetime(2026, 4, 1, tzinfo=TZ)
    return DayReport(
        day=DAY,
        tz_name="Asia/Shanghai",
        start=start,
        end=datetime(2026, 4, 2, tzinfo=TZ),
        lang=lang,
        sections=sections
        or (RepoSection("acme/app", "main", "https://github.com/acme/app", _entries()),),
        analysers=(RuleAnalyser.name,),
        generated_at=datetime(2026, 4, 2, 1, 2, 3, tzinfo=UTC),
        version="9.9",
    )


@pytest.fixture(params=["zh", "en"])
def view(request: pytest.FixtureRequest) -> ReportView:
    return build_view(_report(request.param))


def test_groups_counts_and_anchors(view: ReportView) -> None:
    (section,) = view.sections
    assert [g.importance for g in section.groups] == [
        Importance.HIGH,
        Importance.MEDIUM,
        Importance.LOW,
    ]
    grouped = [c.sha for g in section.groups for c in g.commits]
    assert sorted(grouped) == sorted(c.sha for c in section.commits), "each commit in one group"
    assert section.stats.importance == {
        imp: sum(1 for c in section.commits if c.importance is imp) for imp in Importance
    }
    assert section.stats.commits == 4 and section.stats.authors == 2
    anchors = [section.anchor, section.stats_anchor] + [g.anchor for g in section.groups]
    anchors += [c.anchor for c in section.commits]
    assert all(anchors) and len(set(anchors)) == len(anchors)
    docs = [c for c in section.commits if c.title == "[Doc] Update the guide"]
    assert [c.anchor for c in docs] == ["doc-update-the-guide", "doc-update-the-guide-1"]


def test_commit_text_is_localised_and_addresses_hidden(view: ReportView) -> None:
    cache = view.sections[0].commits[2]
    assert cache.title == "Add a cache for <email> lookups"
    assert "@" not in cache.author and "<email>" in cache.author
    assert cache.url == "https://github.com/acme/app/commit/" + "2" * 40
    fix = view.sections[0].commits[0]
    assert fix.pr_url == "https://github.com/acme/app/pull/3" and fix.pr_number == 3
    assert fix.author_time.utcoffset() == TZ.utcoffset(fix.author_time.replace(tzinfo=None))
    word = "问题修复" if view.lang == "zh" else "Bug fix"
    assert fix.type_label == word and fix.analysis.summary.startswith(word)
    assert all(isinstance(r, str) for r in fix.analysis.reasons)
    assert fix.reasons == ("；" if view.lang == "zh" else "; ").join(fix.analysis.reasons)


def test_markdown_and_json_read_the_same_view(view: ReportView) -> None:
    md = render_markdown(view)
    data = json.loads(twin.write(view))
    (repo,) = data["repos"]
    section = view.sections[0]
    assert [c["anchor"] for c in repo["commits"]] == [c.anchor for c in section.commits]
    assert repo["stats"]["importance"] == {i.value: n for i, n in section.stats.importance.items()}
    assert repo["anchor"] == section.anchor
    links = set(re.findall(r"\]\(#([^)]+)\)", md))
    assert {c.anchor for c in section.commits} | {g.anchor for g in section.groups} <= links
    for group in section.groups:
        assert f"### {group.title}\n" in md
    assert md.splitlines()[3] == "> " + view.generated
    assert data["generated_at"] == "2026-04-02T09:02:03+08:00"
    assert "@" not in json.dumps(data)


def test_the_twin_reads_back_as_written(view: ReportView) -> None:
    """The typed model holds every field the writer writes, with its value unchanged."""
    text = twin.write(view)
    read = twin.read(text)
    assert read.repos[0].commits[0].sha == view.sections[0].commits[0].sha
    assert read.model_dump(mode="json", exclude_unset=True) == json.loads(text)


def test_a_twin_of_a_newer_format_is_one_clear_error(view: ReportView) -> None:
    data = json.loads(twin.write(view)) | {"schema_version": twin.SCHEMA_VERSION + 1}
    with pytest.raises(twin.TwinError, match=r"newer format .* upgrade repoherald"):
        twin.read(json.dumps(data))
    with pytest.raises(twin.TwinError, match="newer format"):
        twin.read_stamp(json.dumps(data))
    with pytest.raises(twin.TwinError, match="damaged: run that day again"):
        twin.read(twin.write(view)[:-20])


def test_one_report_two_languages_same_structure() -> None:
    zh, en = build_view(_report("zh")), build_view(_report("en"))
    assert (
        zh.title == "每日更新报告（2026-04-01）" and en.title == "Daily update report (2026-04-01)"
    )
    assert [c.sha for c in zh.commits] == [c.sha for c in en.commits]
    assert twin.read(twin.write(zh)).repos[0].stats == twin.read(twin.write(en)).repos[0].stats
    assert zh.sections[0].stats.types != en.sections[0].stats.types


def test_llm_notes_show_prose_and_messages() -> None:
    entries = _entries()
    failed = replace(
        entries[0],
        analysis=replace(entries[0].analysis, llm_error="LLM analysis failed: HTTP 503 (x@y.io)"),
    )
    broken = replace(entries[1], analysis=replace(entries[1].analysis, error=Text("rule.none")))
    section = RepoSection("acme/app", "main", None, (failed, broken))
    view = build_view(_report("en", (section,)))
    first, second = view.sections[0].commits
    assert first.llm_notes == (
        "⚠️ LLM analysis failed: HTTP 503 (<email>); the rule analysis is shown instead.",
    )
    assert second.error == "none" and second.url is None


def test_a_failed_repository_has_no_statistics_heading() -> None:
    sections = (RepoSection("acme/gone", "?", None, (), error="could not clone"),)
    view = build_view(_report("zh", sections))
    (section,) = view.sections
    assert section.stats_anchor == "" and section.groups == () and section.stats.commits == 0
    md = render_markdown(view)
    assert "❌ 无法读取该仓库：could not clone" in md and "📊" not in md
    assert view.usage_line == "" and view.usage.commits == 0


def test_a_rerun_in_a_language_of_other_words_has_the_same_content_hash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A third catalogue, with its own word for "generated": a later re-run is unchanged.

    The hash must not know any language's words, only what the report was made from.
    """
    words = {"generated_at": "Made on {time}", "title": "Day sheet ({date})"}
    monkeypatch.setitem(i18n.CATALOGUES, "xx", i18n.CATALOGUES["en"] | words)

    def pair(report: DayReport) -> Publication:
        view = build_view(report)
        return Publication("app", "", DAY, "xx", render_markdown(view), twin.write(view))

    first = pair(_report("xx"))
    later = pair(replace(_report("xx"), generated_at=datetime(2026, 4, 3, 7, tzinfo=UTC)))
    assert "> Made on 2026-04-02 09:02:03" in first.markdown
    assert (first.markdown, first.json) != (later.markdown, later.json)
    assert first.content_hash() == later.content_hash()
    changed = replace(_report("xx"), version="10.0")
    assert pair(changed).content_hash() != first.content_hash()
