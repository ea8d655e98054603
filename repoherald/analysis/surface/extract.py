"""What one version of one Python module offers to code that depends on it.

:func:`extract` reads a parsed module into a :class:`ModuleSurface`: the names
an ``import`` can reach (definitions, constants and re-exports from the same
project), the methods of its classes, the fields of its config classes, the
environment variables it reads and the command-line flags it defines.
:mod:`repoherald.analysis.surface.change` compares two such extracts.

Only ``ast`` is used. A read of ``os.environ`` or a call of ``add_argument``
is recognised by the shape of the syntax tree, never by matching source text,
so formatting, comments and strings that merely mention them do not count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from repoherald.analysis.pyapi.parse import dotted_name, module_statements
from repoherald.analysis.pyapi.signature import CLASS, STATIC, Signature, from_arguments
from repoherald.analysis.surface import envvars

FUNCTION = "function"
CLASS_KIND = "class"
VARIABLE = "variable"
IMPORT = "import"

_NON_PUBLIC_TOP = frozenset(
    {"tests", "test", "testing_utils", "benchmarks", "benchmark", "examples", "docs", "scripts"}
)
_NON_PUBLIC_FILES = frozenset({"setup", "conftest", "noxfile", "__main__"})


def module_name(path: str) -> str | None:
    """``src/pkg/a/b.py`` -> ``pkg.a.b``; ``pkg/__init__.py`` -> ``pkg``; None if not a .py."""
    if not path.endswith(".py") or path.endswith("/.py") or path == ".py":
        return None
    parts = [part for part in path[:-3].split("/") if part and part != "."]
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


def is_library_module(path: str) -> bool:
    """Part of the installed library: not tests, benchmarks, examples, docs, scripts or CI."""
    module = module_name(path)
    if module is None:
        return False
    if any(part.startswith(".") for part in path.split("/")):
        return False  # .github/, .ci/: hidden directories are never the library
    parts = module.split(".")
    if parts[0] in _NON_PUBLIC_TOP or "tests" in parts:
        return False
    return parts[-1] not in _NON_PUBLIC_FILES and not parts[-1].startswith("test_")


def is_public_module(path: str) -> bool:
    """Importable by users: a library module with no ``_``-prefixed component."""
    if not is_library_module(path):
        return False
    return not any(part.startswith("_") for part in (module_name(path) or "").split("."))


@dataclass(frozen=True, slots=True)
class Method:
    signature: Signature
    line: int
    is_property: bool = False


@dataclass(frozen=True, slots=True)
class Field:
    """A config-class attribute; ``default`` is source text, None when required."""

    default: str | None
    line: int
    annotation: str


@dataclass(frozen=True, slots=True)
class ClassInfo:
    bases: tuple[str, ...]
    """Base classes as dotted names, resolved through the module's imports when possible."""
    methods: dict[str, Method]
    fields: dict[str, Field] | None
    """None unless the class is a dataclass or a pydantic model."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One module-level name."""

    kind: str
    line: int
    signature: Signature | None = None
    target: str = ""
    """For re-exports: the absolute dotted name imported."""
    cls: ClassInfo | None = None


@dataclass(frozen=True, slots=True)
class EnvRead:
    default: str | None
    """Source text of the default, None when the read has none (``os.environ["X"]``)."""
    line: int
    registry: bool = False
    """Read through a module-level registry dict, the project's one list of variables."""


@dataclass(frozen=True, slots=True)
class FlagDef:
    default: str
    """Source text of the default; empty when ``**kwargs`` hides it."""
    line: int
    dest: str
    help: str


@dataclass(slots=True)
class ModuleSurface:
    module: str
    path: str
    names: dict[str, Entry] = field(default_factory=dict)
    env: dict[str, list[EnvRead]] = field(default_factory=dict)
    flags: dict[str, FlagDef] = field(default_factory=dict)
    dynamic: bool = False
    """The module defines ``__getattr__``: a missing name may still be served."""


ENV_MARKERS = (b"environ", b"getenv")
"""Bytes every environment read contains; a module without them is not walked for reads."""
FLAG_MARKERS = (b"add_argument", b"option(", b"Option(")
"""Bytes every flag definition contains."""


