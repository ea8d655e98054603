"""The JSON the model must return, as pydantic models.

The schema is sent to the server (structured output), and every answer is
validated against it before anything reaches a report. Lengths and counts
are bounded so a runaway answer never reaches the page whole. Text fields
are plain sentences: the renderer escapes them, so model Markdown cannot
shape the page.

Strict-mode servers reject ``maxLength``/``maxItems``, so the bounds are not
sent as keywords: every field's description states its bound in words, in
the prompt's language, and the system prompt repeats them
(:func:`limits_text`). An answer that still runs long is fitted
(:mod:`repoherald.llm.fit`), not refused: a good answer one sentence too
long is worth keeping, and a repair request costs a second call.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repoherald.i18n import CATALOGUES, t
from repoherald.models import ChangeType, Importance

_TEXT = 600
_SHORT = 300
_IMPACT_ITEMS = 8
_LIST_ITEMS = 5


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

    impact: list[str] = Field(
        max_length=_IMPACT_ITEMS, description="Who and what the change affects."
    )
    insights: LlmInsights
    risks: list[LlmRisk] = Field(max_length=_LIST_ITEMS)
    recommendations: list[str] = Field(max_length=_LIST_ITEMS)


def max_length(model: type[BaseModel], name: str) -> int | None:
    """The bound the validator enforces on field ``name`` (characters or items), if any."""
    for meta in model.model_fields[name].metadata:
        limit = getattr(meta, "max_length", None)
        if isinstance(limit, int):
            return limit
    return None


def _bound(lang: str, limit: int, is_list: bool) -> str:
    return t(lang, "llm.bound.items" if is_list else "llm.bound.chars", limit=limit)


def _described(model: type[BaseModel], name: str, lang: str) -> str:
    key = "llm.schema." + name
    what = CATALOGUES[lang].get(key, "")
    limit = max_length(model, name)
    if limit is None:
        return what
    annotation = model.model_fields[name].annotation
    is_list = getattr(annotation, "__origin__", None) is list
    return t(lang, "llm.described", what=what, bound=_bound(lang, limit, is_list)).strip()


_MODELS: dict[str, type[BaseModel]] = {
    "insights": LlmInsights,
    "risks": LlmRisk,
}


def limits_text(model: type[BaseModel], lang: str) -> list[str]:
    """Each bounded field of ``model`` (nested ones too) with its bound, one line each."""
    out: list[str] = []
    for name in model.model_fields:
        limit = max_length(model, name)
        if limit is not None:
            annotation = model.model_fields[name].annotation
            is_list = getattr(annotation, "__origin__", None) is list
            out.append(f"{name}: {_bound(lang, limit, is_list)}")
        nested = _MODELS.get(name)
        if nested is not None:
            prefix = f"{name}[]." if name == "risks" else f"{name}."
            out.extend(prefix + line for line in limits_text(nested, lang))
    return out


# Keywords OpenAI's strict mode and some local grammars reject; the limits
# are enforced on the answer instead, and stated in the descriptions.
_UNSENT = {"title", "maxLength", "maxItems", "minLength", "minItems"}


@cache
def response_schema(model: type[BaseModel], lang: str) -> dict[str, Any]:
    """The JSON Schema for ``response_format``: no ``$ref`` (some servers lack it).

    Every property carries a description in ``lang`` that states its bound.
    Built once per model and language: pydantic took 8 ms to generate it, for
    every request of every commit. Callers share the one dict and must not change it.
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    owners: dict[str, type[BaseModel]] = {
        model.__name__: model,
        "LlmInsights": LlmInsights,
        "LlmRisk": LlmRisk,
    }

    def inline(node: Any, owner: type[BaseModel] | None) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                return inline(dict(defs[name]), owners.get(name))
            out: dict[str, Any] = {}
            for k, v in node.items():
                if k in _UNSENT:
                    continue
                if k == "properties" and owner is not None and isinstance(v, dict):
                    out[k] = {
                        prop: _describe(inline(sub, owner), owner, prop, lang)
                        for prop, sub in v.items()
                    }
                elif k == "items" and isinstance(v, dict) and "$ref" in v:
                    out[k] = inline(v, None)
                else:
                    out[k] = inline(v, owner if k != "description" else None)
            return out
        if isinstance(node, list):
            return [inline(v, owner) for v in node]
        return node

    flat: dict[str, Any] = inline(schema, model)
    return flat


def _describe(node: Any, owner: type[BaseModel], prop: str, lang: str) -> Any:
    if not isinstance(node, dict) or prop not in owner.model_fields:
        return node
    described = _described(owner, prop, lang)
    if not described:
        return node
    return {**node, "description": described}
