"""Score today's rules against the labelled gold set (``bench/gold/commits.tsv``).

Runs the real :class:`~repoherald.analysis.facts.commit.FactsExtractor` and
:class:`~repoherald.analysis.verdict.rules.RuleAnalyser` over every gold commit and
prints, for importance: accuracy, macro-F1, per-class precision and recall,
the 3x3 confusion matrix and every commit off by two tiers (🔴 called 🟢 or
the reverse), with the rules' reasons. Change-type accuracy is printed too.

Inputs come from the bare mirrors when all four are present (``--mirrors``,
default ``/work/.mirror``), else from the committed cache
``bench/gold/inputs.jsonl.xz`` (see :mod:`bench.goldset`). ``--write-cache``
rebuilds the cache from the mirrors and checks that both give the same verdicts.

Usage::

    .venv/bin/python -m bench.importance                    # mirrors if present, else cache
    .venv/bin/python -m bench.importance --source cache     # what CI can run
    .venv/bin/python -m bench.importance --write-cache      # after changing what facts read
    .venv/bin/python -m bench.importance --errors           # also list every wrong tier
    .venv/bin/python -m bench.importance --set holdout3     # repositories not used to write them

Exit status is 0 whatever the scores: benchmarks inform, they do not gate.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import goldset
from bench.goldset import LABELS, CommitInputs, GoldCommit
from bench.scores import accuracy, class_scores, confusion, macro_f1
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.i18n import localise
from repoherald.models import Commit, Facts

TARGETS = {"accuracy": 0.80, "macro_f1": 0.75, "high_recall": 0.85, "high_precision": 0.60}
_MARK = {"high": "🔴", "medium": "🟡", "low": "🟢"}


@dataclass(frozen=True)
class Verdict:
    """The rules' answer for one commit, reduced to what is scored."""

    type: str
    importance: str
    reasons: tuple[str, ...]


# -- adapter: the only lines that know RuleAnalyser's signature ---------------


def make_rules() -> RuleAnalyser:
    """The analyser under test, as the pipeline builds it."""
    return RuleAnalyser()


def judge(rules: RuleAnalyser, commit: Commit, facts: Facts) -> Verdict:
    """Run the rules on one commit's facts; reasons are rendered in English."""
    analysis = rules.analyse(commit, facts)
    reasons = tuple(localise("en", reason) for reason in analysis.reasons)
    return Verdict(analysis.change_type.value, analysis.importance.value, reasons)


# -- running -----------------------------------------------------------------


def verdicts(
    inputs: list[CommitInputs], read_blob: Callable[[str, str], bytes | None]
) -> dict[str, Verdict]:
    """Facts then rules for every commit; ``read_blob(repo, oid)`` serves the blobs."""
    rules = make_rules()
    extractors = {}
    out = {}
    for item in inputs:
        if item.repo not in extractors:
            repo = item.repo
            extractors[repo] = goldset.extractor_for(
                repo, lambda oid, repo=repo: read_blob(repo, oid)
            )
        facts = extractors[item.repo].extract(item.commit, item.files)
        out[item.commit.sha] = judge(rules, item.commit, facts)
    return out


def from_cache(path: Path) -> dict[str, Verdict]:
    """Verdicts computed from the committed input cache (no git needed)."""
    inputs, blobs = goldset.load_cache(path)
    return verdicts(inputs, lambda _repo, oid: blobs.get(oid))


def from_mirrors(mirrors: Path, gold: list[GoldCommit]) -> dict[str, Verdict]:
    """Verdicts computed from the bare mirrors, read as the pipeline reads a repository."""
    from repoherald.pipeline.analyse import MAX_BLOB_BYTES

    repos = list(dict.fromkeys(g.repo for g in gold))
    gits = {repo: goldset.open_mirror(mirrors, repo) for repo in repos}
    try:
        inputs = []
        for repo in repos:
            shas = [g.sha for g in gold if g.repo == repo]
            inputs.extend(goldset.read_mirror(gits[repo], repo, shas))
        return verdicts(inputs, lambda repo, oid: gits[repo].read_blob(oid, MAX_BLOB_BYTES))
    finally:
        for git in gits.values():
            git.close()


def write_cache(mirrors: Path, gold: list[GoldCommit], path: Path) -> None:
    """Rebuild the cache from the mirrors, then check it reproduces the mirrors' verdicts."""
    inputs, blobs = goldset.collect_from_mirrors(mirrors, gold)
    goldset.write_cache(path, inputs, blobs)
    size = path.stat().st_size
    print(f"wrote {path}: {len(inputs)} commits, {len(blobs)} blobs, {size / 1e6:.1f} MB")
    direct = from_mirrors(mirrors, gold)
    cached = from_cache(path)
    differ = [sha for sha in direct if direct[sha] != cached.get(sha)]
    if differ:
        raise SystemExit(f"cache and mirrors disagree on {len(differ)} commits: {differ[:5]}")
    print("cache and mirrors give identical verdicts")


