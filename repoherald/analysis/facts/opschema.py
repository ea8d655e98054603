"""Custom operators a native extension registers, and the changes that break their callers.

A kernel library's public surface is partly written in C++: the schema
strings of its PyTorch custom operators (``m.def("grouped_topk(Tensor scores,
int n_group) -> Tensor")`` inside ``TORCH_LIBRARY``), and the names its
pybind11 or TVM-FFI modules bind (``m.def("fwd", &mha_fwd)``). Callers reach
them as ``torch.ops.<lib>.<name>`` or ``module.<name>``: an operator that
disappears or gains a required argument breaks every caller, exactly like a
removed Python function, but no Python file of the commit shows it.

Only what can be read without compiling is read: the string literals right
after a ``.def(`` (adjacent literals concatenated, as C++ does). A schema
(``name(args) -> ret``) gives the arguments, so an added argument with a
default is told from a required one; a bare name gives only presence. The
operators of all changed files of a commit are pooled before comparing, so
one moved from one registration file to another is not counted as removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from repoherald.models import FileChange, FileStatus, OpChange

NATIVE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".mm")
MAX_NATIVE_BYTES = 1_000_000
"""Larger native files are not scanned (generated tables, amalgamations)."""

_DEF = re.compile(rb"\.\s*def(?:_static)?\s*\(\s*((?:\"(?:[^\"\\\n]|\\.)*\"\s*)+)")
_LITERAL = re.compile(rb'"((?:[^"\\\n]|\\.)*)"')
_NAME = re.compile(r"\s*([A-Za-z_][\w.]*(?:::[A-Za-z_][\w.]*)*)")


def registered_ops(source: bytes) -> dict[str, str]:
    """Operator name -> its schema (``""`` for a name bound without one), from ``.def(`` calls.

    The name is the last ``::``-part (``my_ops::rms_norm`` -> ``rms_norm``):
    callers see the operator under its library's namespace either way.
    """
    if b"def" not in source:
        return {}
    out: dict[str, str] = {}
    for m in _DEF.finditer(source):
        text = b"".join(_LITERAL.findall(m.group(1))).decode("utf-8", "replace")
        name = _NAME.match(text)
        if name is None:
            continue
        rest = text[name.end() :].lstrip()
        out[name.group(1).split("::")[-1]] = text.strip() if rest.startswith("(") else ""
    return out


def schema_arguments(schema: str) -> dict[str, bool] | None:
    """Argument name -> has a default, for ``name(Type a, Type b=1, *, Type c=None) -> R``.

    None when the argument list cannot be split (unbalanced brackets).
    """
    start = schema.find("(")
    depth, end = 0, -1
    for i in range(start, len(schema)):
        if schema[i] in "([":
            depth += 1
        elif schema[i] in ")]":
            depth -= 1
            if depth == 0:
                end = i
                break
    if start < 0 or end < 0:
        return None
    args: dict[str, bool] = {}
    for part in _split_top(schema[start + 1 : end]):
        part = part.strip()
        if not part or part == "*":
            continue
        declared, _, default = part.partition("=")
        words = declared.split()
        if len(words) < 2:
            return None  # a type without a name: not a schema we can compare
        args[words[-1]] = bool(default.strip())
    return args


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and quotes (``int[2] x, str s=',', (A, B) y``)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    quote = ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def breaks_callers(old: str, new: str) -> bool:
    """True when a call written for schema ``old`` can fail against ``new``.

    An argument disappears (or is renamed), or a new one has no default.
    Unreadable schemas are not counted: the change is shown by other facts.
    """
    before, after = schema_arguments(old), schema_arguments(new)
    if before is None or after is None:
        return False
    return arguments_break(before, after)


def arguments_break(before: dict[str, bool], after: dict[str, bool]) -> bool:
    """True when an argument (name -> has a default) disappears or a new one is required.

    The same test for a Python signature and an operator schema: a call that
    passed every argument ``before`` needed can only fail against ``after``
    this way.
    """
    gone = set(before) - set(after)
    required = {name for name, has_default in after.items() if not has_default} - set(before)
    return bool(gone or required)


def is_native(path: str) -> bool:
    """A C, C++, CUDA or Objective-C++ source or header."""
    return path.lower().endswith(NATIVE_SUFFIXES)


def op_changes(
    files: Iterable[FileChange],
    read: Callable[[str], bytes | None],
    public: Callable[[str], bool],
) -> list[OpChange]:
    """Operators the commit's native files stop registering or re-declare incompatibly.

    ``public`` says whether a path ships to users (not tests, examples or
    tools); ``read`` gives a blob's bytes, None when it cannot.
    """
    old: dict[str, tuple[str, str]] = {}
    new: dict[str, tuple[str, str]] = {}
    for f in files:
        if f.binary or f.is_submodule or not is_native(f.path):
            continue
        if (f.size or 0) > MAX_NATIVE_BYTES:
            continue
        before_path = f.old_path or f.path
        sides = []
        if f.old_blob and f.status is not FileStatus.ADDED and public(before_path):
            sides.append((old, before_path, f.old_blob))
        if f.new_blob and f.status is not FileStatus.DELETED and public(f.path):
            sides.append((new, f.path, f.new_blob))
        texts = [read(oid) for _, _, oid in sides]
        if any(t is None for t in texts):
            continue  # one side unreadable: its operators would look removed or added
        for (found, path, _), text in zip(sides, texts, strict=True):
            assert text is not None
            for name, schema in registered_ops(text).items():
                found.setdefault(name, (path, schema))
    out = []
    for name in sorted(old):
        path, schema = old[name]
        if name not in new:
            out.append(OpChange(name, path, "removed", schema))
            continue
        new_schema = new[name][1]
        if schema and new_schema and schema != new_schema and breaks_callers(schema, new_schema):
            out.append(OpChange(name, new[name][0], "signature", schema, new_schema))
    return out
