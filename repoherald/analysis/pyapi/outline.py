"""The public API of a new version of a Python file, parsing only the statements that changed.

Most commits that touch a Python file change the inside of a function or a
method, and parsing the whole file again to learn that its public API did
not move is most of what facts extraction costs. An :class:`Outline` keeps,
for a parsed blob, where each top-level statement starts, what it adds to
the API (:func:`repoherald.analysis.pyapi.api.api_events`), and for each
top-level ``def`` and ``class`` where the statements of its body start.

:func:`derive` takes the outline of one version and the bytes of another,
finds the changed lines, and parses only whole statements around them:

- a change inside the body of a top-level ``def`` or ``class`` (below its
  header) is parsed as those body statements under a stand-in header at the
  body's own indentation, and cannot change the API; one level down the
  same holds, so a change inside a method of a class is parsed as the
  statements of the method's body it touches, not as the whole method
  (a thousand lines, in the model runners of vLLM plugins);
- a change inside such a header (a new parameter, a base class) is parsed
  as the header over a stand-in body, and gives the definition's new events;
- lines inserted right before a top-level statement are parsed alone, as
  the statements they add;
- any other change is parsed as the top-level statements it touches, whose
  API events replace those of the statements they replaced.

Python's grammar is context-free at statement level: a run of complete
statements at one indentation parses on its own exactly when it parses in
place, given that the text around it is unchanged and ended (or began) a
complete statement in a version that parsed. So the whole new version
parses, and its API is the fold of the events, exactly as a whole parse
would find. Anything the argument does not cover returns None, never a
guess, and the caller parses the whole blob: a coding cookie, a BOM or ``\\r``
line ends (lines would not split the way the tokenizer splits them), a
snippet that does not parse, spills out of its body or starts at another
indentation. A method-level edit that fails is first retried as the whole
method, a body-level one as whole top-level statements.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace

from repoherald.analysis.facts.linediff import Hunk, diff_lines
from repoherald.analysis.pyapi.api import MAX_BYTES, ApiEvent, PublicApi, api_events, fold_api
from repoherald.analysis.pyapi.parse import PARSE_ERRORS, gc_paused, parse_quietly

_DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_WRAPPER = {ast.ClassDef: b"class _:\n", ast.FunctionDef: b"def _():\n"}
_WRAPPER[ast.AsyncFunctionDef] = b"async def _():\n"
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.M)
_BLANK = b" \t\f"


@dataclass(frozen=True, slots=True)
class Body:
    """The body of a top-level ``def``/``class``.

    Lines are counted from the definition's first line, so the body of an
    untouched definition is reused as it is when lines above it move.
    """

    wrapper: bytes
    """The stand-in header a run of its statements is parsed under."""
    end: int
    """Last line of the definition."""
    starts: tuple[int, ...]
    """First line (decorators included) of each statement of the body."""
    indent: bytes
    """The exact whitespace before the body's first statement."""
    inner: tuple[Body | None, ...] = ()
    """For a top-level definition, the body of each of its statements that is a
    ``def``/``class`` itself (a method), counted from that statement's first
    line; None for the others. Empty one level down: deeper bodies are not kept."""


@dataclass(frozen=True, slots=True)
class Statement:
    """A top-level statement: where it starts, what it adds to the API, its body."""

    start: int
    """First line, 0-based, decorators included."""
    events: tuple[ApiEvent, ...]
    body: Body | None
    """None unless it is a ``def``/``class`` whose body has lines of its own."""


@dataclass(frozen=True, slots=True)
class Outline:
    """The top-level statements of one parsed blob of ``lines`` lines."""

    lines: int
    statements: tuple[Statement, ...]

    def api(self) -> PublicApi:
        """The public API, folded from the statements' events."""
        return fold_api(e for s in self.statements for e in s.events)


def parse(source: bytes, max_bytes: int = MAX_BYTES) -> tuple[PublicApi, Outline | None] | None:
    """Parse ``source`` whole: its API, and its outline when edits to it can be derived.

    None when it cannot be parsed (as :func:`repoherald.analysis.pyapi.api.public_api`).
    """
    if len(source) > max_bytes:
        return None
    with gc_paused():
        # The tree must be gone before collection resumes: a collection that
        # finds it alive walks every node of it, which costs a tenth of the parse.
        return _parse_whole(source)


