"""LLM analysis: schema-bound, token-budgeted, concurrent, fact-checked, never truncated.

The rule analysis triages first: low-importance commits get a short request,
medium and high the full one. Each answer must parse as JSON, validate
against :mod:`llm_schema`, and survive the fact-check before it replaces the
rule analysis. Anything else (a truncated answer, invalid JSON after one
repair, an endpoint that keeps failing, an exhausted token budget) leaves the
commit with its rule analysis and a visible note saying why. An endpoint that
cannot be reached at all opens the run's circuit breaker: the commits left
are marked "LLM unavailable" at once, and the run says so in one line.

Bump ``PROMPT_VERSION`` whenever the prompts or the schema change: cached
analyses are keyed by (commit SHA, model, prompt version, language). The
model writes prose in the report's language, so the rule analysis it starts
from is localised into that language first.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import httpx
import jinja2
from pydantic import ValidationError

from repoherald.analysis.signals import LOW_KINDS
from repoherald.breaker import CircuitBreaker
from repoherald.emails import hide_emails
from repoherald.i18n import importance_label, localise_analysis, t, type_label
from repoherald.llm import factcheck
from repoherald.llm.client import (
    ChatClient,
    ChatReply,
    LlmError,
    LlmUnavailable,
    SchemaRejected,
    dumps_schema,
)
from repoherald.llm.diffpack import FilePatch, estimate_tokens, pack_diff, split_patch
from repoherald.llm.schema import FullAnswer, ShortAnswer, response_schema
from repoherald.llm.settings import LlmSettings
from repoherald.models import (
    Analysis,
    Commit,
    Facts,
    Importance,
    Message,
    PullRequest,
    Risk,
    Text,
)
from repoherald.redact import redact, strip_userinfo

PROMPT_VERSION = "2"
BREAKER_THRESHOLD = 3
"""Consecutive connection failures after which the endpoint counts as down for the run."""
SHORT_OUTPUT_TOKENS = 768
PROMPT_MARGIN = 512
MAX_LENGTH_RETRIES = 2

_TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|cc|"
    r"change-id)\s*:.*$",
    re.I | re.M,
)


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("repoherald", "llm/prompts"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )


def clean_message(message: str) -> str:
    """The commit message as the model sees it: trailers and e-mail addresses removed."""
    text = _TRAILER.sub("", message)
    text = hide_emails(text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


@dataclass(frozen=True)
class LlmJob:
    """One commit to analyse, with everything the prompt and the fact-check need."""

    commit: Commit
    facts: Facts
    rules: Analysis
    patch: str
    patch_cut: bool
    repo: str


@dataclass
class Meter:
    """Tokens spent in this run, and the optional budget that stops new requests."""

    budget: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reserved: int = 0
    requests: int = 0
    """HTTP requests sent, retries included; requests a dead endpoint was spared do not count."""

    @property
    def used(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def reserve(self, tokens: int) -> bool:
        if self.budget is not None and self.used + self.reserved + tokens > self.budget:
            return False
        self.reserved += tokens
        return True

    def settle(self, reserved: int, prompt: int, completion: int) -> None:
        self.reserved -= reserved
        self.prompt_tokens += prompt
        self.completion_tokens += completion


class BudgetExhausted(LlmError):
    """The run's token budget does not allow another request."""


@dataclass
class _Attempt:
    depth: str
    max_tokens: int
    diff_budget: int
    usage: list[int] = field(default_factory=lambda: [0, 0])


def endpoint_breaker(cfg: LlmSettings) -> CircuitBreaker:
    """A circuit breaker for the endpoint ``cfg`` names (closed; the URL without credentials)."""
    return CircuitBreaker(BREAKER_THRESHOLD, f"LLM endpoint {strip_userinfo(cfg.base_url)}")


@dataclass(frozen=True)
class LlmResult:
    """One job's outcome: the analysis to show, and whether the endpoint was unreachable.

    Unreachable commits are not reported one by one: the run says it once
    (:meth:`LlmAnalyser.unavailable_line`).
    """

    analysis: Analysis
    unavailable: bool = False


