"""Environment variables a project reads, and the ones a commit removes or re-defaults.

An environment variable is part of a project's compatibility surface: a
deployment sets it, and when the project stops reading it or reads it with
another default, the deployment behaves differently without any error.
The rubric calls both high.

This module is the one detector of environment reads. :func:`env_read`
recognises a read in a syntax tree (``os.getenv("X", "0")``,
``os.environ.get("X")``, ``environ.setdefault``, ``environ.pop``,
``os.environ["X"]``, ``"X" in os.environ``) and :func:`registry_entry` an
entry of the registry style of vLLM and its plugins (``"VLLM_X": lambda: …``
in ``envs.py``). Two readers choose the forms they count: the commit's facts
(:func:`reads`, :func:`changes`) and the module surface a downstream can trip
over (:mod:`repoherald.analysis.surface.extract`). For the facts a removal
counts only in a registry file (where the project declares its variables), so
a read that merely moves to an unchanged module is not taken for a removal;
a default counts wherever the read is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from repoherald.analysis.pyapi.parse import (
    PARSE_ERRORS,
    dotted_name,
    module_statements,
    parse_quietly,
)

GET = "get"
"""``os.getenv("X", d)`` and ``os.environ.get("X", d)``."""
SETDEFAULT = "setdefault"
POP = "pop"
ITEM = "item"
"""``os.environ["X"]`` read."""
ITEM_WRITE = "item_write"
"""``os.environ["X"] = …`` or ``del os.environ["X"]``."""
MEMBER = "member"
"""``"X" in os.environ``."""

_CALLS = {
    "os.getenv": GET,
    "getenv": GET,
    "os.environ.get": GET,
    "environ.get": GET,
    "os.environ.setdefault": SETDEFAULT,
    "environ.setdefault": SETDEFAULT,
    "os.environ.pop": POP,
}
FACT_FORMS = frozenset({GET, SETDEFAULT, ITEM, ITEM_WRITE})
"""What the facts count as a read (a name the project's own code gives the variable)."""
SURFACE_FORMS = frozenset({GET, POP, ITEM, MEMBER})
"""What the module surface counts as a read a downstream's setting reaches."""

_NAME = re.compile(r"[A-Z][A-Z0-9_]{2,}")
REGISTRY_FILES = frozenset({"envs.py", "env.py", "environment.py", "env_vars.py", "envvars.py"})
"""Files where a project declares the variables it reads."""
SYSTEM_PREFIXES = (
    "CUDA_", "HIP_", "ROCM_", "NCCL_", "OMP_", "MKL_", "PYTHON", "PATH", "HOME", "USER",
    "TMP", "TEMP", "LD_", "HF_", "TRANSFORMERS_", "TORCH_", "PYTORCH_", "MASTER_", "RANK",
    "WORLD_SIZE", "LOCAL_", "XDG_", "CI", "GITHUB_", "TOKENIZERS_", "TRITON_",
)  # fmt: skip
"""Variables of the platform or of other tools: a project that stops reading them
changes nothing its own users configured for it."""


@dataclass(frozen=True, slots=True)
class Read:
    """One read of the environment found in a syntax tree."""

    name: str
    form: str
    default: ast.expr | None
    """The default's expression (positional, or ``default=``/``value=``); None without one."""
    line: int

    def default_text(self) -> str:
        """The default as canonical source (``ast.unparse``), ``"None"`` without one."""
        return ast.unparse(self.default) if self.default is not None else "None"


def env_read(node: ast.AST) -> Read | None:
    """The read of the environment ``node`` is, or None: the one place reads are recognised."""
    if isinstance(node, ast.Call):
        form = _CALLS.get(dotted_name(node.func))
        name = _literal(node.args[0]) if form is not None and node.args else None
        if form is None or name is None:
            return None
        default: ast.expr | None = node.args[1] if len(node.args) > 1 else None
        for kw in node.keywords:
            if kw.arg in ("default", "value"):
                default = kw.value
        return Read(name, form, default, node.lineno)
    if isinstance(node, ast.Subscript) and _is_environ(node.value):
        name = _literal(node.slice)
        if name is None:
            return None
        form = ITEM if isinstance(node.ctx, ast.Load) else ITEM_WRITE
        return Read(name, form, None, node.lineno)
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.In | ast.NotIn)
        and _is_environ(node.comparators[0])
    ):
        name = _literal(node.left)
        return Read(name, MEMBER, None, node.lineno) if name is not None else None
    return None


