"""Trojan Source: no bidi control or invisible format character reaches any field of a report."""

from __future__ import annotations

from pathlib import Path

from tests.dayfixture import commit_day, report_day

HIDDEN = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2060\ufeff"
TITLE = "fix: \u202eevil\u202c \u2066admin\u2069 check \u061cand\u200f\ufeff more"


def test_no_field_of_the_page_or_the_twin_keeps_a_bidi_or_invisible_character(
    tmp_path: Path,
) -> None:
    repo = commit_day(
        tmp_path / "repo",
        "2026-03-10",
        {"pkg/__init__.py": "", "pkg/core.py": "def run(a):\n    return a\n"},
        [(TITLE, {"pkg/core.py": "def run(a, b=1):\n    return a\n", "pkg/\u202ex.py": "X = 1\n"})],
    )
    day = report_day(tmp_path, repo, "2026-03-10")
    twin = next((tmp_path / "out").rglob("2026-03-10*.json")).read_text("utf-8")
    for path in (tmp_path / "out").rglob("*.*"):  # the page, the twin, the archive's index
        found = sorted({f"U+{ord(ch):04X}" for ch in path.read_text("utf-8") if ch in HIDDEN})
        assert not found, f"{path.name} keeps {found}"
    # What is left is the visible text, in every field.
    assert "fix: evil admin check and more" in day.analyses
    assert "evil" in day.markdown and "admin" in twin
