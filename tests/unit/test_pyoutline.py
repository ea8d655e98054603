"""Deriving a version's API by parsing only the changed statements matches a whole parse."""

from __future__ import annotations

import random
from textwrap import dedent

import pytest

from repoherald.analysis.facts import linediff
from repoherald.analysis.pyapi import outline as pyoutline
from repoherald.analysis.pyapi.api import public_api

BASE = '''\
"""A module."""
import os

__all__ = ["Engine", "run", "helper", "tail"]


def helper(x: int) -> int:
    """Doubles.

Column-0 text inside a docstring is still inside the function.
    """
    return x * 2


@decorate
def run(a, b=1):
    total = a + b
    for i in range(3):
        total += i
    return total


class Engine(Base):
    """An engine."""

    size = 3

    def start(self) -> None:
        self.on = True

    @property
    def speed(self) -> int:
        return 1

    def stop(self) -> None:
        self.on = False


def tail():
    return None
'''


def derive(before: str, after: str) -> pyoutline.Outline | None:
    """Derive ``after`` from ``before`` and check it against a whole parse of ``after``."""
    old, new = before.encode(), after.encode()
    known = pyoutline.parse(old)
    assert known is not None and known[1] is not None
    got = pyoutline.derive(known[1], old, new)
    fresh = pyoutline.parse(new)
    if got is not None:
        assert fresh is not None, "derived an outline for a version that does not parse"
        assert got == fresh[1]
        assert got.api() == fresh[0] == public_api(new)
    return got


def edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("        self.on = True\n", "        self.on = True\n        self.count = 0\n"),
        ("    total = a + b\n", "    total = a - b\n    total *= 2\n"),
        ("Column-0 text inside", "Other column-0 text inside"),
        ("    @property\n", "    @property\n    @cached\n"),
        ("    def stop(self) -> None:\n        self.on = False\n", ""),
        (
            "        self.on = False\n",
            "        self.on = False\n\n    def extra(self):\n        pass\n",
        ),
        ("    size = 3\n", ""),
        (
            "    def stop(self) -> None:\n        self.on = False\n",
            "        def stop(self):\n            pass\n",
        ),
    ],
    ids=[
        "method",
        "function",
        "docstring",
        "decorator",
        "drop-method",
        "add-method",
        "attr",
        "nest",
    ],
)
def test_body_edits_are_derived_with_the_same_api(old: str, new: str) -> None:
    got = derive(BASE, edit(old, new))
    assert got is not None
    assert got.api() == public_api(BASE.encode())


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("def run(a, b=1):", "def run(a, b=1, *, c=None):", "run"),
        ("class Engine(Base):", "class Engine(Base, Mixin):", "Engine"),
        ("def helper(x: int) -> int:", "async def helper(x: int) -> int:", "helper"),
        ("def tail():\n", "def tail(flag):\n", "tail"),
    ],
    ids=["signature", "bases", "async", "last-statement"],
)
def test_header_edits_change_the_api(old: str, new: str, name: str) -> None:
    got = derive(BASE, edit(old, new))
    assert got is not None
    assert got.api()[name] != public_api(BASE.encode())[name]  # type: ignore[index]


def test_signature_and_body_changed_together() -> None:
    after = edit("def run(a, b=1):\n    total = a + b\n", "def run(a, c=2):\n    total = a + c\n")
    got = derive(BASE, after)
    assert got is not None and got.api()["run"] == ("function", "(a, c=2)")


def test_module_level_edits_far_apart() -> None:
    after = edit("import os\n", "import os\nimport sys\n")
    after = edit('"helper", "tail"]', '"tail"]', after)
    after = edit("        self.on = False\n", "        self.on = None\n", after)
    after = after + "\n\ndef new_one(x):\n    return x\n"
    got = derive(BASE, after)
    assert got is not None
    assert set(got.api()) == {"Engine", "run", "tail"}


def test_column_zero_text_after_a_class_is_a_new_top_level_statement() -> None:
    after = edit("        self.on = False\n", "        self.on = False\n\ndef loose():\n    pass\n")
    got = derive(BASE, after)
    assert got is not None and "loose" not in got.api()  # __all__ decides
    assert [s.events[0].name for s in got.statements[-2:]] == ["loose", "tail"]  # type: ignore[union-attr]


