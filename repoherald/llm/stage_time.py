"""The time the LLM stage of a run may take in all: ``[llm] stage_timeout``.

Each request has its deadline and its retries, but a run is many commits,
each possibly several requests: a slow endpoint that answers every one just
in time can hold the run for hours. The stage's seconds are spent only
while the analyser works (not while the sources are read), across every day
of the run; ``run`` over several repositories shares one, like the circuit
breaker. Once they are used up, the commits left keep their rules analysis,
marked, as with a used-up token budget.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StageTime:
    """``seconds`` for the stage, and those spent so far."""

    seconds: float
    used: float = 0.0

    def left(self) -> float:
        """Seconds left (zero or less: used up)."""
        return self.seconds - self.used
