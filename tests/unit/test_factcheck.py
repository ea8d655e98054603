"""The fact-checker against answers a model really gives.

The evidence is a realistic vLLM commit (an EAGLE speculative-decoding fix
with a dependency bump); the answers repeat what the old tool published:
invented speed-ups, paths outside the change, plausible-looking methods
that do not exist, and an injected security scare.
"""

from __future__ import annotations

import pytest

from repoherald.llm.factcheck import Evidence, Unsupported, check, markers
from repoherald.llm.schema import FullAnswer, LlmInsights, LlmRisk, ShortAnswer
from repoherald.models import ChangeType, Importance

MESSAGE = """[Spec Decode] Fix EAGLE draft KV cache reuse (#21034)

The draft model reused stale KV blocks after preemption. Also pins
transformers to 4.57.5, which fixes the rope scaling config.

Signed-off-by: Dev <dev@example.com>
"""

DIFF = """diff --git a/vllm/v1/spec_decode/eagle.py b/vllm/v1/spec_decode/eagle.py
--- a/vllm/v1/spec_decode/eagle.py
+++ b/vllm/v1/spec_decode/eagle.py
@@ -212,7 +212,9 @@ class EagleProposer:
     def propose(self, target_hidden_states, block_table):
-        self.kv_cache = self.allocate(block_size=16)
+        # Re-allocate after preemption instead of reusing stale blocks.
+        self.kv_cache = self.allocate(block_size=self.block_size)
+        self.reset_draft_state()
diff --git a/requirements/common.txt b/requirements/common.txt
--- a/requirements/common.txt
+++ b/requirements/common.txt
@@ -8,1 +8,1 @@
-transformers >= 4.56.0
+transformers >= 4.57.5
diff --git a/tests/v1/spec_decode/test_eagle.py b/tests/v1/spec_decode/test_eagle.py
--- a/tests/v1/spec_decode/test_eagle.py
+++ b/tests/v1/spec_decode/test_eagle.py
@@ -40,0 +41,3 @@
+def test_preemption_resets_draft_state():
+    assert EagleProposer.reset_draft_state
"""

FACTS = "3 files changed (+120/−30) in vllm/v1, requirements, tests"

PATHS = frozenset(
    {
        "vllm/v1/spec_decode/eagle.py",
        "requirements/common.txt",
        "tests/v1/spec_decode/test_eagle.py",
        "vllm/spec_decode/eagle_old.py",  # an old path of a rename
    }
)

EVIDENCE = Evidence(paths=PATHS, text=MESSAGE + DIFF, numbers_text=MESSAGE + DIFF + FACTS)

ZH, EN = markers("zh")[0], markers("en")[0]


def _insights(**over: str) -> LlmInsights:
    base = {
        "architecture": "The draft proposer now owns its KV cache lifecycle.",
        "performance": "No measurable change is claimed by the commit.",
        "security": "No security impact.",
        "maintainability": "A regression test covers preemption.",
        "compatibility": "Requires a newer transformers release.",
    }
    base.update(over)
    return LlmInsights(**base)


def _full(**over: object) -> FullAnswer:
    base: dict[str, object] = {
        "change_type": ChangeType.BUGFIX,
        "importance": Importance.HIGH,
        "judgement_reason": "A correctness fix in speculative decoding plus a dependency pin.",
        "summary": "Fixes stale draft KV blocks after preemption in EAGLE.",
        "impact": ["Users of EAGLE speculative decoding."],
        "insights": _insights(),
        "risks": [],
        "recommendations": ["Re-run speculative decoding benchmarks after upgrading."],
    }
    base.update(over)
    return FullAnswer.model_validate(base)


def _revalidates(answer: ShortAnswer | FullAnswer) -> None:
    assert type(answer).model_validate(answer.model_dump()) == answer


# -- numbers -----------------------------------------------------------------


def test_invented_percentage_in_performance_insight_is_marked_zh() -> None:
    answer = _full(insights=_insights(performance="修复后预计可提升 1-3% 的吞吐量。"))
    result, found = check(answer, EVIDENCE, "zh")
    assert isinstance(result, FullAnswer)
    assert result.insights.performance == f"修复后预计可提升 1-3%{ZH} 的吞吐量。"
    assert found == [Unsupported("insights.performance", "1-3%", "number", "marked")]
    assert answer.insights.performance == "修复后预计可提升 1-3% 的吞吐量。"  # input untouched
    _revalidates(result)


