"""Registered native operators: removed or re-declared ones break callers, others do not.

A kernel library built as a real git repository gets one commit per case on
one day; ``repoherald run`` reports it and the JSON twin and the Markdown
report say what the rules made of each commit.
"""

from __future__ import annotations

import pytest

from tests.dayfixture import ReportedDay, Steps, commit_day, report_day

DAY = "2026-04-02"
TOPK = '  ops.def("grouped_topk(Tensor scores, int n_group, int topk) -> (Tensor, Tensor)");\n'
TOPK_REQUIRED = (
    '  ops.def(\n      "grouped_topk(Tensor scores, int n_group, int topk, "\n'
    '      "Tensor bias) -> (Tensor, Tensor)");\n'
)
NORM = '  ops.def("rms_norm(Tensor! out, Tensor x) -> ()");\n'
NORM_DEFAULTED = '  ops.def("rms_norm(Tensor! out, Tensor x, float eps=1e-6) -> ()");\n'
PROLOGUE = '  ops.def("fused_prologue(Tensor x) -> Tensor");\n'
HOSTILE = '  ops.def("evil(Tensor x) -> () `<script>alert(1)</script>`");\n'


def bindings(*defs: str) -> str:
    return "#include <torch/library.h>\nTORCH_LIBRARY(fookernels, ops) {\n" + "".join(defs) + "}\n"


INITIAL = {
    "fookernels/__init__.py": "from fookernels.ops import topk\n",
    "fookernels/ops.py": "def topk(x):\n    return x\n",
    "csrc/torch_bindings.cpp": bindings(TOPK, NORM, PROLOGUE, HOSTILE),
    "csrc/moe/moe_bindings.cpp": bindings(),
    "tests/csrc/test_ops.cpp": bindings('  ops.def("probe(Tensor x) -> ()");\n'),
}
STEPS: Steps = [
    ("[Kernel] Update grouped topk", {"csrc/torch_bindings.cpp": bindings(
        TOPK_REQUIRED, NORM, PROLOGUE, HOSTILE)}),
    ("[Kernel] Let rms_norm take an epsilon", {"csrc/torch_bindings.cpp": bindings(
        TOPK_REQUIRED, NORM_DEFAULTED, PROLOGUE, HOSTILE)}),
    ("[Misc] Register the MoE ops in their own file", {
        "csrc/torch_bindings.cpp": bindings(NORM_DEFAULTED, PROLOGUE, HOSTILE),
        "csrc/moe/moe_bindings.cpp": bindings(TOPK_REQUIRED)}),
    ("[Test] Drop the probe op", {"tests/csrc/test_ops.cpp": bindings()}),
    ("[Misc] Tidy the kernel sources", {"csrc/torch_bindings.cpp": bindings(
        NORM_DEFAULTED, HOSTILE)}),
    ("[Misc] Make evil take a scale", {"csrc/torch_bindings.cpp": bindings(
        NORM_DEFAULTED, HOSTILE.replace("Tensor x)", "Tensor x, float scale)"))}),
]  # fmt: skip


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> ReportedDay:
    tmp = tmp_path_factory.mktemp("ops")
    return report_day(tmp, commit_day(tmp / "fookernels", DAY, INITIAL, STEPS), DAY)


def test_a_newly_required_argument_is_high_and_named(
    day: ReportedDay,
) -> None:
    importance, reasons = day.verdict("[Kernel] Update grouped topk")
    assert importance == "high", reasons
    assert "re-declares the registered operators `grouped_topk`" in reasons, reasons
    compat = day.analyses["[Kernel] Update grouped topk"]["insights"]["compatibility"]
    assert (
        "`grouped_topk(Tensor scores, int n_group, int topk, Tensor bias) -> (Tensor, Tensor)`"
        in compat
    ), compat
    risks = day.analyses["[Kernel] Update grouped topk"]["risks"]
    assert any(r["risk"] == "Native operator calls break" for r in risks), risks


def test_an_argument_with_a_default_breaks_nobody(
    day: ReportedDay,
) -> None:
    importance, reasons = day.verdict("[Kernel] Let rms_norm take an epsilon")
    assert importance != "high" and "operator" not in reasons, reasons


def test_an_operator_moved_to_another_registration_file_is_not_removed(
    day: ReportedDay,
) -> None:
    importance, reasons = day.verdict("[Misc] Register the MoE ops in their own file")
    assert importance != "high" and "operator" not in reasons, reasons


def test_a_test_operator_is_nobodys_api(day: ReportedDay) -> None:
    importance, reasons = day.verdict("[Test] Drop the probe op")
    assert importance == "low" and "operator" not in reasons, reasons


def test_a_removed_operator_is_high_and_named(day: ReportedDay) -> None:
    importance, reasons = day.verdict("[Misc] Tidy the kernel sources")
    assert importance == "high", reasons
    assert "removes the registered operators `fused_prologue`" in reasons, reasons


def test_a_schema_written_by_a_stranger_stays_text(
    day: ReportedDay,
) -> None:
    importance, reasons = day.verdict("[Misc] Make evil take a scale")
    assert importance == "high" and "`evil`" in reasons, reasons
    markdown = day.markdown
    assert "evil(Tensor x, float scale)" in markdown
    assert "<script>" not in markdown, "a schema's markup must be escaped"
