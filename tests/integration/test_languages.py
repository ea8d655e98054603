"""One rule analysis serves every report language.

A Chinese and an English report of the same day share the cached rule
analyses: the second language analyses nothing, and its report is the one
a fresh run in that language writes.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from repoherald.analysis.verdict.rules import RULES_VERSION
from repoherald.config import build_settings
from repoherald.pipeline import run
from repoherald.render.digest import digest_from_twin, render_digest
from repoherald.render.twin import read as read_twin
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture

DAY = "2026-04-02"


def _commits(repo: GitFixture) -> None:
    repo.write("src/app/core.py", "def run(x):\n    return x\n")
    repo.commit("[Feature] Add the core (#1)", when=datetime(2026, 4, 2, 8, tzinfo=UTC))
    repo.write("src/app/core.py", "def run(x, y=0):\n    return x + y\n")
    repo.write("docs/core.md", "# Core\n")
    repo.commit(
        "[Bugfix] Fix crash in run (#2)\n\nReported by ann@example.com.\n",
        when=datetime(2026, 4, 2, 9, tzinfo=UTC),
    )


def _report(out: Path, home: Path, repo: GitFixture, lang: str, cwd: Path) -> tuple[str, str]:
    settings = build_settings(
        repos=(str(repo.path),), day=DAY, tz="UTC", lang=lang, out=str(out), home=str(home),
        cwd=cwd,
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    md = next(p for p in result.written if p.suffix == ".md").read_text(encoding="utf-8")
    twin = next(p for p in result.written if p.suffix == ".json").read_text(encoding="utf-8")
    return _stable(md), _stable(twin)


def _stable(text: str) -> str:
    text = re.sub(r"(生成时间：|Generated: )[^\n]*", r"\1X", text)
    return re.sub(r'"generated_at":"[^"]*"', '"generated_at":"X"', text)


def test_the_second_language_reuses_the_rule_analyses(git_repo: GitFixture, tmp_path: Path) -> None:
    _commits(git_repo)
    shared = tmp_path / "shared-home"
    zh_md, _ = _report(tmp_path / "zh", shared, git_repo, "zh", tmp_path)
    with Store.open(shared / "repoherald.db") as store:
        analysers = [row[0] for row in store.conn.execute("SELECT analyser FROM analyses")]
    assert analysers == [f"rules/{RULES_VERSION}"] * 2, "keyed without a language"

    settings = build_settings(
        repos=(str(git_repo.path),), day=DAY, tz="UTC", lang="en", out=str(tmp_path / "en"),
        home=str(shared), cwd=tmp_path,
    )  # fmt: skip
    second = run(settings)
    assert (second.analysed, second.cached) == (0, 2)

    en_md, en_twin = (
        _stable(p.read_text(encoding="utf-8"))
        for p in sorted(second.written, key=lambda p: p.suffix != ".md")
    )
    fresh_md, fresh_twin = _report(
        tmp_path / "fresh", tmp_path / "fresh-home", git_repo, "en", tmp_path
    )
    assert (en_md, en_twin) == (fresh_md, fresh_twin)
    assert "Bug fix" in en_md and "问题修复" in zh_md
    assert "ann@example.com" not in en_md + en_twin + zh_md


_CJK_OR_FULL_WIDTH = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_an_english_report_has_no_chinese_characters_or_punctuation(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    """Everything the tool writes in English is English; the commits' own words are theirs."""
    _commits(git_repo)
    git_repo.write("src/app/core.py", "def run(x, y=0, *, z=1):\n    return x + y + z\n")
    title, body, author = "[Bugfix] 修复 run 的崩溃！", "每个调用者都崩溃了！", "李雷"
    git_repo.commit(
        f"{title}\n\n{body}\n", when=datetime(2026, 4, 2, 10, tzinfo=UTC), author=(author, "l@x.y")
    )
    md, twin = _report(tmp_path / "en", tmp_path / "home", git_repo, "en", tmp_path)
    index = (tmp_path / "en" / "index.md").read_text(encoding="utf-8")
    chat, _ = render_digest(digest_from_twin(read_twin(twin), "app"), "markdown", 4000)
    quoted = set(title + body + author)
    assert _CJK_OR_FULL_WIDTH.search(md), "the commit's own words are shown"
    for text in (md, twin, index, chat):
        ours = {c for c in _CJK_OR_FULL_WIDTH.findall(text) if c not in quoted}
        assert not ours, sorted(ours)
    assert "**: " in md and "**：" not in md


def test_english_list_items_start_with_a_capital(git_repo: GitFixture, tmp_path: Path) -> None:
    _commits(git_repo)
    git_repo.write("src/app/core.py", "def run(x, y=0, *, z=1):\n    return x + y + z\n" * 40)
    git_repo.commit("[Bugfix] Fix a crash in run", when=datetime(2026, 4, 2, 10, tzinfo=UTC))
    md, _twin = _report(tmp_path / "en", tmp_path / "home", git_repo, "en", tmp_path)
    items = re.findall(r"^(?:- |\d+\. )(?:\*\*[^*]+\*\*: )?(\S)", md, re.M)
    assert items and all(not c.islower() for c in items), md
