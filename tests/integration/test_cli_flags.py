"""Command-line flags a commit removes, renames or re-defaults are high; new ones are not.

A serving project built as a real git repository gets one commit per case on
one day; ``repoherald run`` reports it and the JSON twin says what the rules
made of each commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

DAY = "2026-07-08"


def cli(*flags: str) -> str:
    lines = "".join(f"    parser.add_argument({flag})\n" for flag in flags)
    head = "import argparse\n\n\ndef make_parser():\n    parser = argparse.ArgumentParser()\n"
    return f"{head}{lines}    return parser\n"


STRATEGY = '"--strategy", default="round_robin", help="how to pick a node"'
CACHE_AWARE = '"--strategy", default="cache_aware", help="how to pick a node"'
QUANT = '"--quant_type", dest="quant_type", default=None'
QUANT_RENAMED = '"--quant-method", dest="quant_type", default=None'
PORT = '"--port", type=int, default=8000'
TOOL = '"--iterations", type=int, default=10'


def make_project(path: Path) -> Path:
    repo = GitFixture.init(path)
    tool = cli(TOOL) + '\n\nif __name__ == "__main__":\n    make_parser().parse_args()\n'
    repo.write_many(
        {
            "fooserve/__init__.py": "",
            "fooserve/server/api_cli.py": cli(STRATEGY, QUANT),
            "fooserve/tools/profile_run.py": tool,
            "examples/launch.py": cli(PORT),
        }
    )
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    steps: list[tuple[str, dict[str, str]]] = [
        ("Cache aware for pd", {"fooserve/server/api_cli.py": cli(CACHE_AWARE, QUANT)}),
        ("feat(quant): name quantization methods by scheme",
         {"fooserve/server/api_cli.py": cli(CACHE_AWARE, QUANT_RENAMED)}),
        ("Add a port flag", {"fooserve/server/api_cli.py": cli(CACHE_AWARE, QUANT_RENAMED, PORT)}),
        ("Drop the profiler's iteration flag",
         {"fooserve/tools/profile_run.py": cli() + '\n\nif __name__ == "__main__":\n    pass\n'}),
        ("Simplify the launch example", {"examples/launch.py": cli()}),
    ]  # fmt: skip
    for i, (title, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(title, when=f"{DAY}T{i:02d}:00:00+00:00")
    return path


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("flags")
    settings = build_settings(
        day=DAY, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(make_project(tmp / "fooserve")),),
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    return {c["title"]: c["analysis"] for c in twin["repos"][0]["commits"]}


def verdict(day: dict[str, dict[str, Any]], title: str) -> tuple[str, str]:
    return day[title]["importance"], " ".join(day[title]["reasons"])


def test_a_new_default_is_high_and_says_both_values(day: dict[str, dict[str, Any]]) -> None:
    importance, reasons = verdict(day, "Cache aware for pd")
    assert importance == "high", reasons
    assert "default of `--strategy` from `'round_robin'` to `'cache_aware'`" in reasons, reasons


def test_a_renamed_flag_is_high(day: dict[str, dict[str, Any]]) -> None:
    importance, reasons = verdict(day, "feat(quant): name quantization methods by scheme")
    assert importance == "high", reasons
    assert "command-line flags `--quant_type`" in reasons, reasons


@pytest.mark.parametrize(
    "title",
    ["Add a port flag", "Drop the profiler's iteration flag", "Simplify the launch example"],
)
def test_new_flags_and_flags_of_tools_or_examples_raise_nothing(
    day: dict[str, dict[str, Any]], title: str
) -> None:
    importance, reasons = verdict(day, title)
    assert importance != "high" and "command-line flag" not in reasons, reasons


def test_the_write_up_names_the_flag_and_the_risk(day: dict[str, dict[str, Any]]) -> None:
    analysis = day["Cache aware for pd"]
    compat = analysis["insights"]["compatibility"]
    assert "`--strategy` `'round_robin'` → `'cache_aware'`" in compat, compat
    assert any(r["risk"] == "Launch commands behave differently" for r in analysis["risks"])
