"""What a commit's message says about other commits, read by the real facts extractor.

Each case is a message as upstream projects write them; the mentions are
what the store keeps for linking. Prose that only looks like a reference
(a version, an issue in passing, the commit's own PR) names nothing.
"""

from __future__ import annotations

import pytest

from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.facts.related import mentions, relanded_title, title_key, title_keys_for
from repoherald.models import Commit, FileChange, FileStatus, Mention, Person

OWN = "c0ffee" + "0" * 34
OLD = "1a2b3c4d5e6f708192a3b4c5d6e7f80912345678"


def _mentions(message: str) -> tuple[Mention, ...]:
    who = Person("Dev", "dev@example.com")
    commit = Commit(OWN, ("b" * 40,), who, 0, 0, who, 0, 0, message)
    extractor = FactsExtractor(AreaRules(), lambda oid: None)
    facts = extractor.extract(commit, [FileChange("src/a.py", FileStatus.MODIFIED, None, 1, 1)])
    return mentions(commit, facts)


CASES = [
    (f'Revert "Add fused MoE (#101)"\n\nThis reverts commit {OLD}.', [("reverts", "sha", OLD)]),
    ('Reapply "Add fused MoE (#101)" (#120)', [("relands", "title", "add fused moe")]),
    ("[Reland] Use cutlass for fp8 (#4)", [("relands", "title", "use cutlass for fp8")]),
    ("Re-land: Use cutlass for fp8", [("relands", "title", "use cutlass for fp8")]),
    ("Add back FlashInfer fallback (#7)", [("relands", "title", "flashinfer fallback")]),
    (
        f'Revert "Revert "Add fused MoE (#101)"" (#130)\n\nThis reverts commit {OLD[:10]}.',
        [("reverts", "sha", OLD[:10]), ("relands", "title", "add fused moe")],
    ),
    (f'Fix seed\n\nFixes: {OLD[:12]} ("Refactor sampler")', [("fixes", "sha", OLD[:12])]),
    ("Fix seed\n\nFixes #102", [("fixes", "pr", "102")]),
    (f"Fix the tuning\n\nfixes commit {OLD[:8]}", [("fixes", "sha", OLD[:8])]),
    ("Tune block sizes\n\nFollow-up to #101.", [("follows_up", "pr", "101")]),
    (
        "Tune block sizes\n\nfollow up of https://github.com/acme/w/pull/99 and of nothing",
        [("follows_up", "pr", "99")],
    ),
    (f"[Misc] follow-up for {OLD[:7]}: rename", [("follows_up", "sha", OLD[:7])]),
]


@pytest.mark.parametrize(("message", "expected"), CASES, ids=[c[0][:30] for c in CASES])
def test_references_are_read(message: str, expected: list[tuple[str, str, str]]) -> None:
    assert _mentions(message) == tuple(Mention(*m) for m in expected)


@pytest.mark.parametrize(
    "message",
    [
        "Fix crash on empty batch",
        "Bump version to 0.11.2",
        "Prefix caching: fix hit rate (#55)",  # its own PR
        f"Fix self reference\n\nFixes: {OWN[:9]}",  # its own SHA
        "Adds back-pressure to the scheduler",  # not "add back"
        "Fixes: see the discussion",
        "Unfixed 1234567 things",
    ],
)
def test_prose_names_nothing(message: str) -> None:
    assert _mentions(message) == ()


def test_title_keys_match_across_quotes_pr_suffixes_and_case() -> None:
    assert title_key('  "Add Fused  MoE (#101)"  ') == "add fused moe"
    assert relanded_title('Revert "Revert "Add fused MoE (#101)""') == "add fused moe"
    assert relanded_title('Revert "Add fused MoE"') is None
    both = ("flashinfer fallback", "add flashinfer fallback")
    assert title_keys_for("flashinfer fallback") == both