def extract(
    tree: ast.Module,
    module: str,
    path: str,
    is_package: bool,
    *,
    env: bool = True,
    flags: bool = True,
) -> ModuleSurface:
    """Read the surface of one parsed module.

    ``env``/``flags`` False skip the walk over every node that finds
    environment reads and flag definitions; callers pass False when the
    source lacks :data:`ENV_MARKERS` / :data:`FLAG_MARKERS`, so the result is
    the same, only cheaper.
    """
    surface = ModuleSurface(module, path)
    package = module if is_package else module.rpartition(".")[0]
    imports: dict[str, str] = {}
    for stmt in module_statements(tree.body):
        _add_statement(surface, stmt, package, imports)
    for name, entry in list(surface.names.items()):
        if entry.cls is not None:
            bases = tuple(_resolve_base(b, imports, module, surface.names) for b in entry.cls.bases)
            surface.names[name] = Entry(
                entry.kind, entry.line, cls=ClassInfo(bases, entry.cls.methods, entry.cls.fields)
            )
    surface.dynamic = "__getattr__" in surface.names
    if env or flags:
        _collect_settings(tree, surface, env, flags)
    return surface


def _add_statement(
    surface: ModuleSurface, stmt: ast.stmt, package: str, imports: dict[str, str]
) -> None:
    names = surface.names
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        names[stmt.name] = Entry(FUNCTION, stmt.lineno, signature=from_arguments(stmt.args))
    elif isinstance(stmt, ast.ClassDef):
        names[stmt.name] = Entry(CLASS_KIND, stmt.lineno, cls=_class_info(stmt))
    elif isinstance(stmt, ast.Import):
        for alias in stmt.names:
            local = alias.asname or alias.name.partition(".")[0]
            imports[local] = alias.name if alias.asname else local
    elif isinstance(stmt, ast.ImportFrom):
        base = _absolute(stmt, package)
        for alias in stmt.names:
            if alias.name == "*" or base is None:
                continue
            local = alias.asname or alias.name
            imports[local] = f"{base}.{alias.name}"
            # Only re-exports from the project itself are part of its surface;
            # ``from typing import Any`` is not something callers import from here.
            if base.partition(".")[0] == surface.module.partition(".")[0]:
                names[local] = Entry(IMPORT, stmt.lineno, target=f"{base}.{alias.name}")
    elif isinstance(stmt, ast.Assign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            return
        for target in targets:
            for node in _assigned_names(target):
                names[node] = Entry(VARIABLE, stmt.lineno)


def _assigned_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _assigned_names(elt)


def _absolute(stmt: ast.ImportFrom, package: str) -> str | None:
    """The absolute module of ``from X import …``; None when it climbs above the root."""
    if stmt.level == 0:
        return stmt.module
    parts = package.split(".") if package else []
    if stmt.level - 1 > len(parts) or (stmt.level - 1 == len(parts) and not stmt.module):
        return None
    base = parts[: len(parts) - (stmt.level - 1)]
    if stmt.module:
        base.append(stmt.module)
    return ".".join(base) or None


def _resolve_base(base: str, imports: dict[str, str], module: str, names: dict[str, Entry]) -> str:
    head, _, rest = base.partition(".")
    if head in imports:
        return imports[head] + (f".{rest}" if rest else "")
    if head in names and not rest:
        return f"{module}.{head}"
    return base


# -- classes ---------------------------------------------------------------------------


def _class_info(node: ast.ClassDef) -> ClassInfo:
    methods: dict[str, Method] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            deco = {dotted_name(d) for d in stmt.decorator_list}
            if "overload" in deco or "typing.overload" in deco:
                continue
            flavour = STATIC if "staticmethod" in deco else CLASS if "classmethod" in deco else ""
            prop = any(d.endswith((".setter", ".getter", ".deleter")) for d in deco) or bool(
                deco & {"property", "functools.cached_property", "cached_property"}
            )
            if prop and stmt.name in methods:
                continue  # the setter of a property does not replace its getter
            methods[stmt.name] = Method(from_arguments(stmt.args, flavour), stmt.lineno, prop)
    bases = tuple(dotted_name(b) for b in node.bases)
    return ClassInfo(bases, methods, _config_fields(node) if _is_config(node) else None)


def _is_config(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        name = dotted_name(deco.func if isinstance(deco, ast.Call) else deco)
        if name.rpartition(".")[2] in ("dataclass", "config", "define", "frozen"):
            return True
    return any(
        dotted_name(b).rpartition(".")[2] in ("BaseModel", "BaseSettings", "BaseConfig")
        for b in node.bases
    )


def _config_fields(node: ast.ClassDef) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        annotation = ast.unparse(stmt.annotation)
        if annotation.startswith(("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.")):
            continue
        name = stmt.target.id
        fields[name] = Field(_field_default(stmt.value), stmt.lineno, annotation)
    return fields


def _field_default(value: ast.expr | None) -> str | None:
    """``x: int = 3`` -> ``3``; ``field(default=3)``/``Field(3)`` -> ``3``; factories named."""
    if value is None:
        return None
    if isinstance(value, ast.Call) and dotted_name(value.func).rpartition(".")[2] in (
        "field",
        "Field",
    ):
        for kw in value.keywords:
            if kw.arg == "default":
                return ast.unparse(kw.value)
            if kw.arg == "default_factory":
                return f"{ast.unparse(kw.value)}()"
        if not value.args:
            return None  # ``field()`` without a default: the field is required
        first = value.args[0]  # pydantic's ``Field(default, …)``; ``...`` means required
        return None if _is_ellipsis(first) else ast.unparse(first)
    return ast.unparse(value)


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


# -- environment variables -------------------------------------------------------------


def _collect_settings(tree: ast.Module, surface: ModuleSurface, env: bool, flags: bool) -> None:
    """Environment reads and flag definitions, in one walk over the module."""
    skip = _collect_registry(tree, surface) if env else set()
    for node in ast.walk(tree):
        if flags and isinstance(node, ast.Call):
            _flag(node, surface)
        read = envvars.env_read(node) if env and id(node) not in skip else None
        if read is not None and read.form in envvars.SURFACE_FORMS:
            default = read.default_text() if isinstance(node, ast.Call) else None
            surface.env.setdefault(read.name, []).append(EnvRead(default, read.line))


def _collect_registry(tree: ast.Module, surface: ModuleSurface) -> set[int]:
    """Entries of module-level ``{"VAR": <reads os.environ>}`` dicts; returns their nodes."""
    registry_nodes: set[int] = set()
    for stmt in module_statements(tree.body):
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if not isinstance(value, ast.Dict):
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            if key is None or not _is_str(key):
                continue
            found = envvars.registry_entry(_str(key), item)
            if found is not None:
                surface.env.setdefault(_str(key), []).append(
                    EnvRead(found, key.lineno, registry=True)
                )
                registry_nodes.update(id(n) for n in ast.walk(item))
    return registry_nodes


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _str(node: ast.AST) -> str:
    assert isinstance(node, ast.Constant) and isinstance(node.value, str)
    return node.value


# -- command-line flags ---------------------------------------------------------------

_IMPLIED_DEFAULTS = {"store_true": "False", "store_false": "True"}


def _flag(node: ast.Call, surface: ModuleSurface) -> None:
    """Record ``parser.add_argument("--flag", default=…)`` (and click/typer ``option``)."""
    func = node.func
    name = (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else ""
    )
    if name not in ("add_argument", "option", "Option"):
        return
    options = [_str(a) for a in node.args if _is_str(a) and _str(a).startswith("-")]
    longs = [o for o in options if o.startswith("--")] or options
    if not longs:
        return
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    if "default" in kw:
        default = ast.unparse(kw["default"])
    elif any(k.arg is None for k in node.keywords):
        default = ""  # ``**kwargs`` may carry it: unknown, never compared
    else:
        action = kw.get("action")
        implied = _str(action) if action is not None and _is_str(action) else ""
        default = _IMPLIED_DEFAULTS.get(implied, "None")
    dest = _str(kw["dest"]) if "dest" in kw and _is_str(kw["dest"]) else ""
    help_text = _str(kw["help"]) if "help" in kw and _is_str(kw["help"]) else ""
    for flag in longs:
        surface.flags.setdefault(flag, FlagDef(default, node.lineno, dest, help_text))
