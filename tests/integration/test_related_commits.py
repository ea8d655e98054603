"""Related commits linked across days: a revert days later, its re-land, fixes and follow-ups.

One real repository over five days, reported day by day with one home (one
store), as ``run`` does each morning; then the first day run again. Each
link must show on both commits' entries, in the Markdown and in the twin,
in both languages, and a link's text from a stranger's title must stay inert.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

WEB = "https://github.com/acme/widget"
HOSTILE = "Tune <img src=x onerror=alert(1)> [x](javascript:alert(1)) @admin #12 `|`"


def _build(path: Path) -> dict[str, str]:
    """Five days of commits; returns their SHAs by a short name."""
    repo = GitFixture.init(path)
    shas: dict[str, str] = {}
    repo.write_many({"moe.py": "def moe():\n    return 1\n", "sampler.py": "SEED = 0\n"})
    repo.commit("Initial import", when="2026-08-10T00:30:00+00:00")
    repo.write("moe.py", "def moe():\n    return 2\n")
    shas["feature"] = repo.commit("Add fused MoE kernel (#101)", when="2026-08-10T02:00:00+00:00")
    repo.write("sampler.py", "SEED = 1\n")
    shas["refactor"] = repo.commit("Refactor sampler (#102)", when="2026-08-10T03:00:00+00:00")
    repo.write("flash.py", "FALLBACK = True\n")
    shas["fallback"] = repo.commit(
        "Add FlashInfer fallback (#103)", when="2026-08-10T03:30:00+00:00"
    )
    repo.write("sampler.py", "SEED = 2\n")
    shas["hostile"] = repo.commit(HOSTILE, when="2026-08-10T04:00:00+00:00")
    # Day 3: the feature is reverted, as `git revert` writes it.
    repo.write("moe.py", "def moe():\n    return 1\n")
    shas["revert"] = repo.commit(
        f'Revert "Add fused MoE kernel (#101)"\n\nThis reverts commit {shas["feature"]}.\n',
        when="2026-08-13T02:00:00+00:00",
    )
    repo.remove("flash.py")
    shas["removal"] = repo.commit("Remove FlashInfer fallback", when="2026-08-13T03:00:00+00:00")
    # Day 5: re-landed, a fix of the refactor, a follow-up of the PR, a fix of nothing known.
    repo.write("moe.py", "def moe():\n    return 3\n")
    shas["reland"] = repo.commit(
        'Reapply "Add fused MoE kernel (#101)" (#120)', when="2026-08-15T02:00:00+00:00"
    )
    repo.write("flash.py", "FALLBACK = True\n")
    shas["add_back"] = repo.commit(
        "Add back FlashInfer fallback (#125)", when="2026-08-15T02:30:00+00:00"
    )
    repo.write("sampler.py", "SEED = 3\n")
    shas["fix"] = repo.commit(
        f'Fix sampler seed\n\nFixes: {shas["refactor"][:12]} ("Refactor sampler")\n',
        when="2026-08-15T03:00:00+00:00",
    )
    repo.write("moe.py", "def moe():\n    return 4\n")
    shas["followup"] = repo.commit(
        "Tune MoE block sizes\n\nFollow-up to #101.\n", when="2026-08-15T04:00:00+00:00"
    )
    repo.write("sampler.py", "SEED = 4\n")
    shas["unknown"] = repo.commit(
        'Fix crash on empty batch\n\nFixes: deadbeefcafe ("Something older")\n',
        when="2026-08-15T05:00:00+00:00",
    )
    repo.write("sampler.py", "SEED = 5\n")
    shas["of_hostile"] = repo.commit(
        f"Fix the tuning\n\nfixes {shas['hostile'][:8]}\n", when="2026-08-15T06:00:00+00:00"
    )
    return shas


def _report(tmp: Path, repo: Path, day: str, lang: str) -> tuple[dict[str, Any], str, Path]:
    settings = build_settings(
        day=day, tz="UTC", lang=lang, out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(repo),), web_url=WEB, name="widget",
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    md = next(p for p in result.written if p.suffix == ".md")
    twin = json.loads(md.with_suffix(".json").read_text("utf-8"))
    return twin, md.read_text("utf-8"), md


def _related(twin: dict[str, Any], title: str) -> list[tuple[str, str, str]]:
    """(kind, sha, day) of each link of the commit titled ``title``."""
    commit = next(c for c in twin["repos"][0]["commits"] if c["title"] == title)
    return [(r["kind"], r["sha"], r["day"]) for r in commit["related"]]


def _entry(markdown: str, heading: str) -> str:
    """The Markdown of one commit's entry, from its heading to the next."""
    start = markdown.index(f"#### {heading}\n")
    end = markdown.find("\n#### ", start + 1)
    return markdown[start : end if end != -1 else len(markdown)]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("related") / "widget"
    return path, _build(path)


