"""A commit that only moves the project's own version is a release: other, low.

The version lives in code (``__init__.py``) and a manifest (``setup.py``),
so the paths alone make it look like a code change; the changed lines say
otherwise. A real git repository gets one commit per case on one day.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

DAY = "2026-08-12"
INIT = '"""The package."""\n\n__version__ = "{v}"\n\n\ndef quantize(x):\n    return {body}\n'
SETUP = 'from setuptools import setup\n\nsetup(\n    name="barq",\n    version="{v}",\n)\n'


def make_library(path: Path) -> Path:
    repo = GitFixture.init(path)
    repo.write_many(
        {
            "barq/__init__.py": INIT.format(v="0.50.0", body="x"),
            "setup.py": SETUP.format(v="0.50.0"),
            "VERSION.txt": "0.50.0\n",
            "CHANGELOG.md": "# Changes\n",
        }
    )
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    steps: list[tuple[str, dict[str, str]]] = [
        ("Release 0.50.1", {
            "barq/__init__.py": INIT.format(v="0.50.1", body="x"),
            "setup.py": SETUP.format(v="0.50.1"),
            "CHANGELOG.md": "# Changes\n\n## 0.50.1\n\n- fixes\n"}),
        ("Change VERSION to 0.51.0.dev0", {"VERSION.txt": "0.51.0.dev0\n"}),
        ("Bump dev version and round to nearest", {
            "barq/__init__.py": INIT.format(v="0.51.0.dev0", body="round(x)"),
            "setup.py": SETUP.format(v="0.51.0.dev0")}),
    ]  # fmt: skip
    for i, (title, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(title, when=f"{DAY}T{i:02d}:00:00+00:00")
    return path


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("release")
    settings = build_settings(
        day=DAY, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(make_library(tmp / "barq")),),
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    return {c["title"]: c["analysis"] for c in twin["repos"][0]["commits"]}


@pytest.mark.parametrize("title", ["Release 0.50.1", "Change VERSION to 0.51.0.dev0"])
def test_a_version_only_change_is_a_low_release(day: dict[str, dict[str, Any]], title: str) -> None:
    analysis = day[title]
    assert (analysis["change_type"], analysis["importance"]) == ("other", "low"), analysis


def test_a_bump_that_also_changes_code_is_no_release(day: dict[str, dict[str, Any]]) -> None:
    analysis = day["Bump dev version and round to nearest"]
    assert analysis["importance"] != "low", analysis["reasons"]
