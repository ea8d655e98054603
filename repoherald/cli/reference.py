"""The README's flag and configuration tables, generated from the code that defines them.

``cog -r README.md`` rewrites the tables; CI runs ``cog --check README.md`` so
the README cannot drift from the click commands and the config schema.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

import click
from pydantic import BaseModel, WithJsonSchema
from pydantic_core import PydanticUndefined


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def flag_table(command: click.Command) -> str:
    """A Markdown table of ``command``'s options: flag, default, meaning."""
    rows = ["| flag | meaning |", "|---|---|"]
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        arg = ""
        if param.metavar and not param.is_flag:
            arg = f" {param.metavar}"
        elif isinstance(param.type, click.Choice):
            arg = " " + "|".join(map(str, param.type.choices))
        elif not param.is_flag:
            arg = f" {param.name.upper() if param.name else 'VALUE'}"
        names = ", ".join(f"`{o}{arg}`" for o in param.opts)
        rows.append(f"| {_cell(names)} | {_cell(param.help or '')} |")
    return "\n".join(rows)


def _type_name(ann: Any) -> str:
    origin = get_origin(ann)
    if origin is Annotated:
        base, *meta = get_args(ann)
        choices = next((_enum(m) for m in meta if _enum(m)), None)
        return " | ".join(f'"{c}"' for c in choices) if choices else _type_name(base)
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in get_args(ann) if a is not type(None))
    if origin is not None:
        if str(origin).endswith("Literal"):
            return " | ".join(f'"{a}"' for a in get_args(ann))
        args = ", ".join(_type_name(a) for a in get_args(ann))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if str(ann).startswith("typing.Literal"):
        return " | ".join(f'"{a}"' for a in get_args(ann))
    return getattr(ann, "__name__", str(ann))


def _enum(meta: Any) -> list[Any] | None:
    """The values a checked type allows, when it declares them (``Lang``: the catalogues)."""
    if isinstance(meta, WithJsonSchema) and isinstance(meta.json_schema, dict):
        values = meta.json_schema.get("enum")
        return list(values) if isinstance(values, list) else None
    return None


def _sub_model(ann: Any) -> type[BaseModel] | None:
    for cand in (ann, *get_args(ann)):
        if isinstance(cand, type) and issubclass(cand, BaseModel):
            return cand
    return None


def config_table(model: type[BaseModel], prefix: str = "") -> str:
    """A Markdown table of every key of the config file: key, type, default, meaning."""
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    rows.extend(_config_rows(model, prefix))
    return "\n".join(rows)


def _config_rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows: list[str] = []
    nested: list[tuple[str, type[BaseModel]]] = []
    for name, info in model.model_fields.items():
        sub = _sub_model(info.annotation)
        if sub is not None:
            is_list = get_origin(info.annotation) is list
            nested.append((f"[[{prefix}{name}]]" if is_list else f"[{prefix}{name}]", sub))
            continue
        default = info.default
        shown = "" if default is PydanticUndefined or default is None else f"`{default!r}`"
        if info.default_factory is not None:
            shown = ""
        if default is PydanticUndefined and info.default_factory is None:
            shown = "required"
        key = f"`{prefix}{info.alias or name}`"
        rows.append(
            f"| {key} | {_cell(_type_name(info.annotation))} | {shown} |"
            f" {_cell(info.description or '')} |"
        )
    for table, sub in nested:
        rows.append(f"| **{table}** | table | | {_cell((sub.__doc__ or '').strip())} |")
        inner = table.strip("[]") + "."
        rows.extend(_config_rows(sub, inner))
    return rows