def _parse_whole(source: bytes) -> tuple[PublicApi, Outline | None] | None:
    """:func:`parse` itself; the syntax tree lives only in this frame."""
    try:
        tree = parse_quietly(source)
        if not _plain(source):
            return fold_api(api_events(tree.body)), None
        lines = source.splitlines(keepends=True)
        statements = tuple(_statement(node, lines, 0) for node in tree.body)
    except PARSE_ERRORS:  # also from ast.unparse of a signature nested too deep
        return None
    outline = Outline(len(lines), statements)
    return outline.api(), outline


def derive(
    known: Outline,
    known_source: bytes,
    other: bytes,
    max_bytes: int = MAX_BYTES,
    lines: tuple[list[bytes], list[bytes]] | None = None,
) -> Outline | None:
    """The outline of ``other`` from the outline of ``known_source``, or None.

    Parses only whole statements around the lines that differ (see the
    module docstring); None means "parse ``other`` whole". ``lines`` are
    both sources split by ``splitlines(keepends=True)``, from a caller that
    keeps them: the version derived now is the known one of the next edit.
    """
    if len(other) > max_bytes or not _plain(known_source) or not _plain(other):
        return None
    if lines is None:
        lines = known_source.splitlines(keepends=True), other.splitlines(keepends=True)
    old, new = lines
    if len(old) != known.lines:
        return None
    with gc_paused():
        try:
            return _reparse(known, diff_lines(old, new), new)
        except PARSE_ERRORS:  # a signature too deep to unparse: the whole parse decides
            return None


def _reparse(known: Outline, hunks: list[Hunk], new: list[bytes]) -> Outline | None:
    """Parse the edits; one that fails is retried a level up, the top level failing for good."""
    tops = [s.start for s in known.statements]
    depth: dict[int, int] = {}
    """Hunk -> how deep its edit may go: 0 top level, 1 a definition's body, 2 a method's."""
    done: dict[_Edit, _Parsed | None] = {}
    for _ in range(6):
        edits = _plan(known, tops, hunks, depth)
        parsed: list[_Parsed] = []
        for edit in edits:
            if edit not in done:  # a retry plans the edits that parsed the same again
                done[edit] = _parse_edit(known, edit, new)
            result = done[edit]
            if result is None:
                if edit.kind == _TOP:
                    return None
                level = 1 if edit.kind == _INNER else 0  # a gap is retried as top
                depth.update((k, min(depth.get(k, 2), level)) for k in edit.hunks)
                break
            parsed.append(result)
        else:
            return _assemble(known, tops, edits, parsed, len(new))
    return None


# -- which statements to parse again --------------------------------------------

_TOP, _GAP, _HEADER, _BODY, _INNER = "top", "gap", "header", "body", "inner"


@dataclass(frozen=True, slots=True)
class _Edit:
    """Known lines [start, end) to parse again.

    ``top``: whole top-level statements. ``gap``: none, the lines inserted
    before a top-level statement are parsed alone. ``header``: the header of definition
    ``container`` (decorators down to the line before its body), parsed over
    a stand-in body. ``body``: whole statements of that definition's body.
    ``inner``: whole statements of the body of statement ``child`` of that
    body (a method of a class, below its header).
    """

    kind: str
    start: int
    end: int
    container: int
    hunks: tuple[int, ...]
    delta: int
    new_start: int = 0
    child: int = -1


@dataclass(frozen=True, slots=True)
class _Parsed:
    statements: tuple[Statement, ...] = ()
    """``top``: the statements now in its place; ``header``: the definition (no body)."""
    body_starts: tuple[int, ...] = ()
    """``body``, ``inner``: first lines (new version) of the body statements now in its place."""
    body_inner: tuple[Body | None, ...] = ()
    """``body``: the bodies of those statements (:attr:`Body.inner`); ``inner``: all None."""
    body_end: int = -1
    """``body`` edits that run to the end of the definition: its new last line."""


