"""The scope-aware half of the downstream visitor: what each name in a file refers to.

:class:`ScopeVisitor` keeps a stack of scopes in which imports bind names to
absolute dotted targets, assignments alias or shadow them and parameters
shadow them, and resolves every expression that starts from a bound upstream
name to the full dotted chain it reaches. It records imports, attribute
references, class definitions, assignments that patch upstream names, and
string literals that may name an upstream env var or flag.
:mod:`repoherald.analysis.downstream.visit` adds calls on top.
Resolution is deliberately conservative: a name is only followed when its
binding is certain, so what the index records is what the code really names.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from repoherald.analysis.downstream import index as ds
from repoherald.analysis.pyapi.signature import CLASS, STATIC, from_arguments

_INSTANCE = "()"
"""Suffix of a binding that holds an instance of the upstream class it names."""
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_LEAVES = (ast.Name, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
"""Node types with nothing below them worth a visit (a bare Name records nothing)."""
_FLAG_TOKEN = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*")


def env_prefixes(packages: tuple[str, ...]) -> tuple[str, ...]:
    """``("vllm",)`` -> ``("VLLM_",)``: the variables an upstream package owns.

    Only these are recorded; an upstream that stops reading a variable it
    does not own (``LOCAL_RANK``) changes nothing for the downstream.
    """
    return tuple(p.upper() + "_" for p in packages)


@dataclass(slots=True)
class _Scope:
    names: dict[str, str | None] = field(default_factory=dict)
    """Local name -> absolute dotted target, or None where a local value shadows it."""
    is_class: bool = False


@dataclass(slots=True)
class _ClassFrame:
    qualname: str
    bases: tuple[str, ...]
    line: int
    methods: list[ds.MethodDef] = field(default_factory=list)
    super_calls: list[ds.SuperCall] = field(default_factory=list)


class ScopeVisitor(ast.NodeVisitor):
    """Names, scopes, imports, definitions, assignments, attributes and strings."""

    def __init__(
        self, out: ds.FileIndex, packages: tuple[str, ...], module: str, is_package: bool
    ) -> None:
        self.out = out
        self.path = out.path
        self.packages = packages
        self.env_prefixes = env_prefixes(packages)
        self.flags = True
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.scopes: list[_Scope] = [_Scope()]
        self.guards: list[tuple[str, ...]] = []
        self.classes: list[_ClassFrame] = []
        self.in_method: list[bool] = [False]
        self._handlers: dict[type[ast.AST], Callable[[Any], None] | None] = {}

    # -- dispatch ----------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> None:
        """``NodeVisitor.visit`` with the handler looked up once per node type.

        Names, contexts and operators are leaves with nothing to record, so
        they are not walked at all: on a large checkout this halves the time
        the walk takes.
        """
        kind = type(node)
        try:
            handler = self._handlers[kind]
        except KeyError:
            handler = self._handlers[kind] = self._handler(kind)
        if handler is not None:
            handler(node)

    def _handler(self, kind: type[ast.AST]) -> Callable[[Any], None] | None:
        if issubclass(kind, _LEAVES):
            return None
        found: Callable[[Any], None] | None = getattr(self, f"visit_{kind.__name__}", None)
        return found or self.generic_visit

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                self.visit(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)

    # -- names ---------------------------------------------------------------------------

    def guard(self) -> tuple[str, ...]:
        return tuple(sorted({g for gs in self.guards for g in gs}))

    def upstream(self, dotted: str) -> bool:
        return dotted.partition(".")[0] in self.packages

    def bind(self, name: str, target: str | None) -> None:
        self.scopes[-1].names[name] = target

    def lookup(self, name: str) -> str | None:
        for i, scope in enumerate(reversed(self.scopes)):
            if scope.is_class and i > 0:
                continue  # class bodies are not visible from their methods
            if name in scope.names:
                return scope.names[name]
        return None

    def chain(self, node: ast.expr) -> tuple[str, str, bool] | None:
        """``(target, base, through_instance)`` for an upstream Name/Attribute chain.

        A name bound by ``x = up.Cls(...)`` is an instance: ``x.method`` then
        resolves to ``up.Cls.method`` reached through an instance, and ``x``
        alone names nothing.
        """
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call) and attrs:  # up.Cls(...).method
            made = self.chain(node.func)
            base = made[0] + _INSTANCE if made is not None and not made[2] else None
        elif isinstance(node, ast.Name):
            base = self.lookup(node.id)
        else:
            return None
        if base is None or not self.upstream(base):
            return None
        instance = base.endswith(_INSTANCE)
        if instance:
            if not attrs:
                return None
            base = base[: -len(_INSTANCE)]
        return ".".join([base, *reversed(attrs)]), base, instance

    def any_chain(self, node: ast.expr) -> str | None:
        """The dotted name an expression refers to, upstream or the downstream's own."""
        attrs: list[str] = []
        if isinstance(node, ast.Subscript):
            node = node.value  # Generic[T], Base[int]
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.lookup(node.id) or (
            f"{self.module}.{node.id}" if self.module and node.id not in _BUILTIN_BASES else node.id
        )
        return ".".join([base, *reversed(attrs)])

    # -- imports -------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.bind(alias.asname, alias.name)
            else:
                head = alias.name.partition(".")[0]
                self.bind(head, head)
            if self.upstream(alias.name):
                self.ref(alias.name, node.lineno, ds.IMPORT)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self.absolute(node)
        if base is None:
            return
        for alias in node.names:
            if alias.name == "*":
                if self.upstream(base):
                    self.ref(base, node.lineno, ds.IMPORT)
                    self.not_checked(node.lineno, ds.STAR_IMPORT, base)
                continue
            target = f"{base}.{alias.name}"
            self.bind(alias.asname or alias.name, target)
            if self.upstream(target):
                self.ref(target, node.lineno, ds.IMPORT)

    def absolute(self, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return node.module
        parts = self.package.split(".") if self.package else []
        if node.level - 1 > len(parts):
            return None
        base = parts[: len(parts) - (node.level - 1)]
        if node.module:
            base.append(node.module)
        return ".".join(base) or None

    # -- records ----------------------------------------------------------------------------

    def ref(
        self, target: str, line: int, how: str, base: str = "", extra: tuple[str, ...] = ()
    ) -> None:
        guard = tuple(sorted({*self.guard(), *extra}))
        self.out.refs.append(ds.Ref(target, self.path, line, how, base, guard))

    def patch(self, target: str, line: int, how: str) -> None:
        self.out.patches.append(ds.Patch(target, self.path, line, how, self.guard()))

    def not_checked(self, line: int, reason: str, detail: str) -> None:
        self.out.not_checked.append(ds.NotChecked(self.path, line, reason, detail))

    # -- scopes and definitions -----------------------------------------------------------------

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        is_method = bool(self.classes) and self.scopes[-1].is_class
        if is_method:
            self.record_method(node)
        self.bind(node.name, None)
        scope = _Scope({a.arg: None for a in _all_args(node.args)})
        self.scopes.append(scope)
        self.in_method.append(is_method)
        for stmt in node.body:
            self.visit(stmt)
        self.in_method.pop()
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def record_method(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        names = {_deco_name(d) for d in node.decorator_list}
        flavour = STATIC if "staticmethod" in names else CLASS if "classmethod" in names else ""
        sig = from_arguments(node.args, flavour).text
        self.classes[-1].methods.append(ds.MethodDef(node.name, sig, node.lineno))

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self.scopes.append(_Scope({a.arg: None for a in _all_args(node.args)}))
        self.visit(node.body)
        self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expr)
        bases = tuple(b for b in (self.any_chain(e) for e in node.bases) if b)
        outer = self.classes[-1].qualname if self.classes else self.module
        frame = _ClassFrame(f"{outer}.{node.name}" if outer else node.name, bases, node.lineno)
        self.bind(node.name, None)
        self.classes.append(frame)
        self.scopes.append(_Scope(is_class=True))
        self.in_method.append(False)
        for stmt in node.body:
            self.visit(stmt)
        self.in_method.pop()
        self.scopes.pop()
        self.classes.pop()
        self.out.classes.append(
            ds.LocalClass(
                frame.qualname,
                self.path,
                frame.line,
                frame.bases,
                tuple(frame.methods),
                tuple(frame.super_calls),
            )
        )

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        caught: set[str] = set()
        for handler in node.handlers:
            caught.update(_caught(handler.type))
        self.guards.append(tuple(sorted(caught)))
        for stmt in node.body:
            self.visit(stmt)
        self.guards.pop()
        for part in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(part)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        checking = dotted_name(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        self.guards.append((ds.TYPE_CHECKING,) if checking else ())
        for stmt in node.body:
            self.visit(stmt)
        self.guards.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    # -- assignments: aliases, shadows and patches ----------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        alias = self.alias_of(node.value)
        for target in node.targets:
            self.assign(target, alias)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.annotation)
        self.assign(node.target, self.alias_of(node.value) if node.value is not None else None)

    def alias_of(self, value: ast.expr) -> str | None:
        """What a name assigned ``value`` is bound to: an upstream name, an instance, or nothing."""
        if isinstance(value, ast.Name | ast.Attribute):
            found = self.chain(value)
            return found[0] if found is not None and not found[2] else None
        if isinstance(value, ast.Call):
            found = self.chain(value.func)
            return found[0] + _INSTANCE if found is not None and not found[2] else None
        return None

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self.assign(node.target, None)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.assign(node.target, None)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_withitem(self, node: ast.withitem) -> None:
        self.visit(node.context_expr)
        if node.optional_vars is not None:
            self.assign(node.optional_vars, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.assign(node.target, None)

    def assign(self, target: ast.expr, alias: str | None) -> None:
        if isinstance(target, ast.Name):
            if alias is not None or self.lookup(target.id) is not None:
                self.bind(target.id, alias)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.assign(elt, None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None)
        elif isinstance(target, ast.Attribute):
            found = self.chain(target)
            if found is not None and not found[2]:
                self.patch(found[0], target.lineno, "assign")
            elif found is None:
                self.visit(target.value)
        else:
            self.visit(target)

    # -- expressions ------------------------------------------------------------------------------

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or bare string: prose, not a use
        self.visit(node.value)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        found = self.chain(node)
        if found is None:
            self.visit(node.value)
        elif isinstance(node.ctx, ast.Load):
            self.ref(found[0], node.lineno, ds.ATTR, found[1])
        elif not found[2]:  # setting an attribute of an instance patches nothing upstream
            self.patch(
                found[0], node.lineno, "delete" if isinstance(node.ctx, ast.Del) else "assign"
            )
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if found is not None and isinstance(root, ast.Call):
            self.visit(root)  # ``up.Cls(args).method``: the constructor call is a use too

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if not isinstance(value, str) or len(value) > 500 or "\n" in value:
            return
        if value.startswith(self.env_prefixes) and _ENV_NAME.fullmatch(value):
            self.out.strings.append(ds.StringUse(value, self.path, node.lineno, "env"))
        if self.flags and "--" in value:
            for token in value.split():
                flag = _FLAG_TOKEN.match(token)
                name = flag.group(0).rstrip(".-") if flag is not None else ""
                if len(name) > 2:
                    self.out.strings.append(ds.StringUse(name, self.path, node.lineno, "flag"))


_BUILTIN_BASES = frozenset({"object", "Exception", "BaseException", "type", "dict", "list"})


def string_of(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _all_args(args: ast.arguments) -> list[ast.arg]:
    out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    out.extend(a for a in (args.vararg, args.kwarg) if a is not None)
    return out


def dotted_name(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _deco_name(node: ast.expr) -> str:
    return dotted_name(node.func if isinstance(node, ast.Call) else node)


def _caught(node: ast.expr | None) -> set[str]:
    """Exception names an ``except`` clause catches; ``*`` for a bare except."""
    if node is None:
        return {"*"}
    if isinstance(node, ast.Tuple):
        return {n for elt in node.elts for n in _caught(elt)}
    name = dotted_name(node).rpartition(".")[2]
    return {name} if name else set()
