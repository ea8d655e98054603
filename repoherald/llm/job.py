"""One commit to analyse, as the analyser, the prompt and the answer's checks all see it."""

from __future__ import annotations

from dataclasses import dataclass

from repoherald.models import Analysis, Commit, CommitPatch, Facts


@dataclass(frozen=True)
class LlmJob:
    """One commit to analyse, with everything the prompt and the fact-check need."""

    commit: Commit
    facts: Facts
    rules: Analysis
    patch: CommitPatch
    """The diff, per file, as the source read it."""
    repo: str
    downstream: tuple[str, ...] = ()
    """What the commit breaks or changes in the reader's configured downstream code, one
    line each; empty when none is configured or the check has not run before the model."""
