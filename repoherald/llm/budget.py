"""A token allowance per repository-day, on top of the run's ``token_budget``.

The run's budget protects the bill; it does not protect the days. A run that
catches up a week, or covers several repositories, can spend the whole
budget on the first busy day and leave the others with rules only. With
``token_budget_per_day``, each repository-day's batch is analysed against a
meter of its own (:meth:`~repoherald.llm.analyser.LlmAnalyser.submit`'s
``budget``), under the repository's and the run's, so what it spends counts
in theirs too and the run's budget still refuses what it has no room for.
"""

from __future__ import annotations

from repoherald.analysers import DeepAnalyser
from repoherald.llm.analyser import LlmAnalyser


def day_allowance(llm: DeepAnalyser) -> int | None:
    """The tokens one repository-day may spend, when ``token_budget_per_day`` is set."""
    if isinstance(llm, LlmAnalyser):
        return llm.cfg.token_budget_per_day
    return None
