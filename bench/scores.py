"""Agreement and classification scores over label lists, with no dependencies.

The gold set is small (hundreds of commits) and its figures are quoted in
notes and reviews, so the arithmetic is written out here where anyone can
check it, rather than hidden behind a library call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's κ of two raters over the same items: (p_o - p_e) / (1 - p_e).

    ``p_o`` is the observed share of items on which the raters agree and
    ``p_e`` the agreement expected by chance from each rater's own label
    frequencies. Returns 1.0 when both raters use one and the same label for
    everything (``p_e`` = 1), where the formula is undefined but agreement is
    perfect.
    """
    if len(a) != len(b):
        raise ValueError(f"raters labelled different numbers of items: {len(a)} != {len(b)}")
    if not a:
        raise ValueError("no items to compare")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class ClassScores:
    """Precision, recall and F1 of one class, with the counts behind them."""

    label: str
    precision: float
    recall: float
    f1: float
    support: int
    """How many gold items carry this label."""
    predicted: int
    """How many items the classifier gave this label."""


def confusion(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]
) -> list[list[int]]:
    """Rows are gold labels, columns predicted labels, both in ``labels`` order."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, predicted, strict=True):
        matrix[index[g]][index[p]] += 1
    return matrix


def class_scores(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]
) -> list[ClassScores]:
    """Per-class precision and recall; a ratio with a zero denominator counts as 0."""
    matrix = confusion(gold, predicted, labels)
    out = []
    for i, label in enumerate(labels):
        tp = matrix[i][i]
        support = sum(matrix[i])
        predicted_n = sum(row[i] for row in matrix)
        precision = tp / predicted_n if predicted_n else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out.append(ClassScores(label, precision, recall, f1, support, predicted_n))
    return out


def accuracy(gold: Sequence[str], predicted: Sequence[str]) -> float:
    """Share of items where the prediction equals the gold label."""
    if len(gold) != len(predicted) or not gold:
        raise ValueError("accuracy needs two label lists of the same non-zero length")
    return sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)


def macro_f1(scores: Sequence[ClassScores]) -> float:
    """Unweighted mean of the per-class F1 scores (every class counts the same)."""
    return sum(s.f1 for s in scores) / len(scores) if scores else 0.0
