"""Parsing Python source, and walking its module-level statements: the one engine under both APIs.

The public API of a blob (:mod:`repoherald.analysis.pyapi.api`, what the
report lists) and the surface of a module
(:mod:`repoherald.analysis.surface.extract`, what a downstream can import)
are two readings of the same syntax tree. Both parse through
:func:`parse_quietly`, treat :data:`PARSE_ERRORS` as "not parsed", and walk
the statements :func:`module_statements` yields, so the two can never
disagree about which definitions a module makes.
"""

from __future__ import annotations

import ast
import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)
"""What parsing hostile input can raise on CPython 3.11.

``SyntaxError`` covers bad syntax, undecodable bytes, unknown coding cookies and
NUL bytes; ``ValueError`` is what older releases raise for NUL bytes;
``RecursionError`` comes from deep nesting during AST construction *or* later
in ``ast.unparse``; ``MemoryError`` is how 3.11's parser reports its own stack
overflow (e.g. ten thousand unary minuses), not a real out-of-memory condition.
"""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause cyclic garbage collection while a syntax tree is built and read.

    An AST is hundreds of thousands of new container objects, none of them
    garbage; the collections their allocation triggers, each walking the
    whole tree, cost about as much as the parse. Reference counting still
    frees the tree when it is dropped. Nested pauses are harmless.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def parse_quietly(source: bytes | str) -> ast.Module:
    """``ast.parse`` without the tokenizer's warnings.

    Code like ``1if x else 2`` or ``"\\d"`` is valid but makes the parser
    warn; over thousands of third-party files that would flood stderr, and
    under ``-W error`` it would turn valid files into "unparseable" ones.
    (``warnings.catch_warnings`` swaps process-global state, so concurrent
    callers in other threads may briefly lose their own filters.) Garbage
    collection is paused meanwhile (see :func:`gc_paused`).
    """
    with gc_paused(), warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source)


def module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Yield module-level statements in source order, descending into if/try.

    Iterative on purpose: a long ``elif`` chain nests arbitrarily deep without
    any indentation, so recursion could hit the interpreter's limit.
    """
    stack: list[ast.stmt] = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        nested: list[ast.stmt] = []
        if isinstance(stmt, ast.If):
            nested = [*stmt.body, *stmt.orelse]
        elif isinstance(stmt, ast.Try | ast.TryStar):
            nested = [*stmt.body]
            for handler in stmt.handlers:
                nested.extend(handler.body)
            nested.extend(stmt.orelse)
            nested.extend(stmt.finalbody)
        stack.extend(reversed(nested))


def dotted_name(node: ast.expr) -> str:
    """``a.b.c`` for a Name/Attribute chain (subscripts stripped), else its source."""
    if isinstance(node, ast.Subscript):
        node = node.value
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ast.unparse(node)
