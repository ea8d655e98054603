"""An exact pin of the deep-learning framework moves every install with it; a range does not.

A kernel library built as a real git repository (its name names no host)
gets one commit per case on one day; ``repoherald run`` reports it and the
JSON twin says what the rules made of each commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

DAY = "2026-06-11"
PYPROJECT = """[build-system]
requires = ["setuptools>=77", "torch{build}"]

[project]
name = "barkernels"
version = "0.1.0"
dependencies = ["numpy>=1.26", "torch{torch}", "jax{jax}"]
"""


def pyproject(torch: str = "==2.12.0+xpu", build: str = "==2.12.0+xpu", jax: str = ">=0.4") -> str:
    return PYPROJECT.format(torch=torch, build=build, jax=jax)


def make_library(path: Path) -> Path:
    repo = GitFixture.init(path)
    repo.write_many(
        {
            "pyproject.toml": pyproject(),
            "requirements-test.txt": "torch==2.12.0\npytest>=8\n",
            "barkernels/__init__.py": "",
        }
    )
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    steps: list[tuple[str, dict[str, str]]] = [
        ("upgrade to oneapi 2026.0", {"pyproject.toml": pyproject(
            torch="==2.13.0+xpu", build="==2.13.0+xpu")}),
        ("Allow newer jax", {"pyproject.toml": pyproject(
            torch="==2.13.0+xpu", build="==2.13.0+xpu", jax=">=0.5")}),
        ("Test against torch 2.13", {"requirements-test.txt": "torch==2.13.0\npytest>=8\n"}),
    ]  # fmt: skip
    for i, (title, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(title, when=f"{DAY}T{i:02d}:00:00+00:00")
    return path


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("framework")
    settings = build_settings(
        day=DAY, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(make_library(tmp / "barkernels")),),
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    return {c["title"]: c["analysis"] for c in twin["repos"][0]["commits"]}


def test_a_moved_exact_pin_is_high_and_named(day: dict[str, dict[str, Any]]) -> None:
    analysis = day["upgrade to oneapi 2026.0"]
    reasons = " ".join(analysis["reasons"])
    assert analysis["importance"] == "high", reasons
    assert "exact pin of the framework `torch` from `==2.12.0+xpu` to `==2.13.0+xpu`" in reasons


def test_a_range_lets_users_keep_their_framework(day: dict[str, dict[str, Any]]) -> None:
    analysis = day["Allow newer jax"]
    assert analysis["importance"] == "medium", analysis["reasons"]


def test_a_test_pin_is_nobodys_install(day: dict[str, dict[str, Any]]) -> None:
    analysis = day["Test against torch 2.13"]
    assert analysis["importance"] == "low", analysis["reasons"]
