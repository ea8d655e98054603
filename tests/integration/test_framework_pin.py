"""An exact pin of the deep-learning framework moves every install with it; a range does not.

A kernel library built as a real git repository (its name names no host)
gets one commit per case on one day; ``repoherald run`` reports it and the
JSON twin says what the rules made of each commit.
"""

from __future__ import annotations

import pytest

from tests.dayfixture import ReportedDay, Steps, commit_day, report_day

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


INITIAL = {
    "pyproject.toml": pyproject(),
    "requirements-test.txt": "torch==2.12.0\npytest>=8\n",
    "barkernels/__init__.py": "",
}
STEPS: Steps = [
    ("upgrade to oneapi 2026.0", {"pyproject.toml": pyproject(
        torch="==2.13.0+xpu", build="==2.13.0+xpu")}),
    ("Allow newer jax", {"pyproject.toml": pyproject(
        torch="==2.13.0+xpu", build="==2.13.0+xpu", jax=">=0.5")}),
    ("Test against torch 2.13", {"requirements-test.txt": "torch==2.13.0\npytest>=8\n"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> ReportedDay:
    tmp = tmp_path_factory.mktemp("framework")
    return report_day(tmp, commit_day(tmp / "barkernels", DAY, INITIAL, STEPS), DAY)


def test_a_moved_exact_pin_is_high_and_named(day: ReportedDay) -> None:
    analysis = day.analyses["upgrade to oneapi 2026.0"]
    reasons = " ".join(analysis["reasons"])
    assert analysis["importance"] == "high", reasons
    assert "exact pin of the framework `torch` from `==2.12.0+xpu` to `==2.13.0+xpu`" in reasons


def test_a_range_lets_users_keep_their_framework(day: ReportedDay) -> None:
    analysis = day.analyses["Allow newer jax"]
    assert analysis["importance"] == "medium", analysis["reasons"]


def test_a_test_pin_is_nobodys_install(day: ReportedDay) -> None:
    analysis = day.analyses["Test against torch 2.13"]
    assert analysis["importance"] == "low", analysis["reasons"]
