"""A token allowance per repository-day, on top of the run's ``token_budget``.

The run's budget protects the bill; it does not protect the days. A run that
catches up a week, or covers several repositories, can spend the whole
budget on the first busy day and leave the others with rules only. With
``token_budget_per_day``, each repository-day is analysed against its own
meter, capped by what is left of the run's budget, and what it spent is
added to the run's meter afterwards, so the run's counts stay whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from repoherald.llm.analyser import LlmAnalyser, Meter


@contextmanager
def day_budget(llm: LlmAnalyser, tokens: int) -> Iterator[None]:
    """Inside the block, ``llm`` may spend ``tokens`` at most, and never past the run's budget."""
    run_meter = llm.meter
    budget = tokens
    if run_meter.budget is not None:
        budget = min(tokens, max(0, run_meter.budget - run_meter.used))
    day = Meter(budget=budget)
    llm.meter = day
    try:
        yield
    finally:
        llm.meter = run_meter
        run_meter.prompt_tokens += day.prompt_tokens
        run_meter.completion_tokens += day.completion_tokens
        run_meter.requests += day.requests
