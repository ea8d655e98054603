"""What becomes of the model's answer: parsed, bounded by the facts, made an Analysis.

The facts cap the verdict, alarm words the commit message does not use are
marked, and a failure leaves the rule analysis with a note saying why.
"""

from __future__ import annotations

import re
from dataclasses import replace

from pydantic import ValidationError

from repoherald.analysis.facts import hostpins
from repoherald.analysis.verdict import reach
from repoherald.analysis.verdict.signals import LOW_KINDS
from repoherald.i18n import importance_label, t, type_label
from repoherald.llm import factcheck
from repoherald.llm.job import LlmJob
from repoherald.llm.schema import FullAnswer, ShortAnswer
from repoherald.models import Analysis, Importance, Message, Risk, Text
from repoherald.redact import redact


def to_analysis(
    job: LlmJob,
    answer: ShortAnswer | FullAnswer,
    unsupported: list[factcheck.Unsupported],
    unseen: tuple[str, ...],
    usage: list[int],
    *,
    lang: str,
    analyser: str,
) -> Analysis:
    """The model's checked answer as the commit's analysis, noting a verdict it overturned."""
    rules = job.rules
    changed = (answer.change_type, answer.importance) != (rules.change_type, rules.importance)
    verdict = ""
    if changed:
        verdict = t(
            lang,
            "llm.verdict",
            type=type_label(lang, rules.change_type),
            importance=importance_label(lang, rules.importance),
        )
    reasons = (*rules.reasons, t(lang, "llm.model_reason", reason=answer.judgement_reason))
    if isinstance(answer, FullAnswer):
        impact: tuple[Message, ...] = tuple(answer.impact)
        insights = answer.insights.model_dump()
        risks = tuple(Risk(r.risk, r.detail, r.mitigation) for r in answer.risks)
        recommendations: tuple[Message, ...] = tuple(answer.recommendations)
    else:
        impact, insights, risks, recommendations = rules.impact, {}, (), rules.recommendations
    return Analysis(
        analyser=analyser,
        change_type=answer.change_type,
        importance=answer.importance,
        reasons=reasons,
        summary=answer.summary,
        impact=impact,
        insights=insights,
        risks=risks,
        recommendations=recommendations,
        description=rules.description,
        usage=(usage[0], usage[1]),
        unverified=tuple(f"{u.field}: {u.claim} ({u.action})" for u in unsupported),
        unseen_files=unseen,
        rule_verdict=verdict,
    )


_ALARM = re.compile(
    r"\b(hack(ed|ers?)?|compromised?|backdoor(ed)?|malware|malicious|breach(ed)?|"
    r"exploit(ed)?|trojan)\b|被黑|入侵|后门|恶意|攻破|泄露",
    re.I,
)


def bound_verdict(answer: ShortAnswer | FullAnswer, job: LlmJob) -> ShortAnswer | FullAnswer:
    """The facts bound what the model may claim.

    A commit that only touches docs, tests, CI or benchmarks cannot change
    what downstream code runs, whatever its text says, so the model cannot
    raise it above low or give it another type than the files show. This is
    also what a prompt injected into such a diff would try first. The other
    way round, a commit that moves the pin of the host framework (or the
    exact pin of its deep-learning framework) is high whatever the model
    makes of its title ("chore: …").
    """
    moved = job.facts.host_bumps or hostpins.framework_pins(job.facts.dependency_changes)
    if (moved and not job.facts.is_revert) or reach.host_pin(job.facts):
        # The plugin moves to another version of its host: a fact read from
        # the diff, which no wording of the message makes less than high,
        # even when the pin lives in a CI file (``vllm_lkg.version``).
        return answer.model_copy(
            update={"importance": Importance.HIGH, "change_type": job.rules.change_type}
        )
    if job.facts.only(*LOW_KINDS):
        return answer.model_copy(
            update={"importance": Importance.LOW, "change_type": job.rules.change_type}
        )
    return answer


def mark_alarms(analysis: Analysis, message: str, lang: str) -> Analysis:
    """Mark claims of a security incident that the author's message does not make.

    Words such as "hacked" or "backdoor" inside a diff are data; a report
    may only repeat such a claim when the commit's own message states it.
    """
    if _ALARM.search(message):
        return analysis
    marker = factcheck.markers(lang)[0]
    found: list[str] = []

    def mark(text: Message, where: str) -> Message:
        if isinstance(text, Text):
            return text  # a rule message, built from facts: nothing to mark

        def sub(m: re.Match[str]) -> str:
            found.append(f"{where}: {m.group(0)} (marked)")
            return m.group(0) + marker

        return _ALARM.sub(sub, text)

    marked = replace(
        analysis,
        summary=mark(analysis.summary, "summary"),
        reasons=tuple(mark(r, "judgement_reason") for r in analysis.reasons),
        impact=tuple(mark(x, f"impact[{i}]") for i, x in enumerate(analysis.impact)),
        insights={k: mark(v, f"insights.{k}") for k, v in analysis.insights.items()},
        risks=tuple(
            Risk(
                mark(r.risk, f"risks[{i}]"),
                mark(r.detail, f"risks[{i}]"),
                mark(r.mitigation, f"risks[{i}]"),
            )
            for i, r in enumerate(analysis.risks)
        ),
        recommendations=tuple(
            mark(x, f"recommendations[{i}]") for i, x in enumerate(analysis.recommendations)
        ),
    )
    if not found:
        return analysis
    return replace(marked, unverified=analysis.unverified + tuple(found))


def with_error(rules: Analysis, message: str, usage: list[int]) -> Analysis:
    """The rule analysis, marked with why the model's is missing (redacted: it may quote
    an error body that echoed the request's headers)."""
    return replace(rules, llm_error=redact(message), usage=(usage[0], usage[1]))


def evidence(job: LlmJob) -> factcheck.Evidence:
    """What the fact-check may find the answer's paths, words and numbers in."""
    paths = {f.path for f in job.facts.files} | {f.old_path for f in job.facts.files if f.old_path}
    text = f"{job.commit.message}\n{job.patch.text}"
    figures = (
        f"{job.facts.files_changed} files +{job.facts.added}/-{job.facts.deleted} "
        f"+{job.facts.added}/−{job.facts.deleted} {job.facts.added} {job.facts.deleted}"
    )
    deps = " ".join(f"{d.old or ''} {d.new or ''}" for d in job.facts.dependency_changes)
    return factcheck.Evidence(
        paths=frozenset(paths),
        text=text,
        numbers_text=f"{text}\n{figures}\n{deps}\n{job.facts.pr_number or ''}",
    )


def strip_fence(content: str) -> str:
    """Accept an answer wrapped in one Markdown code fence (some servers add it)."""
    text = content.strip()
    m = re.fullmatch(r"```(?:json)?\s*\n(.*)\n```", text, re.S)
    return m.group(1) if m else text


def first_error(exc: ValidationError) -> str:
    """The first validation problem, located, short enough for a repair turn or a note."""
    errors = exc.errors()
    if not errors:
        return str(exc)[:200]
    err = errors[0]
    where = ".".join(str(p) for p in err["loc"]) or "(document)"
    return f"{where}: {err['msg']}"[:300]
