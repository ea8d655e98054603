"""The JSON the model must return, as pydantic models.

The schema is sent to the server (structured output), and every answer is
validated against it before anything reaches a report. Lengths and counts
are bounded so a runaway answer is rejected, not rendered. Text fields are
plain sentences: the renderer escapes them, so model Markdown cannot shape
the page.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repoherald.models import ChangeType, Importance

_TEXT = 600
_SHORT = 300


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LlmRisk(_Strict):
    risk: str = Field(max_length=_SHORT, description="The risk, in a few words.")
    detail: str = Field(max_length=_TEXT, description="Why the change creates it.")
    mitigation: str = Field(max_length=_TEXT, description="What a downstream team can do.")


class LlmInsights(_Strict):
    architecture: str = Field(max_length=_TEXT)
    performance: str = Field(max_length=_TEXT)
    security: str = Field(max_length=_TEXT)
    maintainability: str = Field(max_length=_TEXT)
    compatibility: str = Field(max_length=_TEXT)


class ShortAnswer(_Strict):
    """For low-importance commits: type, importance and a one- or two-sentence summary."""

    change_type: ChangeType
    importance: Importance
    judgement_reason: str = Field(
        max_length=_SHORT,
        description="Why this type and importance; say so if you changed the rules' verdict.",
    )
    summary: str = Field(max_length=_TEXT)


class FullAnswer(ShortAnswer):
    """For medium and high commits: the full analysis."""

    impact: list[str] = Field(max_length=8, description="Who and what the change affects.")
    insights: LlmInsights
    risks: list[LlmRisk] = Field(max_length=5)
    recommendations: list[str] = Field(max_length=5)


# Keywords OpenAI's strict mode and some local grammars reject; the limits
# are enforced here, on the answer, instead.
_UNSENT = {"title", "maxLength", "maxItems", "minLength", "minItems"}


def response_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema for ``response_format``: no ``$ref`` (some servers lack it)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                return inline(dict(defs[name]))
            return {k: inline(v) for k, v in node.items() if k not in _UNSENT}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    flat: dict[str, Any] = inline(schema)
    return flat
