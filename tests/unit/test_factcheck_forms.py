"""True claims the fact-check used to cut: a path the diff's text names, a figure
written another way, an identifier quoted from an expression.

The evidence is a realistic sampler commit: its message states the speed-up
in words and the hit rate as a fraction, and its diff names files in
comments and calls methods with arguments.
"""

from __future__ import annotations

import pytest

from repoherald.llm.factcheck import Evidence, Unsupported, audit, check, markers
from repoherald.llm.schema import FullAnswer, LlmInsights, ShortAnswer
from repoherald.models import ChangeType, Importance

MESSAGE = """[Sampler] Batch the top-k pass (#30211)

Batching the top-k pass makes sampling two times faster on 1,000 concurrent
requests. The prefix-cache hit rate stays at 0.5. 在 TPU 上吞吐提升两倍。
"""

DIFF = """diff --git a/vllm/v1/sample/sampler.py b/vllm/v1/sample/sampler.py
--- a/vllm/v1/sample/sampler.py
+++ b/vllm/v1/sample/sampler.py
@@ -88,9 +88,12 @@ class Sampler(nn.Module):
     def forward(self, logits, sampling_metadata):
-        probs = torch.softmax(logits, dim=-1)
-        return self.topk_topp_sampler(probs, sampling_metadata.top_k)
+        # The batched kernel lives in csrc/sampler/topk_batched.cu; see
+        # docs/design/v1/sampler.md for why the pass is batched.
+        cfg = self.sampler_config
+        cfg.batch_topk=True
+        return self.topk_topp_sampler.forward_batched(logits, k=cfg.max_top_k)
"""

EVIDENCE = Evidence(
    paths=frozenset({"vllm/v1/sample/sampler.py"}),
    text=MESSAGE + DIFF,
    numbers_text=MESSAGE + DIFF + "1 files changed (+5/−2)",
)
EN = markers("en")[0]


def _short(summary: str) -> ShortAnswer:
    return ShortAnswer(
        change_type=ChangeType.PERFORMANCE,
        importance=Importance.MEDIUM,
        judgement_reason="A faster default sampler.",
        summary=summary,
    )


def _full(impact: list[str], recommendations: list[str]) -> FullAnswer:
    text = "See the diff."
    return FullAnswer(
        change_type=ChangeType.PERFORMANCE,
        importance=Importance.MEDIUM,
        judgement_reason="A faster default sampler.",
        summary="Batches the top-k pass.",
        impact=impact,
        insights=LlmInsights(
            architecture=text,
            performance=text,
            security=text,
            maintainability=text,
            compatibility=text,
        ),
        risks=[],
        recommendations=recommendations,
    )


@pytest.mark.parametrize(
    "summary",
    [
        "The kernel is in `csrc/sampler/topk_batched.cu`.",
        "The design is explained in docs/design/v1/sampler.md.",
    ],
)
def test_a_path_named_in_the_diff_text_is_not_an_invention(summary: str) -> None:
    _, found = check(_short(summary), EVIDENCE, "en")
    assert found == []


@pytest.mark.parametrize(
    "summary",
    [
        "Sampling is 2x faster.",  # "two times" in the message
        "Sampling is 2× faster on 1000 requests.",
        "采样吞吐提升 2 倍。",  # "两倍" in the message
        "The hit rate stays at 50%.",  # "0.5" in the message
    ],
)
def test_a_figure_written_another_way_is_supported(summary: str) -> None:
    _, found = check(_short(summary), EVIDENCE, "en")
    assert found == []


def test_a_fraction_supports_a_percentage_but_not_another_one() -> None:
    result, found = check(_short("The hit rate stays at 60%."), EVIDENCE, "en")
    assert found == [Unsupported("summary", "60%", "number", "marked")]
    assert result.summary == f"The hit rate stays at 60%{EN}."


@pytest.mark.parametrize(
    "summary",
    [
        "It now calls `self.topk_topp_sampler.forward_batched(logits)`.",
        "It sets `cfg.batch_topk = True`.",
        "The bound is `k = cfg.max_top_k`.",
    ],
)
def test_an_identifier_quoted_from_an_expression_is_supported(summary: str) -> None:
    _, found = check(_short(summary), EVIDENCE, "en")
    assert found == []


def test_an_expression_with_an_invented_name_is_still_marked() -> None:
    _, found = check(_short("It calls `self.topk_topp_sampler.warmup(logits)`."), EVIDENCE, "en")
    assert [u.claim for u in found] == ["self.topk_topp_sampler.warmup(logits)"]


def test_only_clearly_false_items_are_removed() -> None:
    answer = _full(
        impact=["Callers of `vllm/v1/sample/ghost.py`.", "Sampling gets 3x faster."],
        recommendations=["Apply the fix for CVE-2024-99999.", "Re-tune `cfg.top_k_bias`."],
    )
    result, found = check(answer, EVIDENCE, "en")
    assert isinstance(result, FullAnswer)
    assert result.impact == [f"Sampling gets 3x{EN} faster."]
    assert result.recommendations == [f"Re-tune `cfg.top_k_bias`{EN}."]
    assert [(u.field, u.action) for u in found] == [
        ("impact[0]", "removed"),
        ("impact[1]", "marked"),
        ("recommendations[0]", "removed"),
        ("recommendations[1]", "marked"),
    ]


def test_the_audit_lists_what_the_check_lets_through_and_what_it_flags() -> None:
    answer = _short("`cfg.max_top_k` batches; a 60% gain in `Sampler.forward` and `Sampler.warp`.")
    claims = {(c.claim, c.supported) for c in audit(answer, EVIDENCE)}
    _, flagged = check(answer, EVIDENCE, "en")
    assert ("cfg.max_top_k", True) in claims and ("Sampler.forward", True) in claims
    assert {c for c, ok in claims if not ok} == {u.claim for u in flagged}
    assert {"60%", "Sampler.warp"} <= {u.claim for u in flagged}
