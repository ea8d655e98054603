"""The ``Analyser`` protocols, and the analysers found through ``repoherald.analysers``.

A commit is analysed in two passes. The first (:class:`CommitAnalyser`, the
rules) reads one commit's facts, offline, and every commit gets it. The
second (:class:`DeepAnalyser`, the LLM) starts from the first pass's
analyses and the patches, runs a day's commits together, and may fall back
to the first pass's analysis with a note. Both are an :class:`Analyser`: a
``name`` that identifies what computed an analysis, under which the store
caches it, so a change of rules or prompt is a new name and a re-analysis.

The pipeline asks this module for the analyser of each role, ``rules`` and
``llm``; both are declared under the ``repoherald.analysers`` entry-point
group by repoherald's own package, as a plugin would declare one
(:mod:`repoherald.plugins`). A plugin cannot take a built-in role's name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from repoherald.errors import ConfigError
from repoherald.models import Analysis, Commit, Facts
from repoherald.plugins import ANALYSERS, load_group

if TYPE_CHECKING:  # the LLM package is imported only when a run configures a model
    from concurrent.futures import Future

    from repoherald.llm.analyser import LlmAnalyser, LlmResult
    from repoherald.llm.job import LlmJob

RULES = "rules"
LLM = "llm"


@runtime_checkable
class Analyser(Protocol):
    """Something that analyses commits, under a stable identity."""

    @property
    def name(self) -> str:
        """What computed an analysis (``rules/7``, ``llm/<model>/<prompt>/<lang>``): the
        store's cache key and the report header's "analysed by"."""
        ...


@runtime_checkable
class CommitAnalyser(Analyser, Protocol):
    """The first pass: one commit from its facts, no I/O (what ``analyse_day`` calls)."""

    def analyse(self, commit: Commit, facts: Facts) -> Analysis:
        """The analysis of ``commit``; an exception costs only this commit (it is contained)."""
        ...


@runtime_checkable
class DeepAnalyser(Analyser, Protocol):
    """The second pass over the first's analyses, with patches (what ``deepen_with_llm`` calls)."""

    def analyse_all(
        self, jobs: Sequence[LlmJob], on_done: Callable[[int, int], None] | None = None
    ) -> list[LlmResult]:
        """One result per job, in order, never an exception: an analysis of its own, or the
        job's first-pass analysis with ``llm_error`` saying why."""
        ...

    def submit(
        self,
        jobs: Sequence[LlmJob],
        on_done: Callable[[int, int], None] | None = None,
        *,
        budget: int | None = None,
    ) -> Future[list[LlmResult]]:
        """:meth:`analyse_all` without waiting: the run's model pool answers in the future
        (``budget``: the batch's own token allowance), while the run goes on."""
        ...

    def unavailable_line(self) -> str:
        """One line when the service could not be reached for some commits, else ""."""
        ...


_LOADED: dict[str, type] | None = None


def analyser_classes() -> dict[str, type]:
    """Every analyser class declared under ``repoherald.analysers``, by name (loaded once)."""
    global _LOADED
    if _LOADED is None:
        _LOADED = {p.name: p.obj for p in load_group(ANALYSERS, _problem) if inspect.isclass(p.obj)}
    return dict(_LOADED)


def _problem(name: str, obj: object) -> str | None:
    if not inspect.isclass(obj):
        return f"{obj!r} is not a class"
    if not (callable(getattr(obj, "analyse", None)) or callable(getattr(obj, "analyse_all", None))):
        return "it has neither analyse() nor analyse_all() (see repoherald.analysers)"
    return None


def rules_analyser() -> CommitAnalyser:
    """The first-pass analyser, built with no arguments (it is stateless)."""
    analyser = _role(RULES)()
    if not isinstance(analyser, CommitAnalyser):
        raise ConfigError(f"the {RULES!r} analyser has no analyse(): reinstall repoherald")
    return analyser


def llm_analyser_class() -> type[LlmAnalyser]:
    """The second-pass class; the run builds it from its ``[llm]`` settings when one is set."""
    from repoherald.llm.analyser import LlmAnalyser

    cls = _role(LLM)
    if not issubclass(cls, LlmAnalyser):
        raise ConfigError(f"the {LLM!r} analyser is not an LlmAnalyser: reinstall repoherald")
    return cls


def _role(name: str) -> type:
    cls = analyser_classes().get(name)
    if cls is None:
        raise ConfigError(f"no {name!r} analyser is installed: reinstall repoherald")
    return cls
