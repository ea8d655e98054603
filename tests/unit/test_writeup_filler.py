"""Write-ups that earn their lines: no filler sentence, counts that match, areas that are right."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.writeup_repeats import repeats
from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.verdict.rules import RuleAnalyser, decide
from repoherald.i18n import localise
from repoherald.models import ApiChange, Commit, Facts, FileChange, FileStatus, Person


@pytest.mark.parametrize("set_name", ["gold", "holdout5"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_sentence_repeats_under_a_quarter_of_a_labelled_day(set_name: str, lang: str) -> None:
    assert repeats(set_name, lang, share=0.25, min_day=4) == []


def _commit(title: str) -> Commit:
    who = Person("Ann", "")
    return Commit(
        sha="a" * 40,
        parents=("b" * 40,),
        author=who,
        committer=who,
        author_time=1_780_000_000,
        author_offset=0,
        commit_time=1_780_000_000,
        commit_offset=0,
        message=title,
    )


def _facts(areas: AreaRules, files: list[FileChange], title: str = "Tidy things") -> Facts:
    return FactsExtractor(areas, lambda _oid: None).extract(_commit(title), files)


def test_areas_configured_by_glob_count_the_files_that_are_in_them() -> None:
    rules = AreaRules(globs=(("frontend", ("python/**",)), ("kernels", ("csrc/**",))))
    files = [
        FileChange("python/pkg/jit/a.py", FileStatus.MODIFIED, added=3, deleted=1),
        FileChange("python/pkg/jit/b.py", FileStatus.MODIFIED, added=2, deleted=0),
        FileChange("csrc/attn.cu", FileStatus.MODIFIED, added=5, deleted=5),
    ]
    analysis = RuleAnalyser().analyse(_commit("Tidy things"), _facts(rules, files))
    lines = [localise("en", line) for line in analysis.impact]
    assert "`frontend`: 2 files (+5/−1)" in lines
    assert any(line.startswith("`kernels`: 1 ") and line.endswith("(+5/−5)") for line in lines)
    assert not any(": 0 files" in line for line in lines)


def test_recommendations_name_something_of_the_change_or_are_none() -> None:
    files = [FileChange("pkg/core/engine.py", FileStatus.MODIFIED, added=30, deleted=4)]
    analysis = RuleAnalyser().analyse(_commit("Fix the engine (#123)"), _facts(AreaRules(), files))
    assert analysis.recommendations == ()
    mitigations = {localise("zh", r.mitigation) for r in analysis.risks}
    assert all("engine.py" in m for m in mitigations)


def test_a_removed_api_is_counted_once_per_name() -> None:
    files = [FileChange("pkg/core/api.py", FileStatus.MODIFIED, added=1, deleted=30)]
    facts = _facts(AreaRules(), files, "Drop old helpers")
    gone = tuple(
        ApiChange(path=path, name=name, kind="function", change="removed")
        for name in ("a", "b", "c")
        for path in ("pkg/core/api.py", "pkg/core/api.py")
    )
    verdict = decide(_commit("Drop old helpers"), replace(facts, api_changes=gone))
    said = [localise("zh", r) for r in verdict.reasons]
    assert any("删除或修改了 3 个公共 API" in s for s in said), said