def test_links_both_ways_across_days_in_english(
    tmp_path: Path, history: tuple[Path, dict[str, str]]
) -> None:
    repo, sha = history
    first, first_md, first_path = _report(tmp_path, repo, "2026-08-10", "en")
    assert _related(first, "Add fused MoE kernel (#101)") == [], "nothing is known yet"
    third, third_md, _ = _report(tmp_path, repo, "2026-08-13", "en")
    revert_title = 'Revert "Add fused MoE kernel (#101)"'
    assert _related(third, revert_title) == [("reverts", sha["feature"], "2026-08-10")]
    entry = _entry(third_md, 'Revert "Add fused MoE kernel (\\#\u200b101)"')
    assert (
        f"**🔗 Related**: reverts [`{sha['feature'][:7]}`]({WEB}/commit/{sha['feature']})"
        " «Add fused MoE kernel (\\#\u200b101)» from 2026-08-10" in entry
    )
    fifth, fifth_md, _ = _report(tmp_path, repo, "2026-08-15", "en")
    assert _related(fifth, 'Reapply "Add fused MoE kernel (#101)" (#120)') == [
        ("relands", sha["feature"], "2026-08-10")
    ]
    assert _related(fifth, "Add back FlashInfer fallback (#125)") == [
        ("relands", sha["fallback"], "2026-08-10")
    ]
    assert _related(fifth, "Fix sampler seed") == [("fixes", sha["refactor"], "2026-08-10")]
    assert _related(fifth, "Tune MoE block sizes") == [("follows_up", sha["feature"], "2026-08-10")]
    assert _related(fifth, "Fix crash on empty batch") == [], "an unknown SHA links nothing"
    assert "deadbeef" not in _entry(fifth_md, "Fix crash on empty batch")
    # Running later days never rewrote the first day's files.
    assert first_path.read_text("utf-8") == first_md

    again, again_md, _ = _report(tmp_path, repo, "2026-08-10", "en")
    assert _related(again, "Add fused MoE kernel (#101)") == [
        ("reverted_by", sha["revert"], "2026-08-13"),
        ("relanded_by", sha["reland"], "2026-08-15"),
        ("followed_up_by", sha["followup"], "2026-08-15"),
    ]
    assert _related(again, "Add FlashInfer fallback (#103)") == [
        ("relanded_by", sha["add_back"], "2026-08-15")
    ]
    assert _related(again, "Refactor sampler (#102)") == [("fixed_by", sha["fix"], "2026-08-15")]
    feature = _entry(again_md, "Add fused MoE kernel (\\#\u200b101)")
    assert (
        f"reverted on 2026-08-13 by [`{sha['revert'][:7]}`]({WEB}/commit/{sha['revert']})"
        in feature
    )
    assert f"re-landed on 2026-08-15 by [`{sha['reland'][:7]}`]" in feature


def test_a_strangers_title_in_a_link_stays_inert(
    tmp_path: Path, history: tuple[Path, dict[str, str]]
) -> None:
    repo, sha = history
    _report(tmp_path, repo, "2026-08-10", "en")
    twin, markdown, _ = _report(tmp_path, repo, "2026-08-15", "en")
    assert _related(twin, "Fix the tuning") == [("fixes", sha["hostile"], "2026-08-10")]
    line = next(x for x in _entry(markdown, "Fix the tuning").splitlines() if x.startswith("**🔗"))
    html = MarkdownIt("commonmark").render(line)
    assert "<img" not in html, "no HTML of theirs"
    assert re.findall(r'href="([^"]*)"', html) == [f"{WEB}/commit/{sha['hostile']}"]
    assert "@admin" not in line and "#12" not in line, "nobody is pinged, no issue linked"
    assert "&lt;img src=x onerror=alert(1)&gt; [x](javascript:alert(1))" in html, "shown as text"


def test_links_in_chinese(tmp_path: Path, history: tuple[Path, dict[str, str]]) -> None:
    repo, sha = history
    for day in ("2026-08-10", "2026-08-13"):
        _report(tmp_path, repo, day, "zh")
    twin, markdown, _ = _report(tmp_path, repo, "2026-08-10", "zh")
    assert _related(twin, "Add fused MoE kernel (#101)") == [
        ("reverted_by", sha["revert"], "2026-08-13")
    ]
    feature = _entry(markdown, "Add fused MoE kernel (\\#\u200b101)")
    assert (
        f"**🔗 相关提交**：已于 2026-08-13 被 [`{sha['revert'][:7]}`]({WEB}/commit/{sha['revert']})"
        " 撤销" in feature
    )
    _, third_md, _ = _report(tmp_path, repo, "2026-08-13", "zh")
    assert f"撤销了 2026-08-10 的 [`{sha['feature'][:7]}`]" in third_md
    assert "「Add fused MoE kernel (\\#\u200b101)」" in third_md