# -- printing ----------------------------------------------------------------


def report(gold: list[GoldCommit], got: dict[str, Verdict], show_errors: bool) -> str:
    """The scores as text."""
    g = [row.importance for row in gold]
    p = [got[row.sha].importance for row in gold]
    scores = class_scores(g, p, LABELS)
    acc, mf1 = accuracy(g, p), macro_f1(scores)
    lines = [
        f"gold set: {len(gold)} commits, {len({r.repo for r in gold})} repositories",
        f"importance  accuracy {acc:.3f}   macro-F1 {mf1:.3f}",
        "  class     precision  recall     F1   gold  rules",
    ]
    for s in scores:
        lines.append(
            f"  {_MARK[s.label]} {s.label:<7}{s.precision:>9.3f}{s.recall:>8.3f}{s.f1:>7.3f}"
            f"{s.support:>7}{s.predicted:>7}"
        )
    lines.append("confusion (rows gold, columns rules):   high  medium     low")
    for label, row in zip(LABELS, confusion(g, p, LABELS), strict=True):
        lines.append(f"  {_MARK[label]} {label:<34}" + "".join(f"{n:>8}" for n in row))
    type_acc = accuracy([r.type for r in gold], [got[r.sha].type for r in gold])
    lines.append(f"change type accuracy {type_acc:.3f}")
    far = [r for r in gold if {r.importance, got[r.sha].importance} == {"high", "low"}]
    lines.append(f"off by two tiers: {len(far)}")
    lines.extend(_describe(r, got[r.sha]) for r in far)
    if show_errors:
        near = [r for r in gold if r.importance != got[r.sha].importance and r not in far]
        lines.append(f"off by one tier: {len(near)}")
        lines.extend(_describe(r, got[r.sha]) for r in near)
    high = scores[0]
    precision_ok = high.precision >= TARGETS["high_precision"]
    checks = [
        ("accuracy", acc >= TARGETS["accuracy"], f"{acc:.3f} ≥ {TARGETS['accuracy']}"),
        ("macro-F1", mf1 >= TARGETS["macro_f1"], f"{mf1:.3f} ≥ {TARGETS['macro_f1']}"),
        ("🔴 recall", high.recall >= TARGETS["high_recall"], f"{high.recall:.3f} ≥ 0.85"),
        ("🔴 precision", precision_ok, f"{high.precision:.3f} ≥ 0.6"),
        ("no two-tier errors", not far, f"{len(far)} = 0"),
    ]
    lines.append("targets (issue 11):")
    lines.extend(f"  {'PASS' if ok else 'FAIL'}  {name}: {text}" for name, ok, text in checks)
    return "\n".join(lines)


def _describe(row: GoldCommit, v: Verdict) -> str:
    reasons = "; ".join(v.reasons) or "no reason given"
    return (
        f"  {row.repo} {row.sha[:10]} gold {_MARK[row.importance]} {row.importance}, "
        f"rules {_MARK[v.importance]} {v.importance}: {row.title[:90]}\n"
        f"      gold: {row.note}\n      rules: {reasons}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set",
        choices=tuple(goldset.SETS),
        default="gold",
        help="gold: the development set; holdout: repositories no rule was written against",
    )
    parser.add_argument("--mirrors", type=Path, default=goldset.DEFAULT_MIRRORS)
    parser.add_argument("--cache", type=Path, help="default: the set's inputs.jsonl.xz")
    parser.add_argument("--source", choices=("auto", "mirrors", "cache"), default="auto")
    parser.add_argument("--write-cache", action="store_true", help="rebuild the cache first")
    parser.add_argument("--errors", action="store_true", help="also list one-tier errors")
    args = parser.parse_args(argv)
    folder = goldset.SETS[args.set]
    args.cache = args.cache or folder / "inputs.jsonl.xz"
    gold = goldset.load_gold(folder / "commits.tsv")
    have_mirrors = goldset.mirrors_present(args.mirrors, {g.repo for g in gold})
    if args.write_cache:
        if not have_mirrors:
            raise SystemExit(f"--write-cache needs the mirrors under {args.mirrors}")
        write_cache(args.mirrors, gold, args.cache)
    source = args.source
    if source == "auto":
        source = "mirrors" if have_mirrors else "cache"
    print(f"source: {args.mirrors if source == 'mirrors' else args.cache}", file=sys.stderr)
    got = from_mirrors(args.mirrors, gold) if source == "mirrors" else from_cache(args.cache)
    print(report(gold, got, args.errors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
