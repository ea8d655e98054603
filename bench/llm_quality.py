"""The LLM path, measured: a labelled set run through the real pipeline with a model in the loop.

Each repository of a set is reported by :func:`repoherald.pipeline.run` on the
UTC days of its labelled commits (``committed`` is the committer date; the
sets' days are UTC days, see ``bench/gold/LABELLING.md``), from its bare
mirror, with the LLM configured to a chat-completions server on 127.0.0.1
(:class:`tests.llm_server.FakeLLM`). That server answers from a recording
(:mod:`bench.llm_recording`): a request it has an answer for gets it, any
other request about a labelled commit is written to ``pending/`` for a model
to answer and gets a 503, so that commit keeps its rule analysis. Commits of
those days that carry no label get a 503 too and are not scored.

Usage::

    .venv/bin/python -m bench.llm_quality record --set holdout5     # write pending/ prompts
    .venv/bin/python -m bench.llm_quality pack --set holdout5       # answers/ -> recording.jsonl.xz
    .venv/bin/python -m bench.llm_quality score --set holdout5 --price-in 0.27 --price-out 1.10
    .venv/bin/python -m bench.llm_quality record --set holdout5 \\
        --endpoint https://api.deepseek.com/v1 --model deepseek-chat --api-key-env DEEPSEEK_API_KEY

``score`` prints what :mod:`bench.importance` prints for the LLM path's final
verdicts (read from the run's JSON twins) and for the rules alone, then the
requests, repairs, fallbacks, tokens, cost, the system prompt's constant
prefix and the fact-check's counts. Exit status is 0 whatever the scores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bench import goldset
from bench.goldset import LABELS, GoldCommit
from bench.importance import Verdict, report
from bench.llm_recording import Forward, Recording, is_repair, pack, request_id
from bench.scores import accuracy, class_scores, macro_f1
from repoherald.config import build_settings
from repoherald.config.days import DaySelection
from repoherald.llm.analyser import PROMPT_VERSION
from repoherald.pipeline import run
from tests.llm_server import FakeLLM, message_text

BENCH_MODEL = "bench-recorded"


@dataclass(frozen=True)
class RunOutcome:
    """What one pass over a set produced: each labelled commit's analysis from the twins."""

    analyses: dict[str, dict[str, Any]]
    requests: list[dict[str, Any]]
    seconds: float
    failures: list[str]


def report_days(commits: list[GoldCommit]) -> dict[str, list[date]]:
    """The UTC days holding the labelled commits, per repository."""
    out: dict[str, set[date]] = {}
    for c in commits:
        day = datetime.fromisoformat(c.committed).astimezone(ZoneInfo("UTC")).date()
        out.setdefault(c.repo, set()).add(day)
    return {repo: sorted(days) for repo, days in out.items()}


def run_set(
    commits: list[GoldCommit],
    sources: dict[str, Path],
    work: Path,
    *,
    base_url: str | None,
    lang: str = "en",
    concurrency: int = 2,
) -> RunOutcome:
    """Report every repository on its labelled days; ``base_url`` None runs the rules alone."""
    labelled = {c.sha for c in commits}
    analyses: dict[str, dict[str, Any]] = {}
    failures: list[str] = []
    started = time.perf_counter()
    for repo, days in report_days(commits).items():
        out = work / repo.replace("/", "+")
        settings = build_settings(
            repos=(str(sources[repo]),), name=repo, tz="UTC", lang=lang, out=str(out / "out"),
            home=str(out / "home"), cwd=work, llm_base_url=base_url, llm_model=BENCH_MODEL,
            no_llm=base_url is None, day=days[0].isoformat(),
        )  # fmt: skip
        settings = replace(settings, selection=DaySelection(days=tuple(days), today=None))
        if settings.llm is not None:
            # One answer per request: a 503 for an unrecorded request must not be retried.
            llm = settings.llm.model_copy(update={"max_retries": 0, "concurrency": concurrency})
            settings = replace(settings, llm=llm)
        result = run(settings, use_cache=False)
        failures.extend(result.failures)
        for path in result.written:
            if path.suffix != ".json":
                continue
            twin = json.loads(path.read_text("utf-8"))
            for section in twin["repos"]:
                for c in section["commits"]:
                    if c["sha"] in labelled:
                        analyses[c["sha"]] = c["analysis"]
    return RunOutcome(analyses, [], time.perf_counter() - started, failures)


def verdict_of(analysis: dict[str, Any]) -> Verdict:
    """The final verdict as :mod:`bench.importance` scores it."""
    reasons = tuple(str(r) for r in analysis.get("reasons", ()))
    return Verdict(analysis["change_type"], analysis["importance"], reasons)


