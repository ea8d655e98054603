"""Inter-rater agreement of the gold set's two independent readings.

Prints Cohen's κ for importance and for change type between
``bench/gold/labels_A.tsv`` and ``bench/gold/labels_B.tsv``, the raw
agreement, the confusion of the two readers' importance labels, and every
commit they disagree on (which ``bench/gold/LABELLING.md`` reconciles).

Usage::

    .venv/bin/python -m bench.agreement [--a FILE] [--b FILE]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from bench.goldset import SETS
from bench.scores import cohen_kappa, confusion

IMPORTANCE = ("high", "medium", "low")


def read_labels(path: Path) -> list[dict[str, str]]:
    """Rows of a reader's TSV (repo, sha, type, importance, note)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def report(a_rows: list[dict[str, str]], b_rows: list[dict[str, str]]) -> str:
    """The agreement report as text; raises if the files do not cover the same commits."""
    if [r["sha"] for r in a_rows] != [r["sha"] for r in b_rows]:
        raise SystemExit("the two label files list different commits or a different order")
    lines = [f"commits: {len(a_rows)}"]
    for field in ("importance", "type"):
        a = [r[field] for r in a_rows]
        b = [r[field] for r in b_rows]
        agree = sum(x == y for x, y in zip(a, b, strict=True))
        lines.append(
            f"{field:<10} κ = {cohen_kappa(a, b):.3f}   raw agreement {agree}/{len(a)}"
            f" = {agree / len(a):.3f}"
        )
    matrix = confusion(
        [r["importance"] for r in a_rows], [r["importance"] for r in b_rows], IMPORTANCE
    )
    lines.append("importance, rows A, columns B: " + "  ".join(IMPORTANCE))
    for label, row in zip(IMPORTANCE, matrix, strict=True):
        lines.append(f"  {label:<7}" + "".join(f"{n:>8}" for n in row))
    lines.append("disagreements:")
    for x, y in zip(a_rows, b_rows, strict=True):
        if (x["type"], x["importance"]) != (y["type"], y["importance"]):
            lines.append(
                f"  {x['repo']} {x['sha'][:10]}  A {x['type']}/{x['importance']}"
                f"  B {y['type']}/{y['importance']}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=tuple(SETS), default="gold")
    parser.add_argument("--a", type=Path, help="default: the set's labels_A.tsv")
    parser.add_argument("--b", type=Path, help="default: the set's labels_B.tsv")
    args = parser.parse_args(argv)
    folder = SETS[args.set]
    args.a = args.a or folder / "labels_A.tsv"
    args.b = args.b or folder / "labels_B.tsv"
    print(report(read_labels(args.a), read_labels(args.b)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
