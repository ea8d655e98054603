"""Command-line flags a commit removes, renames or re-defaults are high; new ones are not.

A serving project built as a real git repository gets one commit per case on
one day; ``repoherald run`` reports it and the JSON twin says what the rules
made of each commit.
"""

from __future__ import annotations

import pytest

from tests.dayfixture import ReportedDay, Steps, commit_day, report_day

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
TOOL_SCRIPT = cli(TOOL) + '\n\nif __name__ == "__main__":\n    make_parser().parse_args()\n'
"""A script's flags: a tool's, not the product's."""

INITIAL = {
    "fooserve/__init__.py": "",
    "fooserve/server/api_cli.py": cli(STRATEGY, QUANT),
    "fooserve/tools/profile_run.py": TOOL_SCRIPT,
    "examples/launch.py": cli(PORT),
}
STEPS: Steps = [
    ("Cache aware for pd", {"fooserve/server/api_cli.py": cli(CACHE_AWARE, QUANT)}),
    ("feat(quant): name quantization methods by scheme",
     {"fooserve/server/api_cli.py": cli(CACHE_AWARE, QUANT_RENAMED)}),
    ("Add a port flag", {"fooserve/server/api_cli.py": cli(CACHE_AWARE, QUANT_RENAMED, PORT)}),
    ("Drop the profiler's iteration flag",
     {"fooserve/tools/profile_run.py": cli() + '\n\nif __name__ == "__main__":\n    pass\n'}),
    ("Simplify the launch example", {"examples/launch.py": cli()}),
]  # fmt: skip


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> ReportedDay:
    tmp = tmp_path_factory.mktemp("flags")
    return report_day(tmp, commit_day(tmp / "fooserve", DAY, INITIAL, STEPS), DAY)


def test_a_new_default_is_high_and_says_both_values(day: ReportedDay) -> None:
    importance, reasons = day.verdict("Cache aware for pd")
    assert importance == "high", reasons
    assert "default of `--strategy` from `'round_robin'` to `'cache_aware'`" in reasons, reasons


def test_a_renamed_flag_is_high(day: ReportedDay) -> None:
    importance, reasons = day.verdict("feat(quant): name quantization methods by scheme")
    assert importance == "high", reasons
    assert "command-line flags `--quant_type`" in reasons, reasons


@pytest.mark.parametrize(
    "title",
    ["Add a port flag", "Drop the profiler's iteration flag", "Simplify the launch example"],
)
def test_new_flags_and_flags_of_tools_or_examples_raise_nothing(
    day: ReportedDay, title: str
) -> None:
    importance, reasons = day.verdict(title)
    assert importance != "high" and "command-line flag" not in reasons, reasons


def test_the_write_up_names_the_flag_and_the_risk(day: ReportedDay) -> None:
    analysis = day.analyses["Cache aware for pd"]
    compat = analysis["insights"]["compatibility"]
    assert "`--strategy` `'round_robin'` → `'cache_aware'`" in compat, compat
    assert any(r["risk"] == "Launch commands behave differently" for r in analysis["risks"])
