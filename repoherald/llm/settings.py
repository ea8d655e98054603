"""What the LLM analyser needs to know about its endpoint, and nothing else.

It lives here, not in :mod:`repoherald.config`, so the dependency points one
way: the configuration builds an :class:`LlmSettings`, and ``llm/`` never
imports the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from repoherald.redact import secret_env


@dataclass(frozen=True, slots=True)
class LlmSettings:
    """An OpenAI-compatible endpoint. Holds the *name* of the key's variable, never the key."""

    base_url: str
    model: str
    api_key_env: str | None = None
    concurrency: int = 4
    timeout: float = 120.0
    max_output_tokens: int = 2048
    temperature: float = 0.2
    context_tokens: int = 32768
    max_retries: int = 4
    token_budget: int | None = None
    token_budget_per_day: int | None = None
    """Tokens one repository-day may use, on top of the run's ``token_budget``."""
    stage_timeout: float = 3600.0
    """Seconds the LLM stage of a run may take in all (each request has its own deadline,
    not their sum): what is not analysed by then keeps its rules analysis, marked."""
    provider: str | None = None
    """The preset the endpoint came from, if any (said by ``llm check``)."""

    def api_key(self) -> str | None:
        """The key, read from the environment when needed and registered for redaction."""
        return secret_env(self.api_key_env)