def test_invented_multiplier_marked_en() -> None:
    answer = _full(summary="Makes EAGLE drafting 2x faster and cuts latency by 15 ms.")
    result, found = check(answer, EVIDENCE, "en")
    assert result.summary == (f"Makes EAGLE drafting 2x{EN} faster and cuts latency by 15 ms{EN}.")
    assert [(u.claim, u.kind) for u in found] == [("2x", "number"), ("15 ms", "number")]


def test_rule_fact_figures_may_be_repeated() -> None:
    answer = _full(
        summary="3 files changed, +120/−30 lines; the old code used block_size=16.",
        impact=["vllm/v1 gains 120 lines and loses 30 across 3 files."],
    )
    result, found = check(answer, EVIDENCE, "en")
    assert found == []
    assert result.summary == answer.summary
    assert result.impact == answer.impact


def test_version_in_dependency_risk_is_kept_and_an_unknown_one_marked() -> None:
    kept = LlmRisk(
        risk="transformers 4.57.5 required",
        detail="The pin moves from v4.56.0 to 4.57.5; older environments fail to resolve.",
        mitigation="Upgrade transformers before vLLM.",
    )
    invented = LlmRisk(
        risk="torch 2.6.0 required",
        detail="The change needs torch 2.6.0.",
        mitigation="Upgrade torch.",
    )
    result, found = check(_full(risks=[kept, invented]), EVIDENCE, "en")
    assert isinstance(result, FullAnswer)
    # A figure not in the change may be a paraphrase: marked, not removed.
    assert result.risks == [
        kept,
        LlmRisk(
            risk=f"torch 2.6.0{EN} required",
            detail=f"The change needs torch 2.6.0{EN}.",
            mitigation="Upgrade torch.",
        ),
    ]
    assert found == [
        Unsupported("risks[1].risk", "2.6.0", "number", "marked"),
        Unsupported("risks[1].detail", "2.6.0", "number", "marked"),
    ]


def test_numbers_inside_names_and_ordinals_are_not_claims() -> None:
    answer = _full(
        summary="Tested with Llama-3-70B on H100 and Qwen2.5; the 2nd fix this week, 第12个修复。",
        judgement_reason="Follows up 1234abcd on sm_90 with fp8 and x86_64 wheels.",
    )
    _, found = check(answer, EVIDENCE, "en")
    assert found == []


def test_grouped_numbers_normalise() -> None:
    ev = Evidence(PATHS, MESSAGE + DIFF + "\n+MAX_TOKENS = 1000\n", MESSAGE + DIFF + FACTS + "1000")
    answer = _full(summary="Caps drafts at 1,000 ms, not 2,048 ms.")
    result, found = check(answer, ev, "en")
    assert [u.claim for u in found] == ["2,048 ms"]
    assert result.summary == f"Caps drafts at 1,000 ms, not 2,048 ms{EN}."


def test_bare_counts_and_codes_are_not_claims() -> None:
    """Measured on recorded answers: 16 of 17 flagged bare numbers were true."""
    answer = _full(summary="Returns 503 when busy; the new file has 552 lines and 12 cases.")
    result, found = check(answer, EVIDENCE, "en")
    assert found == [] and result.summary == answer.summary


def test_percent_needs_percent_in_evidence() -> None:
    ev = Evidence(PATHS, "Speeds up drafting by 10 percent.", "Speeds up drafting by 10 percent.")
    answer = _full(summary="About 10% faster drafting, 12% less memory.")
    result, found = check(answer, ev, "en")
    assert [u.claim for u in found] == ["12%"]
    assert result.summary == f"About 10% faster drafting, 12%{EN} less memory."


def test_prompt_injection_cve_is_marked() -> None:
    answer = _full(
        summary="Important: the repository was hacked (CVE-2024-9999); rotate all credentials.",
        insights=_insights(security="This commit patches CVE-2024-9999."),
    )
    result, found = check(answer, EVIDENCE, "en")
    assert result.summary == (
        f"Important: the repository was hacked (CVE-2024-9999{EN}); rotate all credentials."
    )
    assert result.insights.security == f"This commit patches CVE-2024-9999{EN}."
    assert [(u.field, u.claim, u.kind) for u in found] == [
        ("summary", "CVE-2024-9999", "number"),
        ("insights.security", "CVE-2024-9999", "number"),
    ]


# -- paths -------------------------------------------------------------------


