"""A model architecture added whole is a new model family; more code for one model is not.

A serving project built as a real git repository gets one commit per case
on one day; ``repoherald run`` reports it and the JSON twin says what the
rules made of each commit.
"""

from __future__ import annotations

import pytest

from tests.dayfixture import ReportedDay, Steps, commit_day, report_day

DAY = "2026-05-04"


def model_module(name: str, lines: int = 120, cls: str = "ForCausalLM") -> str:
    """A model implementation of about ``lines`` lines whose top class is ``<name><cls>``."""
    body = "".join(f"        self.layer{i} = {i}\n" for i in range(lines - 6))
    return (
        f"class {name}Attention:\n    pass\n\n\nclass {name}{cls}:\n    def __init__(self):\n{body}"
    )


INITIAL = {
    "fooserve/__init__.py": "",
    "fooserve/models/__init__.py": "",
    "fooserve/models/llama.py": model_module("Llama"),
    "fooserve/models/wan/__init__.py": "",
    "fooserve/models/wan/pipeline_t2v.py": model_module("WanT2V", cls="Model"),
}
STEPS: Steps = [
    ("Support Glm4Moe", {"fooserve/models/glm4_moe.py": model_module("Glm4Moe")}),
    ("[Model] Add the Mamba3 family", {
        "fooserve/models/mamba3/__init__.py": "from .modeling import Mamba3Model\n",
        "fooserve/models/mamba3/modeling.py": model_module("Mamba3", cls="Model")}),
    ("[Wan] Add the image-to-video pipeline", {
        "fooserve/models/wan/pipeline_i2v.py": model_module("WanI2V", cls="Model")}),
    ("Add a weight loader for sparse checkpoints", {
        "fooserve/models/sparse_loader.py": model_module("SparseLoader", cls="Helper")}),
    ("Add a Phi registry stub", {
        "fooserve/models/phi.py": model_module("Phi", lines=20)}),
    ("Refactor the Qwen model into its own module", {
        "fooserve/models/qwen.py": model_module("Qwen")}),
]  # fmt: skip


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> ReportedDay:
    tmp = tmp_path_factory.mktemp("family")
    return report_day(tmp, commit_day(tmp / "fooserve", DAY, INITIAL, STEPS), DAY)


@pytest.mark.parametrize(
    ("title", "module"),
    [
        ("Support Glm4Moe", "fooserve/models/glm4_moe.py"),
        ("[Model] Add the Mamba3 family", "fooserve/models/mamba3/modeling.py"),
    ],
)
def test_an_architecture_added_whole_is_a_new_family(
    day: ReportedDay, title: str, module: str
) -> None:
    importance, reasons = day.verdict(title)
    assert importance == "high", reasons
    assert f"adds a new model family: `{module}`" in reasons, reasons


@pytest.mark.parametrize(
    "title",
    [
        "[Wan] Add the image-to-video pipeline",  # a model package that already existed
        "Add a weight loader for sparse checkpoints",  # no model class
        "Add a Phi registry stub",  # too short to be a model
        "Refactor the Qwen model into its own module",  # a refactor adds no capability
    ],
)
def test_more_code_for_models_is_no_new_family(day: ReportedDay, title: str) -> None:
    importance, reasons = day.verdict(title)
    assert importance != "high" and "new model family" not in reasons, reasons