METHODS = BASE.replace(
    "    def stop(self) -> None:\n        self.on = False\n",
    "    def stop(self, force=False) -> None:\n"
    "        if force:\n"
    "            self.on = False\n"
    "        else:\n"
    "            self.on = None\n"
    "\n"
    "        def later():\n"
    "            return 1\n"
    "\n"
    "        self.later = later\n",
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("            self.on = None\n", "            self.on = 0\n            self.off = 1\n"),
        ("            return 1\n", "            return 2\n"),
        ("        self.later = later\n", "        self.later = later\n        self.done = True\n"),
        (
            "        self.later = later\n",
            "        self.later = later\n\n    def again(self):\n        pass\n",
        ),
        ("        self.later = later\n", "        self.later = later\n\ndef loose():\n    pass\n"),
        ("        self.on = True\n", "        self.on = 1\n"),
        ("    def speed(self) -> int:\n        return 1\n", "    def speed(self):\n        pass\n"),
        ("        if force:\n", "        if not force:\n"),
        ("    def stop(self, force=False) -> None:\n", "    def stop(self) -> None:\n"),
        ("        else:\n            self.on = None\n", "        self.on = None\n"),
    ],
    ids=[
        "in-else",
        "in-nested-def",
        "append-last",
        "append-method",
        "append-top-level",
        "two-methods-one-hunk-each",
        "speed",
        "if-header",
        "method-header",
        "dedent-into-method",
    ],
)
def test_edits_inside_methods_are_derived_with_the_same_outline(old: str, new: str) -> None:
    after = edit(old, new, METHODS)
    if old == "        self.on = True\n":
        after = edit("        self.on = False\n", "        self.on = 2\n", after)
    assert derive(METHODS, after) is not None


@pytest.mark.parametrize(
    ("inserted", "derived"),
    [
        ("def added(x):\n    return x\n\n\n", True),
        ("import sys\nimport json\n", True),
        ("# a comment\n\n", True),
        ("@cached\n", True),  # not alone: parsed again with the class it decorates
        ("    indented = 1\n", None),  # joins run's body: parsed whole
        ("else:\n    pass\n", False),
        ('"""a string\n', False),
    ],
    ids=["function", "imports", "comment", "decorator", "indented", "else", "open-string"],
)
def test_statements_inserted_before_a_top_level_one(inserted: str, derived: bool | None) -> None:
    after = edit("class Engine(Base):\n", inserted + "class Engine(Base):\n")
    got = derive(BASE, after)  # equal to a whole parse when derived
    if derived is not None:
        assert (got is not None) == derived


def test_a_function_inserted_before_a_class_is_parsed_without_the_class() -> None:
    after = edit("class Engine(Base):\n", "def added(x):\n    return x\n\n\nclass Engine(Base):\n")
    known = pyoutline.parse(BASE.encode())
    assert known is not None and known[1] is not None
    old, new = BASE.encode().splitlines(True), after.encode().splitlines(True)
    tops = [s.start for s in known[1].statements]
    edits = pyoutline._plan(known[1], tops, linediff.diff_lines(old, new), {})
    assert [(e.kind, e.start, e.end) for e in edits] == [("gap", tops[-2], tops[-2])]
    assert derive(BASE, after) is not None


def test_an_edit_inside_a_method_body_is_parsed_as_that_body_alone() -> None:
    known = pyoutline.parse(METHODS.encode())
    assert known is not None and known[1] is not None
    outline = known[1]
    lines = METHODS.splitlines(keepends=True)
    tops = [s.start for s in outline.statements]
    at = lines.index("            self.on = None\n")
    kind, start, end, _, _ = pyoutline._slot(outline, tops, at, at + 1) or ("", 0, 0, 0, 0)
    assert (kind, lines[start], lines[end]) == (
        "inner",
        "        if force:\n",
        "        def later():\n",
    )
    assert pyoutline._slot(outline, tops, at, at + 1, depth=1)[0] == "body"  # type: ignore[index]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("        self.on = True\n", "        self.on = (True\n"),
        ("        self.on = True\n", '        self.on = """True\n'),
        ("    total = a + b\n", "        total = a + b\n"),
        ("    def stop(self) -> None:\n", "      def stop(self) -> None:\n"),
        ("def tail():\n    return None\n", "def tail():\n"),
        ("def run(a, b=1):", "def run(a, b=1:"),
    ],
    ids=["bracket", "string", "indent", "method-indent", "empty-body", "header"],
)
def test_edits_that_break_the_file_are_not_derived(old: str, new: str) -> None:
    after = edit(old, new)
    assert pyoutline.parse(after.encode()) is None
    assert derive(BASE, after) is None