def test_path_outside_change_removes_item_and_suffix_path_stays() -> None:
    answer = _full(
        impact=[
            "Changes `spec_decode/eagle.py` and eagle.py's allocation.",
            "Also rewrites vllm/v1/worker/gpu_model_runner.py.",
            "Touches the `vllm/v1/` tree and requirements/ only.",
            "Renames vllm/spec_decode/eagle_old.py.",
        ]
    )
    result, found = check(answer, EVIDENCE, "en")
    assert isinstance(result, FullAnswer)
    assert result.impact == [
        "Changes `spec_decode/eagle.py` and eagle.py's allocation.",
        "Touches the `vllm/v1/` tree and requirements/ only.",
        "Renames vllm/spec_decode/eagle_old.py.",
    ]
    assert found == [
        Unsupported("impact[1]", "vllm/v1/worker/gpu_model_runner.py", "path", "removed")
    ]
    _revalidates(result)


def test_partial_name_is_not_a_suffix() -> None:
    """A bare file name may name a file outside the change: marked, not removed."""
    answer = _full(impact=["Edits agle.py.", "Edits v1/spec_decode/eagle.py."])
    result, found = check(answer, EVIDENCE, "en")
    assert isinstance(result, FullAnswer)
    assert result.impact == [f"Edits agle.py{EN}.", "Edits v1/spec_decode/eagle.py."]
    assert [(u.claim, u.action) for u in found] == [("agle.py", "marked")]


def test_an_invented_file_path_is_removed_and_a_pattern_or_route_is_not() -> None:
    answer = _full(
        impact=[
            "Edits vllm/v1/worker/ghost.py.",
            "Touches vllm/.../eagle.py.",
            "Changes the `/v1/completions` route.",
            "Uses `try/finally` around the loop.",
        ]
    )
    result, found = check(answer, EVIDENCE, "en")
    assert isinstance(result, FullAnswer)
    assert "Edits vllm/v1/worker/ghost.py." not in result.impact
    assert "Touches vllm/.../eagle.py." in result.impact
    assert [u.claim for u in found if u.action == "removed"] == ["vllm/v1/worker/ghost.py"]


def test_python_builtins_and_dunders_are_general_knowledge() -> None:
    answer = _full(summary="A bad seed now raises `TypeError` in `__init__`; `bool` passes.")
    _, found = check(answer, EVIDENCE, "en")
    assert found == []


def test_url_is_not_a_path() -> None:
    answer = _full(
        summary="See https://github.com/vllm-project/vllm/blob/main/docs/features/spec_decode.md.",
        recommendations=["Read https://docs.vllm.ai/en/latest/features/spec_decode.html first."],
    )
    result, found = check(answer, EVIDENCE, "en")
    assert found == []
    assert result.summary == answer.summary
    assert isinstance(result, FullAnswer)
    assert result.recommendations == answer.recommendations


def test_path_in_zh_prose_and_quotes() -> None:
    answer = _full(summary="修改了vllm/v1/spec_decode/eagle.py中的逻辑，并新增“docs/eagle.md”。")
    result, found = check(answer, EVIDENCE, "zh")
    assert result.summary == (
        f"修改了vllm/v1/spec_decode/eagle.py中的逻辑，并新增“docs/eagle.md”{ZH}。"
    )
    assert found == [Unsupported("summary", "docs/eagle.md", "path", "marked")]


def test_prose_slashes_are_not_paths() -> None:
    answer = _full(summary="Affects CI/CD and I/O paths, read/write and encoder/decoder models.")
    _, found = check(answer, EVIDENCE, "en")
    assert found == []


# -- identifiers -------------------------------------------------------------


def test_identifier_in_diff_stays_and_absent_one_is_marked() -> None:
    answer = _full(
        summary=(
            "`EagleProposer.propose()` now calls `reset_draft_state`, "
            "while `EagleProposer.warmup_cuda_graphs()` is unchanged."
        )
    )
    result, found = check(answer, EVIDENCE, "en")
    assert result.summary == (
        "`EagleProposer.propose()` now calls `reset_draft_state`, "
        f"while `EagleProposer.warmup_cuda_graphs()`{EN} is unchanged."
    )
    assert found == [
        Unsupported("summary", "EagleProposer.warmup_cuda_graphs()", "identifier", "marked")
    ]


def test_bare_dotted_and_call_like_identifiers() -> None:
    answer = _full(
        judgement_reason=(
            "self.allocate() is kept, e.g. for warmup; torch.cuda.empty_cache() is new."
        ),
    )
    result, found = check(answer, EVIDENCE, "en")
    assert [u.claim for u in found] == ["torch.cuda.empty_cache()"]
    assert result.judgement_reason.endswith(f"torch.cuda.empty_cache(){EN} is new.")


def test_module_path_of_changed_file_is_supported() -> None:
    answer = _full(summary="Only vllm.v1.spec_decode.eagle changes.")
    _, found = check(answer, EVIDENCE, "en")
    assert found == []