def registry_entry(key: str, value: ast.expr) -> str | None:
    """The default of registry entry ``key`` when ``value`` reads the environment, else None.

    A value counts when it reads ``os.environ`` in any form, or calls a helper
    with the key as first argument (vLLM's ``env_with_choices("VLLM_X", …)``).
    The default is that read's (or helper's) second argument; ``"None"`` when absent.
    """
    helper: str | None = None
    reads = False
    for node in ast.walk(value):
        read = env_read(node)
        if read is not None and read.form in SURFACE_FORMS:
            reads = True
            if isinstance(node, ast.Call) and read.name == key:
                return read.default_text()
            continue
        if isinstance(node, ast.Call) and node.args and _literal(node.args[0]) == key:
            helper = ast.unparse(node.args[1]) if len(node.args) > 1 else "None"
    if helper is not None:
        return helper
    return "None" if reads else None


def registry_names(tree: ast.Module) -> list[str]:
    """Keys of the module-level registry dicts of ``tree`` (see :func:`registry_entry`)."""
    names: list[str] = []
    for stmt in module_statements(tree.body):
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if not isinstance(value, ast.Dict):
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            name = _literal(key) if key is not None else None
            if name is not None and registry_entry(name, item) is not None:
                names.append(name)
    return names


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_environ(node: ast.expr) -> bool:
    return dotted_name(node) in ("os.environ", "environ")


@dataclass(frozen=True, slots=True)
class EnvChanges:
    """What a commit does to the variables the project reads."""

    removed: tuple[str, ...] = ()
    redefaulted: tuple[tuple[str, str, str], ...] = ()
    """(name, old default, new default)."""


def reads(text: str) -> dict[str, str | None]:
    """Variable -> the default its read gives (source text), None when it has none.

    Source that does not parse reads nothing. The default is kept as written
    (quotes and all), since it is quoted in the facts.
    """
    return _scan(text)[0]


def _scan(text: str) -> tuple[dict[str, str | None], list[str]]:
    """:func:`reads` of ``text`` and the names its registry dicts declare, in one parse."""
    try:
        tree = parse_quietly(text)
    except PARSE_ERRORS:
        return {}, []
    lines = text.encode("utf-8", "surrogateescape").splitlines(keepends=True)
    found: list[tuple[int, int, str, str | None]] = []
    for node in ast.walk(tree):
        read = env_read(node)
        if read is None or read.form not in FACT_FORMS or not _NAME.fullmatch(read.name):
            continue
        default = _segment(lines, read.default) if read.default is not None else None
        assert isinstance(node, ast.expr)
        found.append((node.lineno, node.col_offset, read.name, default))
    out: dict[str, str | None] = {}
    for _, _, name, default in sorted(found):
        if name not in out or out[name] is None:
            out[name] = default
    return out, registry_names(tree)


def _segment(lines: list[bytes], node: ast.expr) -> str | None:
    """The source text of ``node`` (``ast.get_source_segment`` over lines split once)."""
    end_line, end_col = node.end_lineno, node.end_col_offset
    if end_line is None or end_col is None:
        return None
    first, last = node.lineno - 1, end_line - 1
    if first == last:
        return lines[first][node.col_offset : end_col].decode("utf-8", "replace")
    parts = [lines[first][node.col_offset :], *lines[first + 1 : last], lines[last][:end_col]]
    return b"".join(parts).decode("utf-8", "replace")


def _own(name: str) -> bool:
    return not name.startswith(SYSTEM_PREFIXES)


def changes(old: Mapping[str, str], new: Mapping[str, str]) -> EnvChanges:
    """Compare the variables read in the old and new text of each changed file (by path)."""
    new_text = "\n".join(new.values())
    removed: list[str] = []
    redefaulted: list[tuple[str, str, str]] = []
    for path, before in old.items():
        after = new.get(path)
        if after is None or not ("environ" in before or "getenv" in before):
            continue
        (old_reads, declared_in), new_reads = _scan(before), reads(after)
        for name, default in old_reads.items():
            if not _own(name) or name not in new_reads:
                continue
            now = new_reads[name]
            if default is not None and now is not None and _norm(default) != _norm(now):
                redefaulted.append((name, default, now))
        if PurePosixPath(path).name in REGISTRY_FILES:
            declared = set(declared_in) | set(old_reads)
            for name in sorted(declared):
                if _own(name) and name not in new_text:
                    removed.append(name)
    return EnvChanges(tuple(dict.fromkeys(removed)), tuple(dict.fromkeys(redefaulted)))


def _norm(default: str) -> str:
    return re.sub(r"\s+", "", default).replace("'", '"')
