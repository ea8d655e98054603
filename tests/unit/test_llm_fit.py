"""Over-long answer fields are cut at a sentence end, else a word, and kept."""

from __future__ import annotations

from repoherald.llm.fit import cut_text, fit
from repoherald.llm.schema import FullAnswer


def test_cut_at_the_last_sentence_end_that_fits() -> None:
    text = "First sentence here. Second one is longer than that. Third."
    assert cut_text(text, 40) == "First sentence here."


def test_chinese_sentence_ends() -> None:
    text = "调度器不再崩溃。取消的请求被正确释放！" + "后续内容" * 20
    assert cut_text(text, 30) == "调度器不再崩溃。取消的请求被正确释放！"


def test_word_boundary_when_no_sentence_ends() -> None:
    text = "word " * 30
    cut = cut_text(text, 23)
    assert cut == "word word word word"


def test_dotted_names_are_not_sentence_ends() -> None:
    text = "Calls torch.compile on the model and then waits for the result to come"
    assert cut_text(text, 30) == "Calls torch.compile on the"


def test_within_bounds_is_untouched() -> None:
    assert cut_text("Short.", 300) == "Short."


def test_fit_cuts_lists_and_nested_risks_and_leaves_wrong_types() -> None:
    data = {
        "impact": [f"item {i}" for i in range(12)],
        "risks": [{"risk": "r " * 200, "detail": "d", "mitigation": "m"}] * 7,
        "recommendations": "not a list",
        "importance": "urgent",
    }
    out = fit(data, FullAnswer)
    assert out["impact"] == [f"item {i}" for i in range(8)]
    assert len(out["risks"]) == 5
    assert len(out["risks"][0]["risk"]) <= 300
    assert out["recommendations"] == "not a list"
    assert out["importance"] == "urgent"
    assert data["impact"][8] == "item 8", "the input is not changed"