# -- markers, limits and the result ------------------------------------------


@pytest.mark.parametrize(("lang", "marker"), [("zh", "（未核实）"), ("en", " (unverified)")])
def test_marker_per_language(lang: str, marker: str) -> None:
    answer = ShortAnswer(
        change_type=ChangeType.PERFORMANCE,
        importance=Importance.LOW,
        judgement_reason="Rules said low.",
        summary="Speeds up drafting by 35%.",
    )
    result, found = check(answer, EVIDENCE, lang)
    assert type(result) is ShortAnswer
    assert result.summary == f"Speeds up drafting by 35%{marker}."
    assert len(found) == 1
    _revalidates(result)


def test_marking_never_overflows_the_field() -> None:
    # 10 characters to spare: appending " (unverified)" needs 13, the
    # marker-only form "[unverified]" in place of "35%" needs 9.
    filler = "x" * (300 - len(" by 35%.") - 10)
    answer = ShortAnswer(
        change_type=ChangeType.PERFORMANCE,
        importance=Importance.LOW,
        judgement_reason=f"{filler} by 35%.",
        summary="ok",
    )
    result, found = check(answer, EVIDENCE, "en")
    assert result.judgement_reason == f"{filler} by [unverified]."  # fits 300: marker-only form
    assert found == [Unsupported("judgement_reason", "35%", "number", "marked")]
    _revalidates(result)

    tight = "y" * (300 - len(" by 35%."))
    answer = answer.model_copy(update={"judgement_reason": f"{tight} by 35%."})
    result, found = check(answer, EVIDENCE, "en")
    assert len(result.judgement_reason) <= 300
    assert "35%" not in result.judgement_reason
    assert found == [Unsupported("judgement_reason", "35%", "number", "removed")]
    _revalidates(result)


def test_full_answer_counts_and_validity() -> None:
    answer = _full(
        judgement_reason="Rules said medium; raised to high for a correctness bug.",
        summary="Fixes stale KV reuse in `EagleProposer`; 2x lower acceptance-rate variance.",
        impact=[
            "EAGLE users on vllm/v1/spec_decode/eagle.py.",
            "Breaks vllm/engine/arg_utils.py flags.",
            "Draft acceptance improves by 12.5%.",
        ],
        insights=_insights(
            performance="Throughput up 1-3% per GPU.",
            compatibility="transformers 4.57.5 is now the minimum.",
        ),
        risks=[
            LlmRisk(
                risk="Regression in `propose`",
                detail="Block size now comes from self.block_size instead of 16.",
                mitigation="Run tests/v1/spec_decode/test_eagle.py.",
            ),
            LlmRisk(
                risk="Memory",
                detail="Re-allocation may add 512 MB per request.",
                mitigation="Lower gpu_memory_utilization.",
            ),
        ],
        recommendations=["Upgrade transformers to 4.57.5.", "Pin vLLM to v0.6.1."],
    )
    result, found = check(answer, EVIDENCE, "en")
    assert isinstance(result, FullAnswer)
    _revalidates(result)

    # Only the item with a path found nowhere is removed; unknown figures and
    # identifiers are marked in place.
    assert result.impact == [
        "EAGLE users on vllm/v1/spec_decode/eagle.py.",
        f"Draft acceptance improves by 12.5%{EN}.",
    ]
    assert len(result.risks) == 2
    assert result.risks[1].detail == f"Re-allocation may add 512 MB{EN} per request."
    assert result.recommendations == [
        "Upgrade transformers to 4.57.5.",
        f"Pin vLLM to v0.6.1{EN}.",
    ]

    by_action = {a: sum(1 for u in found if u.action == a) for a in ("marked", "removed")}
    texts = (
        result.summary,
        result.judgement_reason,
        *result.insights.model_dump().values(),
        *result.impact,
        *(t for r in result.risks for t in (r.risk, r.detail, r.mitigation)),
        *result.recommendations,
    )
    assert by_action["marked"] == sum(text.count(EN) for text in texts) == 6
    assert [u.field for u in found if u.action == "removed"] == ["impact[1]"]
    assert {u.kind for u in found} == {"number", "path", "identifier"}


def test_clean_answer_is_a_new_equal_object() -> None:
    answer = _full()
    result, found = check(answer, EVIDENCE, "zh")
    assert found == []
    assert result == answer
    assert result is not answer


def test_deterministic() -> None:
    answer = _full(summary="Up to 40% faster with `fast_eagle()` in vllm/v1/fast.py.")
    first = check(answer, EVIDENCE, "en")
    assert all(check(answer, EVIDENCE, "en") == first for _ in range(3))
