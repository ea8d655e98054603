"""Entry-point loading: built-ins first, a broken or clashing plugin skipped with one warning."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from repoherald import plugins
from repoherald.analysers import CommitAnalyser, DeepAnalyser, analyser_classes
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.errors import ConfigError
from repoherald.llm.analyser import LlmAnalyser
from repoherald.llm.settings import LlmSettings
from repoherald.publish import registry as publishers
from repoherald.sources import registry as sources
from repoherald.sources.base import SourceBackend
from repoherald.sources.git.source import GitBackend
from repoherald.sources.github import GitHubBackend
from tests.plugin_site import write_dist


def test_the_builtins_come_from_repoheralds_own_entry_points() -> None:
    assert {p.name: p.obj for p in plugins.load_group(plugins.SOURCES, lambda n, o: None)} == {
        "git": GitBackend,
        "github": GitHubBackend,
    }
    assert publishers.known_types() == ["archive", "email", "github_issue", "webhook"]
    assert analyser_classes() == {"llm": LlmAnalyser, "rules": RuleAnalyser}
    assert all(isinstance(b, SourceBackend) for b in sources.backends().values())


def test_rules_and_llm_satisfy_the_analyser_protocols() -> None:
    assert isinstance(RuleAnalyser(), CommitAnalyser)
    llm = LlmAnalyser(LlmSettings(base_url="http://127.0.0.1:9/v1", model="m"), "en")
    assert isinstance(llm, DeepAnalyser)
    assert not isinstance(llm, CommitAnalyser)


def test_a_broken_plugin_is_skipped_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    write_dist(
        tmp_path,
        "acme-plugins",
        "1.0",
        {
            "repoherald.sources": {
                "acme": "acme_missing_module:Backend",
                "github": "json:JSONDecoder",  # a built-in's name
                "odd": "json:JSONDecoder",  # loads, but check() refuses it
                "good": "json:JSONEncoder",
            }
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    def check(name: str, obj: object) -> str | None:
        return "it is not a backend" if name == "odd" else None

    with caplog.at_level(logging.WARNING, logger="repoherald.plugins"):
        loaded = plugins.load_group(plugins.SOURCES, check)
        plugins.load_group(plugins.SOURCES, check)  # said once per process, not per load
    by_name = {p.name: p for p in loaded}
    assert sorted(by_name) == ["git", "github", "good"]
    assert by_name["github"].builtin and by_name["github"].obj is GitHubBackend
    assert not by_name["good"].builtin and by_name["good"].dist == "acme-plugins"
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert all("from package acme-plugins" in line and "\n" not in line for line in lines)
    assert any("plugin acme " in m and "ModuleNotFoundError" in m for m in lines)
    assert any("plugin github " in m and "rename it" in m for m in lines)
    assert any(
        "plugin odd " in m and "it is not a backend: fix or uninstall it" in m for m in lines
    )


def test_a_built_in_refused_by_its_check_is_an_error_not_a_warning() -> None:
    with pytest.raises(ConfigError, match=r"built-in repoherald\.sources entry point 'git'"):
        plugins.load_group(plugins.SOURCES, lambda name, obj: "broken" if name == "git" else None)


def test_source_backends_are_checked_like_publishers() -> None:
    assert sources._problem("git", GitBackend) is None
    assert sources._problem("example", GitBackend) == (
        "its class says scheme 'git', its entry point 'example'"
    )
    assert sources._problem("x", object()) is not None
    assert publishers._problem("archive", GitBackend) is not None
