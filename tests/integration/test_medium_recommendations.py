"""A medium block has numbered recommendations, and the page never says one thing twice.

A medium block shows no risks, so their mitigations become its
recommendations; a high block shows the risks with their mitigations and
only recommendations of its own. A shell script in a QA folder is not code a
test would cover, so it earns no "no tests" risk.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.dayfixture import Steps, commit_day, report_day

DAY = "2026-08-12"
INITIAL = {
    "barq/core.py": "def run(x):\n    return x\n",
    "qa/L0_unittest/test.sh": "pip install pytest\n",
}
STEPS: Steps = [
    ("Add a scale to run", {"barq/core.py": "def run(x, scale=1):\n    return x * scale\n"}),
    (
        "Fix build issues with new images",
        {"qa/L0_unittest/test.sh": "pip install pytest timeout\n"},
    ),
]


def _block(markdown: str, title: str) -> str:
    start = markdown.index(f"#### {title}")
    end = markdown.find("\n#### ", start + 1)
    return markdown[start : end if end > 0 else len(markdown)]


def test_a_medium_block_recommends_its_risks_mitigations_once(tmp_path: Path) -> None:
    day = report_day(tmp_path, commit_day(tmp_path / "barq", DAY, INITIAL, STEPS), DAY)
    importance, _ = day.verdict("Add a scale to run")
    assert importance == "medium"
    block = _block(day.markdown, "Add a scale to run")
    mitigation = day.analyses["Add a scale to run"]["risks"][0]["mitigation"]
    assert re.search(r"^1\. .*barq/core\.py", block, re.M), block
    assert block.count("barq/core.py`") >= 1 and mitigation in block
    assert "Potential risks" not in block

    script = day.analyses["Fix build issues with new images"]
    assert not any("test.sh" in str(r["mitigation"]) for r in script["risks"])
