"""Fit an over-long answer into the schema's bounds instead of refusing it.

A capable model that writes a 400-character ``judgement_reason`` or a ninth
impact item has answered well; refusing it cost a repair request on a third
of real answers, and a weaker model that failed the repair lost its analysis.
So a text over its bound is cut at the last sentence end that fits (。！？.!?
or a line end), else at a word boundary, and a list keeps its first items.
Everything else the validator checks (JSON syntax, enums, missing or extra
fields, wrong types) is left alone: those are real violations, for repair.
"""

from __future__ import annotations

import re
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from repoherald.llm.schema import max_length

_SENTENCE_END = re.compile(r"[。！？!?]|\.(?=\s|$)|\n")
_SPACE = re.compile(r"\s")


def cut_text(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a sentence end, else a word boundary."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit) if m.end() <= limit]
    if ends and ends[-1] >= limit // 3:
        return text[: ends[-1]].rstrip()
    spaces = [m.start() for m in _SPACE.finditer(head)]
    if spaces and spaces[-1] >= limit // 3:
        return head[: spaces[-1]].rstrip()
    return head.rstrip()


def _nested(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, itself or as the items of a list."""
    candidates = [annotation, *get_args(annotation)]
    for c in candidates:
        if isinstance(c, type) and issubclass(c, BaseModel):
            return c
    return None


def fit(data: Any, model: type[BaseModel]) -> Any:
    """A copy of the parsed answer ``data`` with texts and lists cut to ``model``'s bounds.

    Not a dict, or fields of the wrong type: returned as they are, for the
    validator to name.
    """
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for name, info in model.model_fields.items():
        if name not in out:
            continue
        value = out[name]
        limit = max_length(model, name)
        nested = _nested(info.annotation)
        is_list = get_origin(info.annotation) is list
        if is_list and isinstance(value, list):
            if limit is not None:
                value = value[:limit]
            if nested is not None:
                value = [fit(item, nested) for item in value]
        elif not is_list and isinstance(value, str) and limit is not None:
            value = cut_text(value, limit)
        elif nested is not None:
            value = fit(value, nested)
        out[name] = value
    return out