def replay(
    rec: Recording, commits: list[GoldCommit], sources: dict[str, Path], work: Path, lang: str
) -> RunOutcome:
    """The LLM path over the set, answered from ``rec``; the requests the server saw."""
    with FakeLLM(responder=rec.responder()) as server:
        outcome = run_set(commits, sources, work / "llm", base_url=server.base_url, lang=lang)
        bodies = [b for b in server.bodies if isinstance(b, dict)]
    return replace(outcome, requests=bodies)


def common_prefix(texts: list[str]) -> str:
    """The longest prefix every text starts with."""
    if not texts:
        return ""
    shortest = min(texts, key=len)
    for i, char in enumerate(shortest):
        if any(text[i] != char for text in texts):
            return shortest[:i]
    return shortest


def usage_line(
    rec: Recording, outcome: RunOutcome, commits: list[GoldCommit], prices: tuple[float, float]
) -> list[str]:
    """Requests, repairs, fallbacks, tokens, cost, prefix share and fact-check counts."""
    labelled = {c.sha: c for c in commits}
    mine = [b for b in outcome.requests if rec.requested.get(_rid(b)) is not None]
    repairs = [b for b in mine if is_repair(b)]
    repaired_commits = {rec.requested[_rid(b)].sha for b in repairs}
    llm = {sha: a for sha, a in outcome.analyses.items() if sha in labelled}
    fallbacks = [sha for sha, a in llm.items() if a.get("llm_error")]
    answered = [sha for sha, a in llm.items() if str(a.get("analyser", "")).startswith("llm/")]
    n = max(1, len(llm))
    per = max(1, len(answered))
    prompt_tokens = sum(int(a.get("usage", [0, 0])[0]) for a in llm.values())
    completion_tokens = sum(int(a.get("usage", [0, 0])[1]) for a in llm.values())
    recorded_usage = any(e.usage for e in rec.requested.values())
    how = "as the endpoint reported them" if recorded_usage else "estimated as characters / 4"
    days = sum(len(d) for d in report_days(commits).values())
    cost = (prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1e6
    systems = [message_text(b["messages"][0]) for b in mine if b.get("messages")]
    total_chars = sum(len(message_text(m)) for b in mine for m in b["messages"])
    prefix = common_prefix(systems)
    share = len(prefix) * len(systems) / total_chars if total_chars else 0.0
    actions = Counter()
    touched = set()
    for sha, a in llm.items():
        for item in a.get("unverified", ()):
            action = "removed" if str(item).endswith("(removed)") else "marked"
            actions[action] += 1
            touched.add(sha)
    lines = [
        f"LLM requests {len(mine)} for {len(llm)} labelled commits "
        f"({len(outcome.requests) - len(mine)} about unlabelled commits, not scored)",
        f"repair requests {len(repairs)}: {len(repaired_commits)} commits "
        f"({len(repaired_commits) / n:.1%} of commits; target ≤ 5%)",
        f"model verdicts {len(answered)}, fallbacks to the rules {len(fallbacks)}",
        f"tokens per commit with a model verdict: prompt {prompt_tokens / per:.0f}, completion "
        f"{completion_tokens / per:.0f} ({how}; repairs and escalations included)",
        f"cost at {prices[0]}/{prices[1]} per million tokens in/out: {cost:.4f} for {days} "
        f"repository-days, {cost / max(1, days):.4f} per day",
        f"constant system-prompt prefix: {len(prefix)} characters, {share:.1%} of prompt "
        "characters",
        f"fact-check: {actions['marked']} claims marked, {actions['removed']} removed, "
        f"in {len(touched)} of {len(llm)} commits",
    ]
    return lines


def _rid(body: dict[str, Any]) -> str:
    return request_id(body)


def sources_for(mirrors: Path, commits: list[GoldCommit]) -> dict[str, Path]:
    """Each repository's bare mirror; a usage error naming the first one missing."""
    out = {}
    for repo in dict.fromkeys(c.repo for c in commits):
        path = goldset.mirror_dir(mirrors, repo)
        if not (path / "objects").is_dir():
            raise SystemExit(f"no mirror of {repo} at {path}: fetch it, or pass --mirrors DIR")
        out[repo] = path
    return out


def print_pending(rec: Recording) -> None:
    """How many prompts wait for an answer, and how big they are."""
    paths = [rec.root / "pending" / f"{rid}.txt" for rid in rec.pending]
    size = sum(p.stat().st_size for p in paths if p.is_file())
    print(f"pending prompts: {len(paths)} ({size / 1e3:.0f} kB) in {rec.root / 'pending'}")
    for rid in rec.pending:
        e = rec.requested[rid]
        print(f"  {rid[:16]} {e.repo} {e.sha[:10]} {e.depth}")


def print_versions(rec: Recording) -> None:
    """Name recordings made with another prompt version, and stale answers."""
    for version, count in sorted(rec.older_versions().items()):
        print(
            f"recorded with prompt version {version}, the code's is {PROMPT_VERSION}: "
            f"{count} answers (used only where the request is byte-identical)"
        )


def print_stale(rec: Recording) -> None:
    """Answers recorded for requests this run no longer sends (after the run only)."""
    stale = rec.stale()
    if stale:
        print(f"stale answers (their request was not sent this time): {len(stale)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("record", "score", "pack"))
    parser.add_argument("--set", choices=tuple(goldset.SETS), required=True)
    parser.add_argument("--dir", type=Path, help="default: bench/llm/<set>")
    parser.add_argument("--mirrors", type=Path, default=goldset.DEFAULT_MIRRORS)
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    parser.add_argument("--price-in", type=float, default=0.27, help="per million prompt tokens")
    parser.add_argument("--price-out", type=float, default=1.10, help="per million completions")
    parser.add_argument("--endpoint", help="a real OpenAI-compatible base URL to ask")
    parser.add_argument("--model", help="the endpoint's model name")
    parser.add_argument("--api-key-env", help="the variable holding the endpoint's key")
    parser.add_argument("--errors", action="store_true", help="also list one-tier errors")
    args = parser.parse_args(argv)
    root = args.dir or Path(__file__).parent / "llm" / args.set
    commits = goldset.load_gold(goldset.SETS[args.set] / "commits.tsv")
    forward = None
    if args.endpoint:
        if not args.model:
            raise SystemExit("--endpoint needs --model NAME")
        key = os.environ.get(args.api_key_env) if args.api_key_env else None
        if args.api_key_env and not key:
            raise SystemExit(f"{args.api_key_env} is not set: export the endpoint's key in it")
        forward = Forward(args.endpoint, args.model, key)
    rec = Recording.open(root, args.set, PROMPT_VERSION, commits, forward)
    if args.command == "pack":
        path, n = pack(rec)
        print(f"wrote {path}: {n} answered requests ({path.stat().st_size / 1e3:.0f} kB)")
        return 0
    sources = sources_for(args.mirrors, commits)
    print_versions(rec)
    with tempfile.TemporaryDirectory(prefix="llm-quality-") as tmp:
        outcome = replay(rec, commits, sources, Path(tmp), args.lang)
        print(f"{args.command}: {len(outcome.analyses)} labelled commits reported in "
              f"{outcome.seconds:.0f} s, {len(outcome.requests)} requests")  # fmt: skip
        if outcome.failures:
            print(f"run failures: {len(outcome.failures)} (unanswered requests are among them):")
            for failure in outcome.failures[:3]:
                print(f"  {failure}")
        if args.command == "score":
            rules = run_set(commits, sources, Path(tmp) / "rules", base_url=None, lang=args.lang)
            _print_scores(rec, commits, outcome, rules, (args.price_in, args.price_out), args)
    print_stale(rec)
    print_pending(rec)
    return 0


def _print_scores(
    rec: Recording,
    commits: list[GoldCommit],
    llm: RunOutcome,
    rules: RunOutcome,
    prices: tuple[float, float],
    args: argparse.Namespace,
) -> None:
    scored = [c for c in commits if c.sha in llm.analyses and c.sha in rules.analyses]
    missing = len(commits) - len(scored)
    if missing:
        print(f"not in the reports, not scored: {missing} labelled commits")
    print("== LLM path (final verdicts) ==")
    print(report(scored, {c.sha: verdict_of(llm.analyses[c.sha]) for c in scored}, args.errors))
    print("== rules only ==")
    print(report(scored, {c.sha: verdict_of(rules.analyses[c.sha]) for c in scored}, args.errors))
    print("== side by side ==          LLM path   rules only")
    of_llm = _summary(scored, {c.sha: verdict_of(llm.analyses[c.sha]) for c in scored})
    of_rules = _summary(scored, {c.sha: verdict_of(rules.analyses[c.sha]) for c in scored})
    for name, value in of_llm.items():
        print(f"  {name:<24}{value:>9.3f}{of_rules[name]:>13.3f}")
    print("== the model's requests ==")
    for line in usage_line(rec, llm, scored, prices):
        print(line)


def _summary(scored: list[GoldCommit], got: dict[str, Verdict]) -> dict[str, float]:
    """The headline figures of one path, for the side-by-side table."""
    gold = [c.importance for c in scored]
    predicted = [got[c.sha].importance for c in scored]
    scores = class_scores(gold, predicted, LABELS)
    types = accuracy([c.type for c in scored], [got[c.sha].type for c in scored])
    return {
        "accuracy": accuracy(gold, predicted),
        "macro-F1": macro_f1(scores),
        "🔴 recall": scores[0].recall,
        "🔴 precision": scores[0].precision,
        "change type accuracy": types,
    }


if __name__ == "__main__":
    sys.exit(main())