def _plan(known: Outline, tops: list[int], hunks: list[Hunk], depth: dict[int, int]) -> list[_Edit]:
    """Group hunks into edits of whole statements; overlapping edits merge a level up."""
    edits: list[_Edit] = []
    starts = set(tops)
    for k, (a0, a1, b0, b1) in enumerate(hunks):
        delta = (b1 - b0) - (a1 - a0)
        slot = _slot(known, tops, a0, a1, depth.get(k, 2))
        if a0 == a1 and a0 in starts and depth.get(k, 2) > 0:
            # New statements (a function, an import) right before a known one:
            # that one need not be parsed with them.
            edits.append(_Edit(_GAP, a0, a0, -1, (k,), delta))
        elif slot is None:
            start, end = _top_bounds(known, tops, a0, a1)
            edits.append(_Edit(_TOP, start, end, -1, (k,), delta))
        else:
            kind, start, end, container, child = slot
            edits.append(_Edit(kind, start, end, container, (k,), delta, child=child))
    merged: list[_Edit] = []
    for edit in edits:
        while merged and edit.start < merged[-1].end:
            last = merged.pop()
            if last.kind == _INNER and (edit.kind, edit.container, edit.child) != (
                _INNER,
                last.container,
                last.child,
            ):
                last = _outer(known, tops, last)
            if edit.kind == _INNER and (last.kind, last.container, last.child) != (
                _INNER,
                edit.container,
                edit.child,
            ):
                edit = _outer(known, tops, edit)
            span = (min(last.start, edit.start), max(last.end, edit.end))
            kind, container, child = _TOP, -1, -1
            same = (last.kind, last.container, last.child) == (
                edit.kind,
                edit.container,
                edit.child,
            )
            if same and edit.kind in (_BODY, _INNER):
                kind, container, child = edit.kind, edit.container, edit.child
            else:
                span = _top_bounds(known, tops, *span)
            hunks_ = last.hunks + edit.hunks
            edit = _Edit(kind, *span, container, hunks_, last.delta + edit.delta, child=child)
        merged.append(edit)
    offset = 0
    placed = []
    for edit in merged:
        placed.append(replace(edit, new_start=edit.start + offset))
        offset += edit.delta
    return placed


def _outer(known: Outline, tops: list[int], edit: _Edit) -> _Edit:
    """An ``inner`` edit widened to the whole statement of the body it lies in."""
    stmt = known.statements[edit.container]
    assert stmt.body is not None
    starts = stmt.body.starts
    later = edit.child + 1
    if later < len(starts):
        end = stmt.start + starts[later]
    else:
        end = tops[edit.container + 1] if edit.container + 1 < len(tops) else known.lines
    return replace(edit, kind=_BODY, start=stmt.start + starts[edit.child], end=end, child=-1)


def _slot(
    known: Outline, tops: list[int], a0: int, a1: int, depth: int = 2
) -> tuple[str, int, int, int, int] | None:
    """(kind, start, end, statement index, child) when lines [a0, a1) lie in one definition.

    In its header, or in its body: the lines may run past the definition up
    to the next top-level statement, where indented text joins the body and
    anything else makes the snippet spill out, which :func:`_parse_edit`
    rejects. In a body, lines within the body of one of its methods (below
    the method's header, up to the next statement of the class) are an
    ``inner`` edit when ``depth`` allows. ``depth`` 0 means no slot at all.
    """
    index = bisect_right(tops, a0) - 1
    if depth < 1 or index < 0 or known.statements[index].body is None:
        return None
    stmt = known.statements[index]
    body = stmt.body
    assert body is not None
    stop = tops[index + 1] if index + 1 < len(tops) else known.lines
    starts = [stmt.start + s for s in body.starts]
    if starts[0] <= a0 and a1 <= stop:
        k = bisect_right(starts, a0) - 1
        start = starts[k]
        later = bisect_left(starts, max(a1, start + 1))
        end = starts[later] if later < len(starts) else stop
        inner = body.inner[k] if depth >= 2 and body.inner else None
        if inner is not None and later == k + 1:
            nested = [start + s for s in inner.starts]
            if nested[0] <= a0:
                first = nested[bisect_right(nested, a0) - 1]
                after = bisect_left(nested, max(a1, first + 1))
                last = nested[after] if after < len(nested) else end
                return _INNER, first, last, index, k
        return _BODY, start, end, index, -1
    if a1 <= starts[0] and (a0 < a1 or a0 > stmt.start):
        return _HEADER, stmt.start, starts[0], index, -1
    return None


def _top_bounds(known: Outline, tops: list[int], a0: int, a1: int) -> tuple[int, int]:
    """The whole top-level statements covering lines [a0, a1) (0 or EOF at the edges)."""
    before = bisect_right(tops, a0) - 1
    start = tops[before] if before >= 0 else 0
    later = bisect_left(tops, max(a1, start + 1))
    return start, tops[later] if later < len(tops) else known.lines


