"""Tokens and requests spent, against an optional budget, and passed up to a parent meter.

A run's model pool keeps one meter for the run (``[llm] token_budget``); each
repository's analyser keeps its own under it, so a repository's report counts
what it spent, and a repository-day with ``token_budget_per_day`` one more
under that. Spending anywhere is spent everywhere above; a budget anywhere
above can refuse it. Every meter of a pool is used on the pool's one event
loop thread, so the reserve-then-settle sequence needs no lock.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Meter:
    """Tokens spent, the optional budget that stops new requests, and the meter above."""

    budget: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reserved: int = 0
    requests: int = 0
    """HTTP requests sent, retries included; requests a dead endpoint was spared do not count."""
    parent: Meter | None = None

    @property
    def used(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def reserve(self, tokens: int) -> bool:
        """Hold ``tokens`` here and in every meter above, or nothing when any budget refuses."""
        if self.budget is not None and self.used + self.reserved + tokens > self.budget:
            return False
        if self.parent is not None and not self.parent.reserve(tokens):
            return False
        self.reserved += tokens
        return True

    def settle(self, reserved: int, prompt: int, completion: int) -> None:
        """Release a reservation and count what the request really cost, here and above."""
        self.reserved -= reserved
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if self.parent is not None:
            self.parent.settle(reserved, prompt, completion)

    def sent(self) -> None:
        """One HTTP request went out."""
        self.requests += 1
        if self.parent is not None:
            self.parent.sent()
