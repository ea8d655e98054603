"""A model architecture added whole is a new model family; more code for one model is not.

A serving project built as a real git repository gets one commit per case
on one day; ``repoherald run`` reports it and the JSON twin says what the
rules made of each commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

DAY = "2026-05-04"


def model_module(name: str, lines: int = 120, cls: str = "ForCausalLM") -> str:
    """A model implementation of about ``lines`` lines whose top class is ``<name><cls>``."""
    body = "".join(f"        self.layer{i} = {i}\n" for i in range(lines - 6))
    return (
        f"class {name}Attention:\n    pass\n\n\nclass {name}{cls}:\n    def __init__(self):\n{body}"
    )


def make_project(path: Path) -> Path:
    repo = GitFixture.init(path)
    repo.write_many(
        {
            "fooserve/__init__.py": "",
            "fooserve/models/__init__.py": "",
            "fooserve/models/llama.py": model_module("Llama"),
            "fooserve/models/wan/__init__.py": "",
            "fooserve/models/wan/pipeline_t2v.py": model_module("WanT2V", cls="Model"),
        }
    )
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    steps: list[tuple[str, dict[str, str]]] = [
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
    for i, (title, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(title, when=f"{DAY}T{i:02d}:00:00+00:00")
    return path


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("family")
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


@pytest.mark.parametrize(
    ("title", "module"),
    [
        ("Support Glm4Moe", "fooserve/models/glm4_moe.py"),
        ("[Model] Add the Mamba3 family", "fooserve/models/mamba3/modeling.py"),
    ],
)
def test_an_architecture_added_whole_is_a_new_family(
    day: dict[str, dict[str, Any]], title: str, module: str
) -> None:
    importance, reasons = verdict(day, title)
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
def test_more_code_for_models_is_no_new_family(day: dict[str, dict[str, Any]], title: str) -> None:
    importance, reasons = verdict(day, title)
    assert importance != "high" and "new model family" not in reasons, reasons
