"""Measure the fact-check on recorded model answers: how often is it right?

The fact-check (:mod:`repoherald.llm.factcheck`) marks or removes the claims
of a model's answer that it cannot trace to the commit. A removed claim is
lost information and a marked one casts doubt on the answer, so its own
precision matters as much as what it catches. This tool:

* ``sample`` — rebuilds each recorded answer's evidence exactly as the
  pipeline does (the commit and its diff from the bare mirror, the facts,
  :func:`repoherald.llm.answer.evidence`), lists every claim the check
  extracts (:func:`repoherald.llm.factcheck.audit`) with the action
  :func:`~repoherald.llm.factcheck.check` takes on it, and writes a random
  sample of flagged (marked or removed) and let-through claims as files for
  a labeller, who sees the claim in its sentence and the commit's message
  and diff, and answers whether the claim is true of the commit;
* ``merge`` — folds the labeller's ``answers.txt`` (``NNN<TAB>true|false|unclear<TAB>why``
  per claim) into the sample's sheet and writes the committed labels;
* ``score`` — reads the committed labels (``bench/llm/factcheck_labels.tsv``)
  and prints the check's precision (flagged claims that were indeed false),
  the removals' precision, and its recall, estimated from the false claims
  found among the let-through sample scaled to all let-through claims.

Usage::

    .venv/bin/python -m bench.factcheck_audit sample --set holdout5 --set holdout6 --out DIR
    .venv/bin/python -m bench.factcheck_audit score

Exit status 0 whatever the figures: benchmarks inform.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import goldset
from bench.llm_recording import Recording, is_repair
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.llm.analyser import PROMPT_VERSION, parse_answer
from repoherald.llm.answer import evidence
from repoherald.llm.factcheck import audit, check
from repoherald.llm.job import LlmJob
from repoherald.llm.schema import FullAnswer, ShortAnswer
from repoherald.models import CommitPatch
from repoherald.pipeline.analyse import MAX_BLOB_BYTES
from repoherald.sources.unidiff import split_patch

LABELS = Path(__file__).parent / "llm" / "factcheck_labels.tsv"
COLUMNS = ("set", "sha", "field", "claim", "kind", "action", "label", "note")
"""``action`` is marked, removed or kept; ``label`` is true, false or unclear."""
EVIDENCE_CHARS = 60_000


@dataclass(frozen=True)
class Audited:
    """One claim of one recorded answer, with what the check did and what the labeller sees."""

    set: str
    repo: str
    sha: str
    title: str
    field: str
    text: str
    claim: str
    kind: str
    action: str
    evidence: str


def claims_of(set_name: str, mirrors: Path, recordings: Path) -> Iterator[Audited]:
    """Every claim of every recorded first answer of ``set_name`` (repairs are left out)."""
    commits = goldset.load_gold(goldset.SETS[set_name] / "commits.tsv")
    root = recordings / set_name
    rec = Recording.open(root, set_name, PROMPT_VERSION, commits)
    rules = RuleAnalyser()
    gits = {}
    try:
        for entry in sorted(rec.entries.values(), key=lambda e: (e.repo, e.sha, e.depth)):
            if entry.answer is None or is_repair(entry.request):
                continue
            model = FullAnswer if entry.depth == "full" else ShortAnswer
            try:
                answer = parse_answer(entry.answer, model)
            except ValueError:
                continue  # an answer that does not parse has no claims to check
            if entry.repo not in gits:
                gits[entry.repo] = goldset.open_mirror(mirrors, entry.repo)
            git = gits[entry.repo]
            [item] = goldset.read_mirror(git, entry.repo, [entry.sha])
            extractor = goldset.extractor_for(
                entry.repo, lambda oid, g=git: g.read_blob(oid, MAX_BLOB_BYTES)
            )
            facts = extractor.extract(item.commit, item.files)
            text, cut = git.patch(item.commit)
            patch = CommitPatch(tuple(split_patch(text, item.files)), cut)
            job = LlmJob(item.commit, facts, rules.analyse(item.commit, facts), patch, entry.repo)
            ev = evidence(job)
            _, flagged = check(answer, ev, "en")
            actions = {(u.field, u.claim): u.action for u in flagged}
            for c in audit(answer, ev):
                yield Audited(
                    set_name,
                    entry.repo,
                    entry.sha,
                    item.commit.title,
                    c.field,
                    c.text,
                    c.claim,
                    c.kind,
                    "kept" if c.supported else actions.get((c.field, c.claim), "marked"),
                    ev.text[:EVIDENCE_CHARS],
                )
    finally:
        for git in gits.values():
            git.close()


def write_sample(claims: list[Audited], n: int, out: Path, seed: int) -> None:
    """``n`` flagged and ``n`` kept claims, one Markdown file each, plus an empty label sheet."""
    rng = random.Random(seed)
    flagged = [c for c in claims if c.action != "kept"]
    kept = [c for c in claims if c.action == "kept"]
    picked = rng.sample(flagged, min(n, len(flagged))) + rng.sample(kept, min(n, len(kept)))
    rng.shuffle(picked)
    out.mkdir(parents=True, exist_ok=True)
    sheet = []
    for i, c in enumerate(picked):
        (out / f"claim{i:03d}.md").write_text(
            f"# Claim {i:03d}\n\nrepository: {c.repo}\ncommit: {c.sha}\ntitle: {c.title}\n\n"
            f"Field `{c.field}` of a model's analysis of this commit says:\n\n> {c.text}\n\n"
            f"The claim to judge is the token: `{c.claim}` (a {c.kind}).\n\n"
            "Is it true of this commit, i.e. does the commit's message or diff below show it "
            "(the same thing, possibly written differently)? Answer true, false or unclear.\n\n"
            f"## The commit's message and diff\n\n```\n{_excerpt(c.evidence, c.claim)}\n```\n",
            encoding="utf-8",
        )
        sheet.append({**{k: getattr(c, k) for k in COLUMNS[:6]}, "label": "", "note": f"{i:03d}"})
    with (out / "labels.tsv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(sheet)
    counts = Counter(c.action for c in claims)
    (out / "population.json").write_text(json.dumps(dict(counts)), encoding="utf-8")
    print(f"{len(claims)} claims: {dict(counts)}; wrote {len(picked)} to {out}")


def merge(sample: Path, labels: Path) -> None:
    """The sample's sheet with the labeller's answers, written to ``labels`` (+ population)."""
    answers = {}
    for line in (sample / "answers.txt").read_text("utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[1].strip() in ("true", "false", "unclear"):
            answers[parts[0].strip()] = (
                parts[1].strip(),
                parts[2].strip() if len(parts) > 2 else "",
            )
    with (sample / "labels.tsv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    for row in rows:
        row["label"], why = answers.get(row["note"], ("", ""))
        row["note"] = why
    with labels.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    population = (sample / "population.json").read_text("utf-8")
    labels.with_suffix(".population.json").write_text(population, encoding="utf-8")
    print(f"{sum(1 for r in rows if r['label'])} of {len(rows)} labelled -> {labels}")


def _excerpt(evidence: str, claim: str, head: int = 4000, around: int = 8000) -> str:
    """The message and the diff's start, and the part around the claim when it occurs later.

    A labeller needs the commit's own account and the lines the claim is
    about, not a whole large diff.
    """
    if len(evidence) <= head + 2 * around:
        return evidence
    at = evidence.find(claim.strip("`'\"()"))
    if at < 0 or at < head + around:
        return evidence[: head + 2 * around] + "\n[… rest of the diff not shown …]"
    return (
        evidence[:head]
        + "\n[… part of the diff not shown …]\n"
        + evidence[at - around : at + around]
        + "\n[… rest of the diff not shown …]"
    )


def recheck(
    rows: list[dict[str, str]], mirrors: Path, recordings: Path
) -> tuple[list[dict[str, str]], dict[str, int]]:
    """The labelled rows with the action today's check takes, and today's population.

    The labels say whether a claim is true; what the check does to it is
    recomputed, so a change to the check is measured on the same labels.
    """
    sets = sorted({r["set"] for r in rows})
    now = {
        (c.set, c.sha, c.field, c.claim): c.action
        for s in sets
        for c in claims_of(s, mirrors, recordings)
    }
    population = Counter(now.values())
    out = [
        {**r, "action": now.get((r["set"], r["sha"], r["field"], r["claim"]), "gone")} for r in rows
    ]
    return out, dict(population)


def score(labels: Path, current: tuple[Path, Path] | None = None) -> str:
    """The check's precision and estimated recall from the labelled sample.

    ``current`` (mirrors, recordings) re-runs today's check over the same
    claims instead of reading the actions recorded when they were sampled.
    """
    with labels.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    population = json.loads(labels.with_suffix(".population.json").read_text("utf-8"))
    caught = ""
    if current is not None:
        rows, population = recheck(rows, *current)
        false = [r for r in rows if r["label"] == "false"]
        flagged_now = sum(r["action"] in ("marked", "removed") for r in false)
        caught = f"labelled-false claims still flagged: {flagged_now} of {len(false)}"
        rows = [r for r in rows if r["action"] != "gone"]
    judged = [r for r in rows if r["label"] in ("true", "false")]
    flagged = [r for r in judged if r["action"] != "kept"]
    removed = [r for r in judged if r["action"] == "removed"]
    kept = [r for r in judged if r["action"] == "kept"]

    def false_share(group: list[dict[str, str]]) -> float:
        return sum(r["label"] == "false" for r in group) / len(group) if group else 0.0

    n_flagged = sum(v for k, v in population.items() if k != "kept")
    false_flagged = false_share(flagged) * n_flagged
    false_kept = false_share(kept) * population.get("kept", 0)
    found = false_flagged + false_kept
    lines = [
        f"population: {population} (claims the check extracted from the recorded answers)",
        f"labelled: {len(judged)} of {len(rows)} sampled ({len(rows) - len(judged)} unclear)",
        f"precision (flagged claims that are false): {false_share(flagged):.2f}"
        f"  [{sum(r['label'] == 'false' for r in flagged)}/{len(flagged)}]",
        f"precision of removals: {false_share(removed):.2f}"
        f"  [{sum(r['label'] == 'false' for r in removed)}/{len(removed)}]",
        f"false claims let through (sample): {false_share(kept):.2f}"
        f"  [{sum(r['label'] == 'false' for r in kept)}/{len(kept)}]",
        f"recall (estimated, false claims flagged): {false_flagged / found:.2f}"
        if found
        else "recall: no false claim found",
    ]
    if caught:
        lines.append(caught)
    wrong = Counter(r["kind"] for r in flagged if r["label"] == "true")
    if wrong:
        lines.append(f"true claims flagged, by kind: {dict(wrong)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("sample", "merge", "score"))
    parser.add_argument("--set", action="append", choices=tuple(goldset.SETS), default=[])
    parser.add_argument("--mirrors", type=Path, default=goldset.DEFAULT_MIRRORS)
    parser.add_argument("--out", type=Path, help="sample/merge: the folder of claim files")
    parser.add_argument("--n", type=int, default=60, help="sample: flagged and kept claims each")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--recheck", action="store_true", help="score: re-run today's check")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--recordings", type=Path, default=LABELS.parent, help="bench/llm")
    args = parser.parse_args(argv)
    if args.command == "score":
        print(score(args.labels, (args.mirrors, args.recordings) if args.recheck else None))
        return 0
    if args.command == "merge":
        if args.out is None:
            parser.error("merge needs --out (the sample's folder)")
        merge(args.out, args.labels)
        return 0
    if not args.set or args.out is None:
        parser.error("sample needs --set and --out")
    claims = [c for s in args.set for c in claims_of(s, args.mirrors, args.recordings)]
    write_sample(claims, args.n, args.out, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