@pytest.mark.parametrize(
    "text",
    [
        b"# -*- coding: latin-1 -*-\ndef f():\n    return '\xe9'\n",
        b"def f():\r\n    return 1\r\n",
        b"\xef\xbb\xbfdef f():\n    return 1\n",
    ],
    ids=["cookie", "crlf", "bom"],
)
def test_sources_whose_lines_python_reads_differently_are_parsed_whole(text: bytes) -> None:
    parsed = pyoutline.parse(text)
    assert parsed is not None and parsed[0] == public_api(text)
    assert parsed[1] is None
    plain = b"def f():\n    return 1\n"
    known = pyoutline.parse(plain)
    assert known is not None and known[1] is not None
    assert pyoutline.derive(known[1], plain, text) is None


HOSTILE = [
    b"def f(:\n",
    b"def f(): pass\x00\n",
    b"def f(): return '\xff\xfe'\n",
    b"x = " + b"(" * 300 + b"1" + b")" * 300 + b"\n",
    b"x = " + b"-" * 100_000 + b"1\n",
    b"x = a" + b".b" * 100_000 + b"\n",
    b"def f(x=" + b"+".join([b"1"] * 1_500) + b"): pass\n",
    b"if a:\n pass\n" + b"elif b:\n pass\n" * 20_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_sources_are_unparsed_whole_and_never_derived(text: bytes) -> None:
    assert pyoutline.parse(text) is None
    assert public_api(text) is None
    plain = b"import os\n\n\ndef g():\n    return 1\n"
    known = pyoutline.parse(plain)
    assert known is not None and known[1] is not None
    assert pyoutline.derive(known[1], plain, plain + text) is None


def test_a_signature_too_deep_to_print_is_not_derived() -> None:
    deep = b"def f(x=" + b"+".join([b"1"] * 1_500) + b"):\n    pass\n"
    plain = b"def f(x=1):\n    pass\n"
    known = pyoutline.parse(plain)
    assert known is not None and known[1] is not None
    assert pyoutline.derive(known[1], plain, deep) is None


def test_inline_bodies_are_reparsed_as_statements() -> None:
    before = "def f(): return 1\nclass C: x = 1\ndef g(x):\n    return x\n"
    after = "def f(): return 2\nclass C: x = 2\ndef g(x, y):\n    return x\n"
    got = derive(before, after)
    assert got is not None and got.api()["g"] == ("function", "(x, y)")


def test_conditional_definitions_are_reparsed() -> None:
    before = dedent(
        """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            def hinted(x: int) -> int: ...
        else:
            def hinted(x): return x
        """
    )
    got = derive(before, before.replace("def hinted(x): return x", "def hinted(x, y): return x"))
    assert got is not None and got.api()["hinted"] == ("function", "(x, y)")


def test_size_limit_applies_to_the_new_version() -> None:
    known = pyoutline.parse(BASE.encode())
    assert known is not None and known[1] is not None
    bigger = edit("    size = 3\n", "    size = 3\n    pad = '" + "x" * 200 + "'\n").encode()
    assert pyoutline.derive(known[1], BASE.encode(), bigger, max_bytes=len(BASE) + 50) is None


def _apply(old: list[bytes], new: list[bytes], hunks: list[linediff.Hunk]) -> list[bytes]:
    out: list[bytes] = []
    pos = 0
    for a0, a1, b0, b1 in hunks:
        assert pos <= a0 <= a1
        out += old[pos:a0] + new[b0:b1]
        pos = a1
    return out + old[pos:]


def test_line_diff_is_a_true_alignment() -> None:
    rng = random.Random(11)
    alphabet = [f"line {i}\n".encode() for i in range(12)] + [b"\n", b"    pass\n"]
    for _ in range(300):
        old = [rng.choice(alphabet) for _ in range(rng.randint(0, 200))]
        new = list(old)
        for _ in range(rng.randint(0, 6)):
            at = rng.randint(0, len(new))
            cut = rng.randint(0, 5)
            new[at : at + cut] = [rng.choice(alphabet) for _ in range(rng.randint(0, 5))]
        if rng.random() < 0.3:
            new = [
                f"unique {i}\n".encode() if rng.random() < 0.2 else ln for i, ln in enumerate(new)
            ]
        hunks = linediff.diff_lines(old, new)
        assert _apply(old, new, hunks) == new
        assert all(h[0] < h[1] or h[2] < h[3] for h in hunks)
