"""Read one downstream Python file into a :class:`~repoherald.analysis.downstream.index.FileIndex`.

One ``ast.NodeVisitor`` pass: :class:`~repoherald.analysis.downstream.scope.ScopeVisitor`
resolves names to upstream dotted targets; this module adds the calls
(positional count, keywords, ``super()``, instances), the builtins and test
helpers that reach upstream names through strings (``getattr``, ``setattr``,
``mock.patch``, ``monkeypatch.setattr``, ``importlib.import_module``), and the
entry point :func:`index_source`.
"""

from __future__ import annotations

import ast

from repoherald.analysis.downstream import index as ds
from repoherald.analysis.downstream.scope import ScopeVisitor, dotted_name, env_prefixes, string_of
from repoherald.analysis.pyapi.parse import parse_quietly
from repoherald.analysis.surface.extract import module_name

__all__ = ["MAX_BYTES", "env_prefixes", "index_source"]

MAX_BYTES = 2_000_000
"""Larger files are generated; they are counted as not checked."""

_IMPORT_FUNCS = frozenset({"import_module", "__import__", "find_spec", "resolve_name"})
_SETTERS = frozenset({"setattr", "delattr"})


def index_source(path: str, source: bytes | str, packages: tuple[str, ...]) -> ds.FileIndex:
    """Index one file. Never raises for bad input: it is recorded as not checked."""
    result = ds.FileIndex(path)
    if len(source) > MAX_BYTES:
        result.not_checked.append(ds.NotChecked(path, 0, ds.TOO_LARGE, f"{len(source)} bytes"))
        return result
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    result.lines = raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
    try:
        tree = parse_quietly(raw)
    except (SyntaxError, ValueError, MemoryError) as exc:
        line = getattr(exc, "lineno", 0) or 0
        result.not_checked.append(ds.NotChecked(path, line, ds.SYNTAX, type(exc).__name__))
        return result
    except RecursionError:
        result.not_checked.append(ds.NotChecked(path, 0, ds.SYNTAX, "nesting too deep"))
        return result
    visitor = _Visitor(result, packages, module_name(path) or "", path.endswith("__init__.py"))
    # A "--flag" string is only taken for an upstream flag where the file
    # itself names the upstream (a command line that runs it, an import):
    # elsewhere "--config" is far more likely the downstream's own tool.
    visitor.flags = any(p.encode() in raw for p in packages)
    try:
        visitor.visit(tree)
    except RecursionError:
        return _too_deep(path, result.lines)
    return result


def _too_deep(path: str, lines: int) -> ds.FileIndex:
    result = ds.FileIndex(path, lines)
    result.not_checked.append(ds.NotChecked(path, 0, ds.SYNTAX, "nesting too deep"))
    return result


class _Visitor(ScopeVisitor):
    """Adds calls and string-named attributes to the scope-aware visitor."""

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        shape = _shape(node)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and dotted_name(func.value.func) == "super"
            and self.classes
            and self.in_method[-1]
        ):
            self.classes[-1].super_calls.append(ds.SuperCall(func.attr, node.lineno, *shape))
            for arg in [*node.args, *node.keywords]:
                self.visit(arg)
            return
        name = dotted_name(func)
        self.special_call(node, name, name.rpartition(".")[2])
        found = self.chain(func)
        if found is not None:
            self.out.calls.append(
                ds.CallSite(
                    found[0], self.path, node.lineno, *shape, instance=found[2], guard=self.guard()
                )
            )
        self.generic_visit(node)

    def special_call(self, node: ast.Call, name: str, last: str) -> None:
        """Builtins and test helpers that reach upstream names through strings."""
        args = node.args
        first = string_of(args[0]) if args else None
        by_name = name.endswith("patch.object") or (last in _SETTERS and name != last)
        if name in ("getattr", "setattr", "delattr") or by_name:
            self.attribute_by_name(node, name)
        elif last == "patch":
            if first is not None and self.upstream(first):
                self.patch(first, node.lineno, "patch")
        elif last in _IMPORT_FUNCS:
            if first is not None and self.upstream(first):
                self.ref(first, node.lineno, ds.STRING)
        elif last in ("add_argument", "addoption"):
            self.out.own_flags.extend(
                v for v in (string_of(a) for a in args) if v is not None and v.startswith("--")
            )

    def attribute_by_name(self, node: ast.Call, name: str) -> None:
        """``getattr``/``setattr``/``patch.object``/``monkeypatch.setattr`` on an upstream object.

        ``monkeypatch.setattr("pkg.mod.name", value)`` names its target as a string.
        """
        args = node.args
        first = string_of(args[0]) if args else None
        if first is not None:
            if self.upstream(first) and name != "getattr":
                self.patch(first, node.lineno, "patch")
            return
        if len(args) < 2 or not isinstance(args[0], ast.Name | ast.Attribute):
            return
        found = self.chain(args[0])
        if found is None or (found[2] and name != "getattr"):
            return  # setting an attribute of an instance patches nothing upstream
        attr = string_of(args[1])
        reading = name == "getattr"
        if attr is None:
            reason = ds.DYNAMIC_GETATTR if reading else ds.DYNAMIC_SETATTR
            self.not_checked(node.lineno, reason, found[0])
        elif reading:
            extra = (ds.HAS_DEFAULT,) if len(args) > 2 else ()
            self.ref(f"{found[0]}.{attr}", node.lineno, ds.GETATTR, found[1], extra)
        else:
            how = "setattr" if name in _SETTERS else "patch.object"
            self.patch(f"{found[0]}.{attr}", node.lineno, how)


def _shape(node: ast.Call) -> tuple[int, tuple[str, ...], bool, bool]:
    """Positional count, keyword names, ``*args`` present, ``**kwargs`` present."""
    positional = sum(1 for a in node.args if not isinstance(a, ast.Starred))
    keywords = tuple(k.arg for k in node.keywords if k.arg is not None)
    star_args = any(isinstance(a, ast.Starred) for a in node.args)
    return positional, keywords, star_args, any(k.arg is None for k in node.keywords)
