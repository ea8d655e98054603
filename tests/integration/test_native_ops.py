"""Registered native operators: removed or re-declared ones break callers, others do not.

A kernel library built as a real git repository gets one commit per case on
one day; ``repoherald run`` reports it and the JSON twin and the Markdown
report say what the rules made of each commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

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


def make_library(path: Path) -> Path:
    repo = GitFixture.init(path)
    repo.write_many(
        {
            "fookernels/__init__.py": "from fookernels.ops import topk\n",
            "fookernels/ops.py": "def topk(x):\n    return x\n",
            "csrc/torch_bindings.cpp": bindings(TOPK, NORM, PROLOGUE, HOSTILE),
            "csrc/moe/moe_bindings.cpp": bindings(),
            "tests/csrc/test_ops.cpp": bindings('  ops.def("probe(Tensor x) -> ()");\n'),
        }
    )
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    steps: list[tuple[str, dict[str, str]]] = [
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
    for i, (title, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(title, when=f"{DAY}T{i:02d}:00:00+00:00")
    return path


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, Any]], str]:
    tmp = tmp_path_factory.mktemp("ops")
    settings = build_settings(
        day=DAY, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(make_library(tmp / "fookernels")),),
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    markdown = next(p for p in result.written if p.suffix == ".md").read_text("utf-8")
    return {c["title"]: c["analysis"] for c in twin["repos"][0]["commits"]}, markdown


def verdict(day: tuple[dict[str, dict[str, Any]], str], title: str) -> tuple[str, str]:
    analysis = day[0][title]
    return analysis["importance"], " ".join(analysis["reasons"])


def test_a_newly_required_argument_is_high_and_named(
    day: tuple[dict[str, dict[str, Any]], str],
) -> None:
    importance, reasons = verdict(day, "[Kernel] Update grouped topk")
    assert importance == "high", reasons
    assert "re-declares the registered operators `grouped_topk`" in reasons, reasons
    compat = day[0]["[Kernel] Update grouped topk"]["insights"]["compatibility"]
    assert (
        "`grouped_topk(Tensor scores, int n_group, int topk, Tensor bias) -> (Tensor, Tensor)`"
        in compat
    ), compat
    risks = day[0]["[Kernel] Update grouped topk"]["risks"]
    assert any(r["risk"] == "Native operator calls break" for r in risks), risks


def test_an_argument_with_a_default_breaks_nobody(
    day: tuple[dict[str, dict[str, Any]], str],
) -> None:
    importance, reasons = verdict(day, "[Kernel] Let rms_norm take an epsilon")
    assert importance != "high" and "operator" not in reasons, reasons


def test_an_operator_moved_to_another_registration_file_is_not_removed(
    day: tuple[dict[str, dict[str, Any]], str],
) -> None:
    importance, reasons = verdict(day, "[Misc] Register the MoE ops in their own file")
    assert importance != "high" and "operator" not in reasons, reasons


def test_a_test_operator_is_nobodys_api(day: tuple[dict[str, dict[str, Any]], str]) -> None:
    importance, reasons = verdict(day, "[Test] Drop the probe op")
    assert importance == "low" and "operator" not in reasons, reasons


def test_a_removed_operator_is_high_and_named(day: tuple[dict[str, dict[str, Any]], str]) -> None:
    importance, reasons = verdict(day, "[Misc] Tidy the kernel sources")
    assert importance == "high", reasons
    assert "removes the registered operators `fused_prologue`" in reasons, reasons


def test_a_schema_written_by_a_stranger_stays_text(
    day: tuple[dict[str, dict[str, Any]], str],
) -> None:
    importance, reasons = verdict(day, "[Misc] Make evil take a scale")
    assert importance == "high" and "`evil`" in reasons, reasons
    markdown = day[1]
    assert "evil(Tensor x, float scale)" in markdown
    assert "<script>" not in markdown, "a schema's markup must be escaped"
