"""What the LLM analyser needs to know about its endpoint: the ``[llm]`` table, one model.

:class:`LlmSection` is the table as written (every key optional, each number
with its bounds, declared once here); :class:`LlmSettings` is the same model
once an endpoint is resolved (base URL and model known). The configuration
reads the file into the first and merges flags and provider presets into the
second, in one place (:mod:`repoherald.config.endpoints`).

It lives here, not in :mod:`repoherald.config`, so the dependency points one
way: the configuration builds an :class:`LlmSettings`, and ``llm/`` never
imports the configuration.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repoherald.errors import UsageError
from repoherald.llm.providers import provider
from repoherald.redact import secret_env


class LlmSection(BaseModel):
    """An OpenAI-compatible endpoint; omit the table for rules only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str | None = Field(
        default=None,
        description="deepseek, openai, dashscope, ollama, vllm or sglang: fills base_url, model"
        " and api_key_env (keys set here still win); --llm-provider.",
    )

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return provider(value).name
        except UsageError as exc:
            raise ValueError(str(exc)) from None

    base_url: str | None = Field(default=None, description="e.g. https://api.deepseek.com/v1")
    model: str | None = Field(default=None, description="Model name at that endpoint.")
    api_key_env: str | None = Field(
        default=None, description="NAME of the env variable holding the key (never the key)."
    )
    concurrency: int = Field(
        default=4, ge=1, le=64, description="Parallel requests, shared by a run's repositories."
    )
    requests_per_minute: int | None = Field(
        default=None,
        ge=1,
        description="The provider's rate limit: requests of a run are spaced to stay under it.",
    )
    timeout: float = Field(default=120.0, gt=0, le=3600, description="Seconds per request.")
    max_output_tokens: int = Field(
        default=2048, ge=256, le=131072, description="Output room of a full analysis."
    )
    temperature: float = Field(default=0.2, ge=0, le=2)
    context_tokens: int = Field(
        default=32768, ge=4096, le=2_000_000, description="Context window; the diff is packed."
    )
    max_retries: int = Field(
        default=4, ge=0, le=10, description="Retries of timeouts, resets, 429 and 5xx."
    )
    token_budget: int | None = Field(
        default=None, ge=1, description="Stop sending once a run has used this many tokens."
    )
    token_budget_per_day: int | None = Field(
        default=None,
        ge=1,
        description="Stop sending for a repository-day once it has used this many tokens.",
    )
    stage_timeout: float = Field(
        default=3600,
        gt=0,
        le=86400,
        description="Seconds the LLM stage of a run may take in all; the commits left keep"
        " their rules analysis, marked.",
    )


DEFAULT_CONCURRENCY: int = LlmSection.model_fields["concurrency"].default
"""Parallel requests when nothing says otherwise (the one default, read from the model)."""


class LlmSettings(LlmSection):
    """A resolved endpoint. Holds the *name* of the key's variable, never the key.

    ``provider`` is the preset the endpoint came from, if any (said by ``llm check``).
    """

    base_url: str
    model: str

    def api_key(self) -> str | None:
        """The key, read from the environment when needed and registered for redaction."""
        return secret_env(self.api_key_env)
