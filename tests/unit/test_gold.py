"""The committed labelled sets and their input caches are well-formed (no quality thresholds here).

Every set (the gold set the rules were developed on, and the held-out rounds)
is checked the same way.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import goldset
from bench.agreement import read_labels
from bench.scores import accuracy, class_scores, cohen_kappa, confusion, macro_f1
from repoherald.analysis.facts.commit import file_kind
from repoherald.models import ChangeType

RESERVED = ("vllm-project/vllm-ascend", "flashinfer-ai/flashinfer")


@pytest.fixture(scope="module", params=sorted(goldset.SETS))
def labelled(request: pytest.FixtureRequest) -> Path:
    folder: Path = goldset.SETS[request.param]
    return folder


@pytest.fixture(scope="module")
def gold(labelled: Path) -> list[goldset.GoldCommit]:
    return goldset.load_gold(labelled / "commits.tsv")


@pytest.fixture(scope="module")
def cache(labelled: Path) -> tuple[list[goldset.CommitInputs], dict[str, bytes]]:
    return goldset.load_cache(labelled / "inputs.jsonl.xz")


def test_every_row_is_labelled_and_unique(labelled: Path, gold: list[goldset.GoldCommit]) -> None:
    assert len(gold) >= (200 if labelled == goldset.GOLD_DIR else 100)
    assert len({row.repo for row in gold}) >= 3
    assert len({row.sha for row in gold}) == len(gold)
    types = {t.value for t in ChangeType}
    for row in gold:
        assert re.fullmatch(r"[0-9a-f]{40}", row.sha), row
        assert row.importance in goldset.LABELS, row
        assert row.type in types, row
        assert row.note.strip() and row.title.strip(), row
        assert row.repo not in RESERVED, row


def test_both_readings_cover_the_same_commits(
    labelled: Path, gold: list[goldset.GoldCommit]
) -> None:
    shas = [row.sha for row in gold]
    for name in ("labels_A.tsv", "labels_B.tsv"):
        rows = read_labels(labelled / name)
        assert [r["sha"] for r in rows] == shas, name
        assert all(r["importance"] in goldset.LABELS for r in rows), name


def test_the_cache_serves_every_gold_commit(
    gold: list[goldset.GoldCommit],
    cache: tuple[list[goldset.CommitInputs], dict[str, bytes]],
) -> None:
    inputs, blobs = cache
    assert [(i.repo, i.commit.sha) for i in inputs] == [(g.repo, g.sha) for g in gold]
    for item in inputs:
        for f in item.files:
            # Facts parse every Python source file: a missing blob would
            # silently turn it into "unparsed" and change the verdicts.
            if f.path.endswith((".py", ".pyi")) and file_kind(f.path) == "source":
                for oid in (f.old_blob, f.new_blob):
                    assert not oid or oid in blobs or f.binary, (item.commit.sha, f.path)


def test_the_cache_holds_no_email_address(
    cache: tuple[list[goldset.CommitInputs], dict[str, bytes]],
) -> None:
    inputs, _ = cache
    for item in inputs:
        found = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", item.commit.message)
        assert set(found) <= {"email@removed.invalid"}, item.commit.sha
        assert not item.commit.author.email and not item.commit.committer.email


def test_cache_round_trip(
    tmp_path: Path, cache: tuple[list[goldset.CommitInputs], dict[str, bytes]]
) -> None:
    inputs, blobs = cache
    some = {oid: blobs[oid] for oid in sorted(blobs)[:3]} | {"0" * 40: b"\xff\xfe not utf-8"}
    path = tmp_path / "inputs.jsonl.xz"
    goldset.write_cache(path, inputs[:5], some)
    again, again_blobs = goldset.load_cache(path)
    assert again == inputs[:5]
    assert again_blobs == some


def test_kappa_of_a_worked_example() -> None:
    # 10 items, 7 agreements; A says yes 6 times, B 5 times:
    # p_o = 0.7, p_e = 0.6*0.5 + 0.4*0.5 = 0.5, kappa = 0.2 / 0.5 = 0.4
    a = ["y", "y", "y", "y", "y", "y", "n", "n", "n", "n"]
    b = ["y", "y", "y", "y", "n", "n", "y", "n", "n", "n"]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == 1.0
    assert cohen_kappa(["x"] * 3, ["x"] * 3) == 1.0


def test_classification_scores() -> None:
    gold = ["high", "high", "medium", "low", "low", "low"]
    got = ["high", "low", "medium", "low", "medium", "low"]
    labels = ("high", "medium", "low")
    assert confusion(gold, got, labels) == [[1, 0, 1], [0, 1, 0], [0, 1, 2]]
    scores = {s.label: s for s in class_scores(gold, got, labels)}
    assert (scores["high"].precision, scores["high"].recall) == (1.0, 0.5)
    assert (scores["medium"].precision, scores["medium"].recall) == (0.5, 1.0)
    assert scores["low"].precision == pytest.approx(2 / 3)
    assert accuracy(gold, got) == pytest.approx(4 / 6)
    expected_f1 = (2 / 3 + 2 / 3 + 2 * (2 / 3) * (2 / 3) / (4 / 3)) / 3
    assert macro_f1(list(scores.values())) == pytest.approx(expected_f1)


def test_held_out_repositories_are_not_in_any_other_set() -> None:
    repos = {
        name: {row.repo for row in goldset.load_gold(folder / "commits.tsv")}
        for name, folder in goldset.SETS.items()
    }
    for name, own in repos.items():
        others = set().union(*(r for n, r in repos.items() if n != name))
        assert not own & others, (name, own & others)