# -- parsing the snippets and putting the outline back together -----------------


def _parse_edit(known: Outline, edit: _Edit, new: list[bytes]) -> _Parsed | None:
    """Parse the new text of one edit; None when it cannot be proven to parse in place."""
    snippet = new[edit.new_start : edit.new_start + edit.end - edit.start + edit.delta]
    if edit.kind in (_TOP, _GAP):
        if not _has_code(snippet):
            return _Parsed()  # whole statements deleted: what is left still parses
        tree = _parse_at(snippet, b"", b"")
        if tree is None:
            return None
        return _Parsed(tuple(_statement(node, new, edit.new_start) for node in tree.body))
    body = known.statements[edit.container].body
    assert body is not None
    if edit.kind == _INNER:
        body = body.inner[edit.child]
        assert body is not None
    if edit.kind == _HEADER:
        stub = body.indent + b"pass\n"
        tree = _parse_at(snippet, b"", b"", stub)
        if tree is None or len(tree.body) != 1 or _WRAPPER.get(type(tree.body[0])) != body.wrapper:
            return None
        node = tree.body[0]
        assert isinstance(node, _DEFS)
        # The stand-in body must be all of the body: the header did not grow one.
        if len(node.body) != 1 or node.body[0].lineno != len(snippet) + 1:
            return None
        stmt = _statement(node, new, edit.new_start)
        return _Parsed((Statement(stmt.start, stmt.events, None),))
    tree = _parse_at(snippet, body.indent, body.wrapper)
    if tree is None or len(tree.body) != 1 or _WRAPPER.get(type(tree.body[0])) != body.wrapper:
        return None
    wrapper = tree.body[0]
    assert isinstance(wrapper, _DEFS) and wrapper.end_lineno is not None
    # Snippet line 1 is the stand-in header: its line L is new[new_start + L - 2].
    starts = tuple(edit.new_start + _first_line(s) - 2 for s in wrapper.body)
    if edit.kind == _BODY:
        inner = tuple(_body(s, new, edit.new_start - 1, 0) for s in wrapper.body)
    else:
        inner = (None,) * len(starts)
    end = edit.new_start + wrapper.end_lineno - 2
    return _Parsed(body_starts=starts, body_inner=inner, body_end=end)


def _parse_at(
    snippet: list[bytes], indent: bytes, before: bytes, after: bytes = b""
) -> ast.Module | None:
    """Parse ``before + snippet + after`` if the snippet's code starts at ``indent``."""
    if not _has_code(snippet) or not _starts_at(snippet, indent):
        return None
    if after and not snippet[-1].endswith(b"\n"):
        return None
    try:
        return parse_quietly(before + b"".join(snippet) + after)
    except PARSE_ERRORS:
        return None


def _assemble(
    known: Outline, tops: list[int], edits: list[_Edit], parsed: list[_Parsed], lines: int
) -> Outline:
    """The new outline: untouched statements moved, edited ones replaced."""
    ends = [e.end for e in edits]
    moved = [0]
    for e in edits:
        moved.append(moved[-1] + e.delta)

    def shift(line: int) -> int:
        """Where an unedited known line is in the new version."""
        return line + moved[bisect_right(ends, line)]

    placed: list[tuple[int, tuple[Statement, ...]]] = []
    covered: set[int] = set()
    headers: dict[int, Statement] = {}
    in_body: dict[int, list[tuple[_Edit, _Parsed]]] = {}
    in_inner: dict[int, list[tuple[_Edit, _Parsed]]] = {}
    for edit, result in zip(edits, parsed, strict=True):
        if edit.kind in (_TOP, _GAP):
            # A gap's statements come before the known one at the same line: the
            # sort below is stable, and edits are placed before known statements.
            placed.append((edit.start, result.statements))
            covered.update(range(bisect_left(tops, edit.start), bisect_left(tops, edit.end)))
        elif edit.kind == _HEADER:
            headers[edit.container] = result.statements[0]
        else:
            into = in_body if edit.kind == _BODY else in_inner
            into.setdefault(edit.container, []).append((edit, result))
    for index, stmt in enumerate(known.statements):
        if index in covered:
            continue
        head = headers.get(index)
        start, events = (head.start, head.events) if head else (shift(stmt.start), stmt.events)
        body = stmt.body
        if body is not None and (head or index in in_body or index in in_inner):
            mine, inner = in_body.get(index, []), in_inner.get(index, [])
            body = _edited_body(stmt.start, body, start, mine, inner, shift)
        placed.append((stmt.start, (Statement(start, events, body),)))
    placed.sort(key=lambda item: item[0])
    return Outline(lines, tuple(s for _, group in placed for s in group))


