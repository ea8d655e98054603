"""LLM analysis: schema-bound, token-budgeted, concurrent, fact-checked, never truncated.

The rule analysis triages first: low-importance commits get a short request,
medium and high the full one. Each answer must parse as JSON, validate
against :mod:`repoherald.llm.schema`, and survive the fact-check before it replaces the
rule analysis. Anything else (a truncated answer, invalid JSON after one
repair, an endpoint that keeps failing, an exhausted token budget, the
stage's time used up) leaves the commit with its rule analysis and a visible
note saying why. An endpoint that
cannot be reached at all opens the run's circuit breaker: the commits left
are marked "LLM unavailable" at once, and the run says so in one line.

Bump ``PROMPT_VERSION`` whenever the prompts or the schema change: cached
analyses are keyed by (commit SHA, model, prompt version, language). The
model writes prose in the report's language, so the rule analysis it starts
from is localised into that language first.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
from pydantic import ValidationError

from repoherald.breaker import CircuitBreaker
from repoherald.i18n import localise_analysis, t
from repoherald.llm import factcheck
from repoherald.llm.answer import (
    bound_verdict,
    evidence,
    first_error,
    mark_alarms,
    strip_fence,
    to_analysis,
    with_error,
)
from repoherald.llm.client import (
    ChatClient,
    ChatReply,
    LlmError,
    LlmUnavailable,
    SchemaRejected,
)
from repoherald.llm.diffpack import estimate_tokens, pack_diff
from repoherald.llm.fit import fit
from repoherald.llm.job import LlmJob
from repoherald.llm.meter import Meter
from repoherald.llm.pool import BREAKER_THRESHOLD, ModelPool, endpoint_breaker
from repoherald.llm.prompt import messages, repair_prompt
from repoherald.llm.schema import FullAnswer, ShortAnswer, response_schema
from repoherald.llm.settings import LlmSettings
from repoherald.models import Analysis, FilePatch, Importance
from repoherald.redact import redact

__all__ = [
    "BREAKER_THRESHOLD",
    "PROMPT_VERSION",
    "LlmAnalyser",
    "LlmResult",
    "Meter",
    "endpoint_breaker",
    "parse_answer",
]

PROMPT_VERSION = "3"
SHORT_OUTPUT_TOKENS = 768
PROMPT_MARGIN = 512
MAX_LENGTH_RETRIES = 2


class BudgetExhausted(LlmError):
    """The run's token budget does not allow another request."""


class StageTimeUp(LlmError):
    """The LLM stage's time budget (``[llm] stage_timeout``) ran out before this commit."""


@dataclass
class _Attempt:
    depth: str
    max_tokens: int
    diff_budget: int
    usage: list[int] = field(default_factory=lambda: [0, 0])


@dataclass(frozen=True)
class LlmResult:
    """One job's outcome: the analysis to show, and whether the endpoint was unreachable.

    Unreachable commits are not reported one by one: the run says it once
    (:meth:`LlmAnalyser.unavailable_line`).
    """

    analysis: Analysis
    unavailable: bool = False