class LlmAnalyser:
    """Analyses commits through one OpenAI-compatible endpoint.

    One analyser serves a whole run: its meter, its counters and its circuit
    breaker span every day of the run, so a dead endpoint costs one day's
    few attempts, not every day's. ``breaker`` is given when the breaker must
    outlive the analyser (``run`` over several repositories shares one, see
    :func:`endpoint_breaker`); otherwise the analyser makes its own.
    """

    def __init__(
        self, cfg: LlmSettings, lang: str, *, breaker: CircuitBreaker | None = None
    ) -> None:
        self.cfg = cfg
        self.lang = lang
        self.name = f"llm/{cfg.model}/{PROMPT_VERSION}/{lang}"
        self.meter = Meter(budget=cfg.token_budget)
        self.breaker = breaker if breaker is not None else endpoint_breaker(cfg)
        self.fallbacks = 0
        """Commits that kept their rule analysis because the model's failed, for any reason."""
        self.unavailable = 0
        """Of those, the commits whose endpoint could not be reached."""
        self._unreachable = ""
        """Why the endpoint could not be reached, when the breaker did not open."""

    # -- public API -----------------------------------------------------

    def analyse_all(
        self, jobs: Sequence[LlmJob], on_done: Callable[[int, int], None] | None = None
    ) -> list[LlmResult]:
        """Analyse ``jobs`` concurrently; one result per job, in order, never an exception.

        A result either is the model's (fact-checked) analysis, or the job's
        rule analysis with ``llm_error`` saying why the model's is missing.
        """
        if not jobs:
            return []
        jobs = [replace(j, rules=localise_analysis(self.lang, j.rules)) for j in jobs]
        results = asyncio.run(self._analyse_all(jobs, on_done))
        self.fallbacks += sum(1 for r in results if r.analysis.llm_error)
        self.unavailable += sum(1 for r in results if r.unavailable)
        return results

    def unavailable_line(self) -> str:
        """The one line that tells the user the endpoint was down, or "" if it was not."""
        if not self.unavailable:
            return ""
        if self.breaker.is_open:
            why = self.breaker.message
        else:
            why = f"{self.breaker.what} could not be reached: {self._unreachable}"
        return redact(
            f"{why}; {self.unavailable} commits keep their rules analysis:"
            " check that the server is running and that the base URL is right"
        )

    async def _analyse_all(
        self, jobs: Sequence[LlmJob], on_done: Callable[[int, int], None] | None
    ) -> list[LlmResult]:
        client = ChatClient(
            self.cfg.base_url,
            self.cfg.model,
            api_key=self.cfg.api_key(),
            api_key_env=self.cfg.api_key_env,
            timeout=self.cfg.timeout,
            max_retries=self.cfg.max_retries,
            concurrency=self.cfg.concurrency,
            temperature=self.cfg.temperature,
            breaker=self.breaker,
        )
        gate = asyncio.Semaphore(self.cfg.concurrency)
        done = 0

        async def one(job: LlmJob) -> LlmResult:
            nonlocal done
            async with gate:
                try:
                    result = await self._analyse(client, job)
                except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
                    # A bug or a surprise on one commit must not cost the
                    # others: this one keeps its rule analysis, marked.
                    error = LlmError(f"{type(exc).__name__}: {exc}")
                    result = LlmResult(_with_error(job.rules, self._fail_text(error), [0, 0]))
            done += 1
            if on_done is not None:
                on_done(done, len(jobs))
            return result

        try:
            return list(await asyncio.gather(*(one(j) for j in jobs)))
        finally:
            self.meter.requests += client.sent
            await client.aclose()

    # -- one commit -------------------------------------------------------

    async def _analyse(self, client: ChatClient, job: LlmJob) -> LlmResult:
        attempt = _Attempt(
            depth="short" if job.rules.importance is Importance.LOW else "full",
            max_tokens=self._output_tokens(job.rules.importance),
            diff_budget=0,
        )
        try:
            if self.breaker.is_open:
                raise LlmUnavailable(self.breaker.message)
            answer, unseen = await self._ask(client, job, attempt)
        except LlmUnavailable as exc:
            self._unreachable = str(exc)
            marked = _with_error(job.rules, t(self.lang, "llm.unavailable"), attempt.usage)
            return LlmResult(marked, unavailable=True)
        except LlmError as exc:
            return LlmResult(_with_error(job.rules, self._fail_text(exc), attempt.usage))
        evidence = _evidence(job)
        checked, unsupported = factcheck.check(answer, evidence, self.lang)
        checked = _bound_verdict(checked, job)
        analysis = self._to_analysis(job, checked, unsupported, unseen, attempt.usage)
        return LlmResult(_mark_alarms(analysis, job.commit.message, self.lang))

    def _output_tokens(self, importance: Importance) -> int:
        if importance is Importance.LOW:
            return min(SHORT_OUTPUT_TOKENS, self.cfg.max_output_tokens)
        return self.cfg.max_output_tokens

    def _fail_text(self, exc: LlmError) -> str:
        return t(self.lang, "llm.failed", error=exc)

    async def _ask(
        self, client: ChatClient, job: LlmJob, at: _Attempt
    ) -> tuple[ShortAnswer | FullAnswer, tuple[str, ...]]:
        """Request, validate and, when needed, repair or re-request one answer.

        Each pass of the loop is one request. What makes it go round again:
        the endpoint refused our schema (ask again without it), the answer was
        cut at ``max_tokens`` (more room or less diff), the JSON did not
        validate (one repair turn), or a short answer rated the commit above
        🟢 (ask for the full analysis it deserves).
        """
        patches = split_patch(job.patch, job.facts.files)
        length_retries = 0
        repaired = False
        escalated = False
        repair_messages: list[dict[str, str]] = []
        while True:
            model = ShortAnswer if at.depth == "short" else FullAnswer
            schema = response_schema(model)
            messages, unseen = self._prompt(job, at, patches, schema, client)
            reply = await self._request(client, messages + repair_messages, at, schema)
            if reply is None:
                continue
            if reply.finish_reason == "length":
                length_retries += 1
                self._make_room(at, length_retries)
                repair_messages = []
                continue
            try:
                answer = model.model_validate_json(_strip_fence(reply.content))
            except ValidationError as exc:
                if repaired:
                    raise LlmError(f"invalid JSON after one repair: {_first_error(exc)}") from None
                repaired = True
                repair_messages = [
                    {"role": "assistant", "content": reply.content[:4000]},
                    {"role": "user", "content": _repair_prompt(self.lang, _first_error(exc))},
                ]
                continue
            if at.depth == "short" and answer.importance is not Importance.LOW and not escalated:
                escalated = True
                at.depth = "full"
                at.max_tokens = self.cfg.max_output_tokens
                at.diff_budget = 0
                repair_messages = []
                continue
            return answer, unseen

    def _prompt(
        self,
        job: LlmJob,
        at: _Attempt,
        patches: Sequence[FilePatch],
        schema: dict[str, Any],
        client: ChatClient,
    ) -> tuple[list[dict[str, str]], tuple[str, ...]]:
        """The messages for one request, with as much diff as the context leaves room for.

        Also returns what of the diff the model did not see, for the page.
        """
        native = client.json_schema_supported
        base = self._messages(job, at, schema, native, diff=None)
        overhead = sum(estimate_tokens(m["content"]) for m in base)
        room = self.cfg.context_tokens - at.max_tokens - overhead - PROMPT_MARGIN
        if at.diff_budget == 0 or at.diff_budget > room:
            at.diff_budget = max(0, room)
        packed = pack_diff(patches, at.diff_budget)
        unseen = tuple(f"{p} ({why})" for p, why in packed.unseen) + tuple(
            f"{p} (clipped)" for p in packed.clipped
        )
        if job.patch_cut:
            unseen += ("… (diff too large: read partially)",)
        return self._messages(job, at, schema, native, diff=packed), unseen

    async def _request(
        self,
        client: ChatClient,
        messages: list[dict[str, str]],
        at: _Attempt,
        schema: dict[str, Any],
    ) -> ChatReply | None:
        """One completion within the token budget; None when the endpoint refused the schema.

        The budget is reserved before the request and settled with what the
        endpoint reports, so concurrent commits never overspend it.
        """
        estimate = sum(estimate_tokens(m["content"]) for m in messages) + at.max_tokens
        if not self.meter.reserve(estimate):
            raise BudgetExhausted(t(self.lang, "llm.budget_exhausted"))
        try:
            reply = await client.complete(
                messages, max_tokens=at.max_tokens, schema_name="commit_analysis", schema=schema
            )
        except SchemaRejected:
            self.meter.settle(estimate, 0, 0)
            return None
        except LlmError:
            self.meter.settle(estimate, 0, 0)
            raise
        self.meter.settle(estimate, reply.prompt_tokens, reply.completion_tokens)
        at.usage[0] += reply.prompt_tokens
        at.usage[1] += reply.completion_tokens
        return reply

    def _make_room(self, at: _Attempt, retries: int) -> None:
        """After an answer cut at ``max_tokens``: double the room, else halve the diff."""
        if retries > MAX_LENGTH_RETRIES:
            raise LlmError(
                f"answer truncated (finish_reason=length) {retries} times; raise max_output_tokens"
            )
        ceiling = max(self.cfg.max_output_tokens * 2, 4096)
        if at.max_tokens * 2 <= ceiling:
            at.max_tokens *= 2
        else:
            at.diff_budget //= 2

    def _messages(
        self,
        job: LlmJob,
        at: _Attempt,
        schema: dict[str, Any],
        native_schema: bool,
        diff: Any,
    ) -> list[dict[str, str]]:
        nonce = hashlib.sha256(f"repoherald:{job.commit.sha}".encode()).hexdigest()[:16]
        env = _env()
        system = env.get_template("system.j2").render(
            lang=self.lang,
            repo=job.repo,
            nonce=nonce,
            schema_in_prompt=not native_schema,
            schema=dumps_schema(schema),
        )
        user = env.get_template("user.j2").render(
            lang=self.lang,
            nonce=nonce,
            depth=at.depth,
            title=hide_emails(job.commit.title),
            author=job.commit.author.name,
            pr=job.facts.pr_number,
            **_pr_fields(job.facts.pull_request),
            message=clean_message(job.commit.body),
            facts=job.facts,
            rules=job.rules,
            api=", ".join(f"{a.change} {a.name} ({a.path})" for a in job.facts.api_changes[:30]),
            deps=", ".join(
                f"{d.name} {d.old or '-'} -> {d.new or '-'}"
                for d in job.facts.dependency_changes[:30]
            ),
            unseen=list(diff.unseen) if diff is not None else [],
            diff=diff.text if diff is not None else "",
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _to_analysis(
        self,
        job: LlmJob,
        answer: ShortAnswer | FullAnswer,
        unsupported: list[factcheck.Unsupported],
        unseen: tuple[str, ...],
        usage: list[int],
    ) -> Analysis:
        rules = job.rules
        changed = (answer.change_type, answer.importance) != (rules.change_type, rules.importance)
        verdict = ""
        if changed:
            verdict = t(
                self.lang,
                "llm.verdict",
                type=type_label(self.lang, rules.change_type),
                importance=importance_label(self.lang, rules.importance),
            )
        reasons = (*rules.reasons, t(self.lang, "llm.model_reason", reason=answer.judgement_reason))
        if isinstance(answer, FullAnswer):
            impact: tuple[Message, ...] = tuple(answer.impact)
            insights = answer.insights.model_dump()
            risks = tuple(Risk(r.risk, r.detail, r.mitigation) for r in answer.risks)
            recommendations: tuple[Message, ...] = tuple(answer.recommendations)
        else:
            impact, insights, risks, recommendations = rules.impact, {}, (), rules.recommendations
        return Analysis(
            analyser=self.name,
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


def _bound_verdict(answer: ShortAnswer | FullAnswer, job: LlmJob) -> ShortAnswer | FullAnswer:
    """The facts cap what the model may claim.

    A commit that only touches docs, tests, CI or benchmarks cannot change
    what downstream code runs, whatever its text says, so the model cannot
    raise it above low or give it another type than the files show. This is
    also what a prompt injected into such a diff would try first.
    """
    if job.facts.only(*LOW_KINDS):
        return answer.model_copy(
            update={"importance": Importance.LOW, "change_type": job.rules.change_type}
        )
    return answer


def _mark_alarms(analysis: Analysis, message: str, lang: str) -> Analysis:
    """Mark claims of a security incident that the author's message does not make.

    Words such as "hacked" or "backdoor" inside a diff are data; a report
    may only repeat such a claim when the commit's own message states it.
    """
    if _ALARM.search(message):
        return analysis
    marker = factcheck.MARKERS["zh" if lang.startswith("zh") else "en"][0]
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


def _with_error(rules: Analysis, message: str, usage: list[int]) -> Analysis:
    """The rule analysis, marked with why the model's is missing (redacted: it may quote
    an error body that echoed the request's headers)."""
    return replace(rules, llm_error=redact(message), usage=(usage[0], usage[1]))


def _evidence(job: LlmJob) -> factcheck.Evidence:
    paths = {f.path for f in job.facts.files} | {f.old_path for f in job.facts.files if f.old_path}
    text = f"{job.commit.message}\n{job.patch}"
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


def _strip_fence(content: str) -> str:
    """Accept an answer wrapped in one Markdown code fence (some servers add it)."""
    text = content.strip()
    m = re.fullmatch(r"```(?:json)?\s*\n(.*)\n```", text, re.S)
    return m.group(1) if m else text


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)[:200]
    err = errors[0]
    where = ".".join(str(p) for p in err["loc"]) or "(document)"
    return f"{where}: {err['msg']}"[:300]


def _repair_prompt(lang: str, error: str) -> str:
    if lang == "zh":
        return f"上面的回答不是有效的 JSON 或不符合 Schema（{error}）。请只输出修正后的 JSON 对象。"
    return (
        f"The answer above is not valid JSON for the schema ({error}). "
        "Reply with the corrected JSON object only."
    )


PR_BODY_CHARS = 4000
_DELIMITER = re.compile(r"</?\s*commit-data", re.IGNORECASE)


def _pr_fields(pr: PullRequest | None) -> dict[str, str]:
    """The pull request's own words for the prompt, as data.

    A PR description can be edited after the commit exists, so unlike the
    commit message it could carry the data block's closing tag: any
    delimiter-like text is defused before it reaches the prompt.
    """
    if pr is None:
        return {"pr_title": "", "pr_labels": "", "pr_body": ""}

    def inert(text: str) -> str:
        return _DELIMITER.sub("(commit data)", hide_emails(text))

    return {
        "pr_title": inert(pr.title),
        "pr_labels": inert(", ".join(pr.labels)),
        "pr_body": inert(clean_message(pr.body)[:PR_BODY_CHARS]),
    }