def _edited_body(
    known_first: int,
    body: Body,
    first: int,
    mine: list[tuple[_Edit, _Parsed]],
    inner: list[tuple[_Edit, _Parsed]],
    shift: Callable[[int], int],
) -> Body:
    """A body after the edits of its statements (``mine``) and of their bodies (``inner``).

    ``known_first`` is the definition's first line before the edits, ``first`` after.
    """
    kept: list[tuple[int, Body | None]] = []
    for k, offset in enumerate(body.starts):
        line = known_first + offset
        if any(e.start <= line < e.end for e, _ in mine):
            continue
        nested = body.inner[k] if body.inner else None
        theirs = [(e, p) for e, p in inner if e.child == k]
        if theirs:
            assert nested is not None
            nested = _edited_body(line, nested, shift(line), theirs, [], shift)
        kept.append((shift(line) - first, nested))
    for _, p in mine:
        kept.extend((line - first, b) for line, b in zip(p.body_starts, p.body_inner, strict=True))
    kept.sort(key=lambda item: item[0])
    ends = [p.body_end - first for e, p in mine + inner if e.end > known_first + body.end]
    end = ends[0] if ends else shift(known_first + body.end) - first
    starts = tuple(line for line, _ in kept)
    return Body(
        body.wrapper, end, starts, body.indent, tuple(b for _, b in kept) if body.inner else ()
    )


def _statement(node: ast.stmt, lines: list[bytes], base: int) -> Statement:
    """A parsed top-level statement whose line 1 is ``lines[base]``."""
    events = tuple(api_events([node]))
    return Statement(base + _first_line(node) - 1, events, _body(node, lines, base, 1))


def _body(node: ast.stmt, lines: list[bytes], base: int, depth: int) -> Body | None:
    """The body of a parsed ``def``/``class`` whose line 1 is ``lines[base]``, or None.

    With ``depth`` 1 the bodies of its own definitions are kept too (:attr:`Body.inner`).
    """
    if not isinstance(node, _DEFS) or node.end_lineno is None:
        return None
    first_line = _first_line(node)
    first = node.body[0]
    at = base + _first_line(first) - 1
    line = lines[at] if at < len(lines) else b""
    indent = line[: len(line) - len(line.lstrip(_BLANK))]
    # A body sharing a line with its header (``def f(): pass``) has no
    # indentation of its own to check a snippet against.
    if _first_line(first) <= node.lineno or not indent:
        return None
    if _first_line(first) < first.lineno:
        if line[len(indent) : len(indent) + 1] != b"@":
            return None
    elif first.col_offset != len(indent):
        return None
    starts = tuple(_first_line(s) - first_line for s in node.body)
    inner = tuple(_body(s, lines, base, 0) for s in node.body) if depth > 0 else ()
    return Body(_WRAPPER[type(node)], node.end_lineno - first_line, starts, indent, inner)


def _first_line(node: ast.stmt) -> int:
    """1-based first line of a statement, its decorators included."""
    first: int = node.lineno
    if isinstance(node, _DEFS):
        for decorator in node.decorator_list:
            first = min(first, decorator.lineno)
    return first


def _plain(source: bytes) -> bool:
    """No BOM, no coding cookie, no ``\\r``: the bytes are UTF-8 lines split on ``\\n``."""
    head = b"".join(source.split(b"\n", 2)[:2])
    return not (source.startswith(b"\xef\xbb\xbf") or b"\r" in source or _COOKIE.search(head))


def _has_code(snippet: list[bytes]) -> bool:
    """True when some line is neither blank nor a comment."""
    return any(
        line.strip(_BLANK + b"\n") and not line.lstrip(_BLANK).startswith(b"#") for line in snippet
    )


def _starts_at(snippet: list[bytes], indent: bytes) -> bool:
    """True when the first line that is code starts with exactly ``indent``, then code."""
    for line in snippet:
        code = line.lstrip(_BLANK)
        if not code.strip() or code.startswith(b"#"):
            continue
        return line[: len(line) - len(code)] == indent and not code.startswith(b"\\")
    return False
