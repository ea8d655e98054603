"""A commit that only moves the project's own version is a release: other, low.

The version lives in code (``__init__.py``) and a manifest (``setup.py``),
so the paths alone make it look like a code change; the changed lines say
otherwise. A real git repository gets one commit per case on one day.
"""

from __future__ import annotations

import pytest

from tests.dayfixture import ReportedDay, Steps, commit_day, report_day

DAY = "2026-08-12"
INIT = '"""The package."""\n\n__version__ = "{v}"\n\n\ndef quantize(x):\n    return {body}\n'
SETUP = 'from setuptools import setup\n\nsetup(\n    name="barq",\n    version="{v}",\n)\n'


INITIAL = {
    "barq/__init__.py": INIT.format(v="0.50.0", body="x"),
    "setup.py": SETUP.format(v="0.50.0"),
    "VERSION.txt": "0.50.0\n",
    "CHANGELOG.md": "# Changes\n",
}
STEPS: Steps = [
    ("Release 0.50.1", {
        "barq/__init__.py": INIT.format(v="0.50.1", body="x"),
        "setup.py": SETUP.format(v="0.50.1"),
        "CHANGELOG.md": "# Changes\n\n## 0.50.1\n\n- fixes\n"}),
    ("Change VERSION to 0.51.0.dev0", {"VERSION.txt": "0.51.0.dev0\n"}),
    ("Bump dev version and round to nearest", {
        "barq/__init__.py": INIT.format(v="0.51.0.dev0", body="round(x)"),
        "setup.py": SETUP.format(v="0.51.0.dev0")}),
]  # fmt: skip


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> ReportedDay:
    tmp = tmp_path_factory.mktemp("release")
    return report_day(tmp, commit_day(tmp / "barq", DAY, INITIAL, STEPS), DAY)


@pytest.mark.parametrize("title", ["Release 0.50.1", "Change VERSION to 0.51.0.dev0"])
def test_a_version_only_change_is_a_low_release(day: ReportedDay, title: str) -> None:
    analysis = day.analyses[title]
    assert (analysis["change_type"], analysis["importance"]) == ("other", "low"), analysis


def test_a_bump_that_also_changes_code_is_no_release(day: ReportedDay) -> None:
    analysis = day.analyses["Bump dev version and round to nearest"]
    assert analysis["importance"] != "low", analysis["reasons"]