class LlmAnalyser:
    """Analyses commits through one OpenAI-compatible endpoint, in one report language.

    One analyser serves one report run (one repository, with ``run``): its
    meter and its counters span every day of it. The endpoint itself is the
    ``pool``'s (:class:`~repoherald.llm.pool.ModelPool`): ``run`` over many
    repositories gives each repository's analyser the run's one pool, so
    their requests share ``concurrency``, the pace, the circuit breaker, the
    token budget and the stage's time. Without a ``pool`` the analyser makes
    its own.
    """

    def __init__(self, cfg: LlmSettings, lang: str, *, pool: ModelPool | None = None) -> None:
        self.cfg = cfg
        self.lang = lang
        self.name = f"llm/{cfg.model}/{PROMPT_VERSION}/{lang}"
        self.pool = pool if pool is not None else ModelPool(cfg)
        self.meter = Meter(parent=self.pool.meter)
        """What this analyser spent; the pool's meter (the run's budget) hears it too."""
        self.fallbacks = 0
        """Commits that kept their rule analysis because the model's failed, for any reason."""
        self.unavailable = 0
        """Of those, the commits whose endpoint could not be reached."""
        self._unreachable = ""
        """Why the endpoint could not be reached, when the breaker did not open."""

    @property
    def breaker(self) -> CircuitBreaker:
        """The endpoint's circuit breaker, the pool's."""
        return self.pool.breaker

    # -- public API -----------------------------------------------------

    def analyse_all(
        self, jobs: Sequence[LlmJob], on_done: Callable[[int, int], None] | None = None
    ) -> list[LlmResult]:
        """Analyse ``jobs`` concurrently; one result per job, in order, never an exception.

        A result either is the model's (fact-checked) analysis, or the job's
        rule analysis with ``llm_error`` saying why the model's is missing.
        """
        with self.pool.running():
            future = self.submit(jobs, on_done)
            self.pool.wait([future])
            return future.result()

    def submit(
        self,
        jobs: Sequence[LlmJob],
        on_done: Callable[[int, int], None] | None = None,
        *,
        budget: int | None = None,
    ) -> Future[list[LlmResult]]:
        """:meth:`analyse_all` handed to the running pool: the answers come in the future.

        ``budget`` is the batch's own token allowance (a repository-day's),
        within this analyser's and the run's. ``on_done`` hears the pool's
        progress on the caller's thread, while it waits (:meth:`ModelPool.wait`).
        """
        jobs = [replace(j, rules=localise_analysis(self.lang, j.rules)) for j in jobs]
        meter = self.meter if budget is None else Meter(budget=budget, parent=self.meter)

        def work(
            client: ChatClient, job_done: Callable[[], None]
        ) -> Coroutine[Any, Any, list[LlmResult]]:
            return self._analyse_all(client, jobs, meter, job_done)

        return self.pool.submit(work, len(jobs), on_done)

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
        self,
        client: ChatClient,
        jobs: Sequence[LlmJob],
        meter: Meter,
        job_done: Callable[[], None],
    ) -> list[LlmResult]:
        """Every job through the pool's gate; on the pool's loop."""
        gate, ends = self.pool.gate, self.pool.ends

        async def one(job: LlmJob) -> LlmResult:
            scope = asyncio.timeout_at(ends)
            try:
                async with scope, gate:
                    result = await self._guarded(client, job, ends, meter)
            except TimeoutError:
                if not scope.expired():
                    raise
                result = self._time_up(job)
            job_done()
            return result

        results = list(await asyncio.gather(*(one(j) for j in jobs)))
        self.fallbacks += sum(1 for r in results if r.analysis.llm_error)
        self.unavailable += sum(1 for r in results if r.unavailable)
        return results

    # -- one commit -------------------------------------------------------

    async def _guarded(
        self, client: ChatClient, job: LlmJob, ends: float, meter: Meter
    ) -> LlmResult:
        """:meth:`_analyse`, with a surprise contained to this commit; none once the stage's
        time is up (a commit that waited for its turn past the end sends nothing)."""
        if asyncio.get_running_loop().time() >= ends:
            return self._time_up(job)
        try:
            return await self._analyse(client, job, meter)
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            # A bug or a surprise on one commit must not cost the
            # others: this one keeps its rule analysis, marked.
            error = LlmError(f"{type(exc).__name__}: {exc}")
            return LlmResult(with_error(job.rules, self._fail_text(error), [0, 0]))

    def _time_up(self, job: LlmJob) -> LlmResult:
        """The rule analysis of a commit the stage's time did not reach (or ran out on)."""
        seconds = f"{self.pool.stage_time.seconds:g}"
        error = StageTimeUp(t(self.lang, "llm.stage_timeout", seconds=seconds))
        return LlmResult(with_error(job.rules, self._fail_text(error), [0, 0]))

    async def _analyse(self, client: ChatClient, job: LlmJob, meter: Meter) -> LlmResult:
        attempt = _Attempt(
            depth="short" if job.rules.importance is Importance.LOW else "full",
            max_tokens=self._output_tokens(job.rules.importance),
            diff_budget=0,
        )
        try:
            if self.breaker.is_open:
                raise LlmUnavailable(self.breaker.message)
            answer, unseen = await self._ask(client, job, attempt, meter)
        except LlmUnavailable as exc:
            self._unreachable = str(exc)
            marked = with_error(job.rules, t(self.lang, "llm.unavailable"), attempt.usage)
            return LlmResult(marked, unavailable=True)
        except LlmError as exc:
            return LlmResult(with_error(job.rules, self._fail_text(exc), attempt.usage))
        checked, unsupported = factcheck.check(answer, evidence(job), self.lang)
        checked = bound_verdict(checked, job)
        analysis = to_analysis(
            job, checked, unsupported, unseen, attempt.usage, lang=self.lang, analyser=self.name
        )
        return LlmResult(mark_alarms(analysis, job.commit.message, self.lang))

    def _output_tokens(self, importance: Importance) -> int:
        if importance is Importance.LOW:
            return min(SHORT_OUTPUT_TOKENS, self.cfg.max_output_tokens)
        return self.cfg.max_output_tokens

    def _fail_text(self, exc: LlmError) -> str:
        return t(self.lang, "llm.failed", error=exc)

    async def _ask(
        self, client: ChatClient, job: LlmJob, at: _Attempt, meter: Meter
    ) -> tuple[ShortAnswer | FullAnswer, tuple[str, ...]]:
        """Request, validate and, when needed, repair or re-request one answer.

        Each pass of the loop is one request. What makes it go round again:
        the endpoint refused our schema (ask again without it), the answer was
        cut at ``max_tokens`` (more room or less diff), the JSON did not
        validate (one repair turn), or a short answer rated the commit above
        🟢 (ask for the full analysis it deserves).
        """
        patches = job.patch.files
        length_retries = 0
        repaired = False
        escalated = False
        repair_messages: list[dict[str, str]] = []
        while True:
            model = ShortAnswer if at.depth == "short" else FullAnswer
            schema = response_schema(model, self.lang)
            messages, unseen = self._prompt(job, at, patches, client)
            reply = await self._request(client, messages + repair_messages, at, schema, meter)
            if reply is None:
                continue
            if reply.finish_reason == "length":
                length_retries += 1
                self._make_room(at, length_retries)
                repair_messages = []
                continue
            try:
                answer = parse_answer(reply.content, model)
            except (ValidationError, json.JSONDecodeError) as exc:
                problem = first_error(exc) if isinstance(exc, ValidationError) else _json_error(exc)
                if repaired:
                    raise LlmError(f"invalid JSON after one repair: {problem}") from None
                repaired = True
                repair_messages = [
                    {"role": "assistant", "content": reply.content[:4000]},
                    {"role": "user", "content": repair_prompt(self.lang, problem)},
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
        client: ChatClient,
    ) -> tuple[list[dict[str, str]], tuple[str, ...]]:
        """The messages for one request, with as much diff as the context leaves room for.

        Also returns what of the diff the model did not see, for the page.
        """
        native = client.json_schema_supported
        base = messages(job, self.lang, at.depth, native, diff=None)
        overhead = sum(estimate_tokens(m["content"]) for m in base)
        room = self.cfg.context_tokens - at.max_tokens - overhead - PROMPT_MARGIN
        if at.diff_budget == 0 or at.diff_budget > room:
            at.diff_budget = max(0, room)
        packed = pack_diff(patches, at.diff_budget)
        unseen = tuple(f"{p} ({why})" for p, why in packed.unseen) + tuple(
            f"{p} (clipped)" for p in packed.clipped
        )
        if job.patch.cut:
            unseen += ("… (diff too large: read partially)",)
        return messages(job, self.lang, at.depth, native, diff=packed), unseen

    async def _request(
        self,
        client: ChatClient,
        messages: list[dict[str, str]],
        at: _Attempt,
        schema: dict[str, Any],
        meter: Meter,
    ) -> ChatReply | None:
        """One completion within the token budget; None when the endpoint refused the schema.

        The budget is reserved before the request and settled with what the
        endpoint reports, so concurrent commits never overspend it.
        """
        estimate = sum(estimate_tokens(m["content"]) for m in messages) + at.max_tokens
        if not meter.reserve(estimate):
            raise BudgetExhausted(t(self.lang, "llm.budget_exhausted"))
        try:
            reply = await client.complete(
                messages,
                max_tokens=at.max_tokens,
                schema_name="commit_analysis",
                schema=schema,
                on_send=meter.sent,
            )
        except SchemaRejected:
            meter.settle(estimate, 0, 0)
            return None
        except BaseException:  # an error, or the stage's time cut the request
            meter.settle(estimate, 0, 0)
            raise
        meter.settle(estimate, reply.prompt_tokens, reply.completion_tokens)
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


def parse_answer(
    content: str, model: type[ShortAnswer] | type[FullAnswer]
) -> ShortAnswer | FullAnswer:
    """The answer as ``model``; over-long texts and lists are fitted, not refused.

    Raises for what a repair can fix: text that is not JSON, or JSON that
    breaks the schema otherwise (an unknown enum value, a missing field).
    """
    data = json.loads(strip_fence(content))
    return model.model_validate(fit(data, model))


def _json_error(exc: json.JSONDecodeError) -> str:
    """Where the text stopped being JSON, short enough for a repair turn."""
    return f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"[:300]
