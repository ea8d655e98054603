"""Find write-up sentences that say nothing about their commit.

A sentence that appears under more than a quarter of a day's commits would be
true of almost any commit: it is filler, and a reader learns to skip the
section it sits in. This runs facts and rules over a labelled set's commits
(from the committed input cache, so CI can run it), renders every write-up
field in both languages, splits it into sentences, and lists each sentence
that repeats under more than ``--share`` of the commits of one repository-day
(days with at least ``--min-day`` commits) and under three commits or more:
two commits of a day that change the same test file may well say so both.

Usage::

    .venv/bin/python -m bench.writeup_repeats --set holdout5
    .venv/bin/python -m bench.writeup_repeats --set gold --lang en --share 0.25

Exit status is 1 when a repeated sentence is found, so the test suite can
hold the line on the committed sets.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from bench import goldset
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.i18n import localise
from repoherald.models import Analysis, Message

_SPLIT = re.compile(r"(?<=[;。；])\s*|(?<=\.)\s+")


def sentences(lang: str, analysis: Analysis) -> Iterator[str]:
    """Every sentence of the write-up's prose fields.

    Reasons and risk names are labels, and impact lines are a table of
    per-area counts: two commits that each change one line of the same
    docs folder rightly show the same row.
    """
    messages: list[Message] = [analysis.summary, *analysis.insights.values()]
    for risk in analysis.risks:
        messages.extend((risk.detail, risk.mitigation))
    messages.extend(analysis.recommendations)
    for message in messages:
        for part in _SPLIT.split(localise(lang, message)):
            text = part.strip(" .;。；")
            if text:
                yield text


def day_key(repo: str, committed: int, offset_minutes: int) -> tuple[str, str]:
    """The repository and the calendar day of the commit in its own committer time zone."""
    tz = timezone(timedelta(minutes=offset_minutes))
    return repo, datetime.fromtimestamp(committed, tz).date().isoformat()


def repeats(
    set_name: str, lang: str, share: float, min_day: int
) -> list[tuple[str, str, str, int, int]]:
    """``(repo, day, sentence, commits with it, commits that day)`` for each filler sentence."""
    inputs, blobs = goldset.load_cache(goldset.SETS[set_name] / "inputs.jsonl.xz")
    rules = RuleAnalyser()
    extractors = {}
    per_day: dict[tuple[str, str], list[set[str]]] = defaultdict(list)
    for item in inputs:
        if item.repo not in extractors:
            extractors[item.repo] = goldset.extractor_for(item.repo, lambda oid: blobs.get(oid))
        facts = extractors[item.repo].extract(item.commit, item.files)
        analysis = rules.analyse(item.commit, facts)
        key = day_key(item.repo, item.commit.commit_time, item.commit.commit_offset)
        per_day[key].append(set(sentences(lang, analysis)))
    found = []
    for (repo, day), commits in sorted(per_day.items()):
        if len(commits) < min_day:
            continue
        counts = Counter(s for commit in commits for s in commit)
        for text, n in counts.most_common():
            if n >= 3 and n / len(commits) > share:
                found.append((repo, day, text, n, len(commits)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="gold", choices=sorted(goldset.SETS))
    parser.add_argument("--lang", default=None, choices=["zh", "en"], help="default: both")
    parser.add_argument("--share", type=float, default=0.25)
    parser.add_argument("--min-day", type=int, default=4)
    args = parser.parse_args(argv)
    total = 0
    for lang in [args.lang] if args.lang else ["zh", "en"]:
        rows = repeats(args.set, lang, args.share, args.min_day)
        total += len(rows)
        for repo, day, text, n, of in rows:
            print(f"{lang} {repo} {day} {n}/{of}: {text}")
    print(f"{total} sentences repeated under more than {args.share:.0%} of a day's commits")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
