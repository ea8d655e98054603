"""The catalogues and the language-neutral messages the rules store.

Every catalogue must offer the same keys with the same format fields, or a
report in one language breaks where the other works; a rule analysis must
survive the store unchanged, or a cached re-run would differ from the first.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import click
import pytest

import repoherald
from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.cli.report import report
from repoherald.config.defaults import check_lang
from repoherald.config.settings import build_settings
from repoherald.errors import ConfigError, UsageError
from repoherald.i18n import CATALOGUES, LANGUAGES, localise, localise_analysis, t
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    FileChange,
    FileStatus,
    Importance,
    Person,
    Text,
)
from repoherald.store.codec import analysis_from_dict, message_from_json, to_jsonable
from repoherald.store.db import SqliteStore as Store


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_catalogues_have_the_same_keys_and_format_fields() -> None:
    assert set(LANGUAGES) == {"zh", "en"}
    zh, en = CATALOGUES["zh"], CATALOGUES["en"]
    assert sorted(set(zh) ^ set(en)) == [], "keys present in one catalogue only"
    different = {key: (_fields(zh[key]), _fields(en[key])) for key in zh}
    assert {k: v for k, v in different.items() if v[0] != v[1]} == {}
    assert all(
        isinstance(value, str) and (value or key.startswith("factcheck."))
        for c in (zh, en)
        for key, value in c.items()
    ), "empty entries are for a unit a language has no word for (fact-check) only"


def test_every_change_type_and_importance_has_a_label() -> None:
    for catalogue in CATALOGUES.values():
        assert {f"type.{ct.value}" for ct in ChangeType} <= set(catalogue)
        assert {f"importance.{imp.value}" for imp in Importance} <= set(catalogue)


def test_localise_prose_texts_lists_and_joins() -> None:
    assert localise("zh", "model prose stays as written") == "model prose stays as written"
    kinds = (Text("kind.docs"), Text("kind.tests"))
    only = Text("rule.t_only", {"kinds": kinds})
    assert localise("zh", only) == "只改动了文档、测试文件"
    assert localise("en", only) == "only docs, test files changed"
    nested = Text("rule.r_type", {"reason": only})
    assert localise("en", nested) == "Type: only docs, test files changed"
    both = Text("join.sentences", {"items": (Text("rule.s_empty"), only)})
    assert localise("zh", both) == "没有文件改动；只改动了文档、测试文件"
    assert localise("en", Text("rule.r_api", {"n": 3, "names": "`a`, `b`"})) == (
        "3 public APIs removed or re-signed: `a`, `b`"
    )


def test_arguments_are_data_never_format_strings() -> None:
    """A title that looks like a format field is shown as written."""
    text = Text("rule.s_head", {"type": Text("type.bugfix"), "text": "Fix {n} and {0}"})
    assert localise("en", text) == "Bug fix: Fix {n} and {0}"


def test_unknown_message_code_fails_loudly() -> None:
    with pytest.raises(KeyError):
        localise("en", Text("rule.no_such_reason"))


def test_t_formats_report_labels() -> None:
    assert t("zh", "title", date="2026-01-02") == "每日更新报告（2026-01-02）"
    assert t("en", "view_pr", n=7) == "PR #7"


def _rule_analysis() -> Analysis:
    extractor = FactsExtractor(AreaRules(), lambda oid: None)
    who = Person("Dev", "dev@example.com")
    message = (
        "[Bugfix] Fix crash when the config is empty (#12)\n\n"
        "BREAKING CHANGE: the old flag is gone\n"
    )
    commit = Commit("c" * 40, ("d" * 40,), who, 0, 0, who, 0, 0, message)
    files = [
        FileChange("src/app/config.py", FileStatus.MODIFIED, added=300, deleted=250),
        FileChange("src/app/new.py", FileStatus.ADDED, added=40),
        FileChange("docs/config.md", FileStatus.MODIFIED, added=3, deleted=1),
    ]
    return RuleAnalyser().analyse(commit, extractor.extract(commit, files))


def test_a_rule_analysis_round_trips_through_json() -> None:
    analysis = _rule_analysis()
    assert any(
        isinstance(m, Text) and m.code.startswith("join.") for m in analysis.insights.values()
    )
    assert analysis.risks
    text = json.dumps(to_jsonable(analysis), ensure_ascii=False)
    assert "dev@example.com" not in text
    back = analysis_from_dict(json.loads(text))
    assert back == analysis
    for lang in LANGUAGES:
        assert localise_analysis(lang, back) == localise_analysis(lang, analysis)


def test_prose_and_texts_decode_apart() -> None:
    assert message_from_json("plain words") == "plain words"
    text = Text("rule.i_status", {"list": (Text("rule.st_added", {"n": 2}),)})
    assert message_from_json(to_jsonable(text)) == text


def test_the_store_returns_the_rule_analysis_it_was_given(memory_store: Store) -> None:
    analysis = _rule_analysis()
    who = Person("Dev", "dev@example.com")
    commit = Commit("c" * 40, ("d" * 40,), who, 0, 0, who, 0, 0, "x")
    extractor = FactsExtractor(AreaRules(), lambda oid: None)
    facts = extractor.extract(commit, [FileChange("src/a.py", FileStatus.MODIFIED, 1, 1)])
    memory_store.save("repo", [(commit, facts, analysis)], "facts/test")
    loaded = memory_store.load([commit.sha], "facts/test", RuleAnalyser.name)
    assert loaded[commit.sha][2] == analysis
    assert memory_store.load([commit.sha], "facts/test", "rules/1/zh") == {}


def test_localised_analysis_is_prose_everywhere() -> None:
    analysis = localise_analysis("zh", _rule_analysis())
    parts = [
        *analysis.reasons, analysis.summary, *analysis.impact, *analysis.insights.values(),
        *(m for r in analysis.risks for m in (r.risk, r.detail, r.mitigation)),
        *analysis.recommendations, analysis.error, analysis.llm_error,
    ]  # fmt: skip
    assert all(isinstance(p, str) for p in parts)
    assert analysis.reasons[0].startswith("类型：")


def test_english_counts_agree_with_their_nouns() -> None:
    one = Text("rule.i_area", {"area": "docs", "n": 1, "added": 2, "deleted": 0})
    two = Text("rule.i_area", {"area": "docs", "n": 2, "added": 2, "deleted": 0})
    assert localise("en", one) == "`docs`: 1 file (+2/−0)"
    assert localise("en", two) == "`docs`: 2 files (+2/−0)"
    assert localise("zh", one) == "`docs`：1 个文件（+2/−0）"
    assert t("en", "stats_line", n=1, h=0, m=1, l=0).startswith("1 commit today")


def test_the_catalogues_are_the_only_list_of_languages(tmp_path: Path) -> None:
    """The CLI's choice, the flag check and the file's check all read i18n.LANGUAGES."""
    lang = next(p for p in report.params if p.name == "lang")
    assert isinstance(lang.type, click.Choice) and lang.type.choices is LANGUAGES
    for value in LANGUAGES:
        assert check_lang(value) == value
    with pytest.raises(UsageError, match="use " + " or ".join(LANGUAGES)):
        build_settings(repos=("x",), cwd=tmp_path, lang="fr")
    config = tmp_path / "repoherald.toml"
    config.write_text('[report]\nlang = "fr"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"report\.lang: unknown language 'fr'"):
        build_settings(repos=("x",), cwd=tmp_path)


PACKAGE = Path(repoherald.__file__).parent
PROMPTS = PACKAGE / "llm" / "prompts"


def test_a_language_is_its_catalogue_and_its_prompt_templates() -> None:
    """Each catalogue has its three prompt templates, and no template is of another language."""
    for code in LANGUAGES:
        for kind in ("system", "user", "repair"):
            assert (PROMPTS / f"{kind}.{code}.j2").is_file(), f"{kind}.{code}.j2"
    coded = {p.name.split(".")[1] for p in PROMPTS.glob("*.*.j2")}
    assert coded == set(LANGUAGES)


_CODES = "|".join(LANGUAGES)
_LANGUAGE_CODE = re.compile(rf"""["'](?:{_CODES})["']|\blang\w* ?[!=]= ?["']""")


def test_no_code_outside_i18n_names_a_language() -> None:
    """Adding a language touches no branch elsewhere: no module or template names a code."""
    found = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*"))
        if path.suffix in {".py", ".j2"} and "i18n" not in path.parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _LANGUAGE_CODE.search(line)
    ]
    assert found == []
