"""The public API of a Python module, and how it changed between two versions.

A report reader cares whether a commit added, removed or re-signed something
they may call, so this extracts the module-level functions and classes of one
blob and diffs two such extracts. It is pure (bytes in, data out) and does a
single ``ast.parse`` per blob, because it runs over thousands of files a
month; the caller caches :func:`public_api` results by blob SHA.

The API is folded from *events*, one short list per top-level statement
(:func:`api_events`): the definitions it makes and its updates of
``__all__``. :mod:`repoherald.analysis.pyapi.outline` keeps them per statement so
that another version of the file can be checked by parsing only the
statements that changed.

Anything we cannot parse — invalid syntax, undecodable bytes, NUL bytes,
nesting deep enough to exhaust the parser, oversized files — yields ``None``
so the caller can list the file as "measured, not parsed" instead of guessing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from repoherald.analysis.pyapi.parse import (
    PARSE_ERRORS,
    gc_paused,
    module_statements,
    parse_quietly,
)
from repoherald.models import ApiChange

PublicApi = dict[str, tuple[str, str]]
"""Public name -> (kind, signature)."""

MAX_BYTES = 1_000_000
"""Larger blobs are almost always generated code; parsing them is slow and useless."""


def public_api(source: bytes, max_bytes: int = MAX_BYTES) -> PublicApi | None:
    """Return the public module-level functions and classes of ``source``.

    Kinds are ``"function"``, ``"async function"`` and ``"class"``; the
    signature is the parenthesised parameter list plus ``-> return``
    annotation for functions, and the bases/keywords for classes.

    Definitions directly at module level and inside module-level ``if`` /
    ``try`` blocks (``if TYPE_CHECKING:``, version guards, import fallbacks)
    are considered; when a name is defined more than once the last definition
    in source order wins. A literal ``__all__`` decides what is public (names
    in it count even if they start with ``_``); without one, or when
    ``__all__`` is computed rather than literal, names not starting with
    ``_`` are public.

    Returns ``None`` when ``source`` exceeds ``max_bytes`` or cannot be
    decoded or parsed. Bytes are handed to ``ast.parse`` undecoded so that a
    PEP 263 coding cookie (or a UTF-8 BOM) is honoured exactly as Python would.
    """
    if len(source) > max_bytes:
        return None
    with gc_paused():
        try:
            return _extract(parse_quietly(source))
        except PARSE_ERRORS:
            return None


def diff_api(path: str, old: PublicApi | None, new: PublicApi | None) -> list[ApiChange]:
    """Compare two :func:`public_api` results for ``path``, sorted by name.

    ``None`` means the file is absent on that side, so an added module adds
    all its names and a deleted one removes them all. A name whose kind
    changed (say ``function`` to ``async function`` or to ``class``) is
    reported as a removal of the old kind followed by an addition of the new
    one, since a single ``kind`` field cannot express the change and callers
    break either way.
    """
    before = old or {}
    after = new or {}
    changes: list[ApiChange] = []
    for name in sorted(before.keys() | after.keys()):
        was = before.get(name)
        now = after.get(name)
        if was == now:
            continue
        if was is not None and now is not None and was[0] == now[0]:
            changes.append(
                ApiChange(
                    path, name, now[0], "signature", old_signature=was[1], new_signature=now[1]
                )
            )
            continue
        if was is not None:
            changes.append(ApiChange(path, name, was[0], "removed", old_signature=was[1]))
        if now is not None:
            changes.append(ApiChange(path, name, now[0], "added", new_signature=now[1]))
    return changes


@dataclass(frozen=True, slots=True)
class Definition:
    """A module-level ``def`` or ``class``: a name the module may export."""

    name: str
    kind: str
    signature: str


@dataclass(frozen=True, slots=True)
class AllUpdate:
    """A statement that sets or extends ``__all__``; ``names`` is None when not literal."""

    names: tuple[str, ...] | None
    replaces: bool


ApiEvent = Definition | AllUpdate


def api_events(body: list[ast.stmt]) -> list[ApiEvent]:
    """What the statements of ``body`` contribute to the API, in source order."""
    events: list[ApiEvent] = []
    for stmt in module_statements(body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            kind = "async function" if isinstance(stmt, ast.AsyncFunctionDef) else "function"
            events.append(Definition(stmt.name, kind, _function_signature(stmt)))
        elif isinstance(stmt, ast.ClassDef):
            events.append(Definition(stmt.name, "class", _class_signature(stmt)))
        elif _touches_all(stmt):
            names = _all_literal(stmt)
            replaces = isinstance(stmt, ast.Assign | ast.AnnAssign)
            events.append(AllUpdate(tuple(names) if names is not None else None, replaces))
    return events


def fold_api(events: Iterable[ApiEvent]) -> PublicApi:
    """The public API the events add up to: the last definition of a name wins."""
    defs: PublicApi = {}
    seen_all = False
    exported: list[str] | None = []
    for event in events:
        if isinstance(event, Definition):
            defs[event.name] = (event.kind, event.signature)
            continue
        seen_all = True
        if event.names is None:
            # One computed contribution makes the list unknowable; fall
            # back to the underscore rule rather than under-report.
            exported = None
        elif exported is not None:
            exported = list(event.names) if event.replaces else exported + list(event.names)
    if seen_all and exported is not None:
        allowed = set(exported)
        return {name: value for name, value in defs.items() if name in allowed}
    return {name: value for name, value in defs.items() if not name.startswith("_")}


def _extract(tree: ast.Module) -> PublicApi:
    """Collect definitions and ``__all__`` from the statements we consider."""
    return fold_api(api_events(tree.body))


def _touches_all(stmt: ast.stmt) -> bool:
    """True for ``__all__ = …``, ``__all__: … = …``, ``__all__ += …`` and ``__all__.extend(…)``."""
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return False  # a bare annotation declares nothing
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        return isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "__all__"
        )
    return False


def _all_literal(stmt: ast.stmt) -> list[str] | None:
    """The names a statement that touches ``__all__`` adds, or None if not literal."""
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) != 1:
            return None
        return _string_sequence(stmt.value)
    if isinstance(stmt, ast.AugAssign):
        return _string_sequence(stmt.value) if isinstance(stmt.op, ast.Add) else None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if call.keywords or len(call.args) != 1:
            return None
        if method == "extend":
            return _string_sequence(call.args[0])
        if method == "append":
            arg = call.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return [arg.value]
    return None


def _string_sequence(node: ast.expr | None) -> list[str] | None:
    """The strings of a literal list/tuple of string constants, else None."""
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    names: list[str] = []
    for elt in node.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        names.append(elt.value)
    return names


def _function_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``(params) -> returns`` as Python would print it, canonical across formatting."""
    signature = f"({ast.unparse(node.args)})"
    if node.returns is not None:
        signature += f" -> {ast.unparse(node.returns)}"
    return signature


def _class_signature(node: ast.ClassDef) -> str:
    """``(Base, metaclass=M)``: what subclassing or instantiating code depends on."""
    parts = [ast.unparse(base) for base in node.bases]
    parts.extend(ast.unparse(keyword) for keyword in node.keywords)
    return f"({', '.join(parts)})"
