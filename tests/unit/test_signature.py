"""Signatures as text, and what a call or an override runs into when they change."""

from __future__ import annotations

import pytest

from repoherald.analysis.pyapi.signature import (
    CallShape,
    Signature,
    bind_problems,
    describe_change,
    misbound_positionals,
    override_problems,
    parse_signature,
    unpassed_defaults,
)
from repoherald.i18n import localise
from repoherald.models import Text


def en(problems: list[Text]) -> list[str]:
    """The problems as the English report words them."""
    return [localise("en", p) for p in problems]


def zh(problems: list[Text]) -> list[str]:
    return [localise("zh", p) for p in problems]


def sig(text: str) -> Signature:
    parsed = parse_signature(text)
    assert parsed is not None
    return parsed


@pytest.mark.parametrize(
    "text",
    [
        "()",
        "(a, b=1, *args, c, d=2, **kw)",
        "(a, /, b, *, c)",
        "(self, x, y=None)",
        "@staticmethod (n, m=3)",
        "@classmethod (cls, *args)",
        "(*, only)",
    ],
)
def test_text_round_trips(text: str) -> None:
    assert sig(text).text == text


def test_annotations_are_not_part_of_the_text() -> None:
    assert sig("(a: int, b: str = 'x')").text == "(a, b='x')"


def test_unparseable_text_is_none() -> None:
    assert parse_signature("(a, ") is None
    assert parse_signature("x = 1") is None


def test_binding_drops_self_only_where_python_does() -> None:
    method = sig("(self, a)")
    assert method.bound(through_instance=True).text == "@staticmethod (a)"
    assert method.bound(through_instance=False).text == "@staticmethod (self, a)"
    assert sig("@classmethod (cls, a)").bound(through_instance=False).text == "@staticmethod (a)"
    assert sig("@staticmethod (a)").bound(through_instance=True).text == "@staticmethod (a)"


def test_bind_problems_follow_python_rules() -> None:
    s = sig("(a, b=1, *, c)")
    assert en(bind_problems(s, CallShape(1, ("c",)))) == []
    assert en(bind_problems(s, CallShape(3, ("c",)))) == [
        "3 positional arguments, at most 2 accepted"
    ]
    assert en(bind_problems(s, CallShape(1, ()))) == ["missing required argument c"]
    assert en(bind_problems(s, CallShape(1, ("c", "d")))) == ["unexpected keyword argument d"]
    assert en(bind_problems(s, CallShape(1, ("a", "c")))) == [
        "a given both by position and by keyword"
    ]
    # Splats hide what is passed: only explicit mistakes are certain.
    assert en(bind_problems(s, CallShape(0, (), star_args=True, star_kwargs=True))) == []
    assert en(bind_problems(sig("(a, **kw)"), CallShape(1, ("anything",)))) == []
    assert en(bind_problems(sig("(a, /)"), CallShape(0, ("a",)))) == [
        "unexpected keyword argument a",
        "missing required argument a",
    ]


def test_positionals_that_land_elsewhere_and_defaults_that_matter() -> None:
    old, new = sig("(a, b, c=1, d=2)"), sig("(a, c=1, b=None, d=3)")
    call = CallShape(2, ())
    assert en(misbound_positionals(old, new, call)) == [
        "positional argument 2 now goes to c, not b"
    ]
    assert en(unpassed_defaults(old, new, call)) == ["default of d: 2 -> 3"]
    assert en(unpassed_defaults(old, new, CallShape(2, ("d",)))) == []
    assert en(unpassed_defaults(old, new, CallShape(2, (), star_kwargs=True))) == []


def test_override_problems() -> None:
    old = sig("(x, y)")
    assert en(override_problems(old, sig("(x, y, z)"), sig("(x, y)"))) == [
        "does not accept the new parameter z"
    ]
    assert en(override_problems(old, sig("(x, y, z=None)"), sig("(x, y, **kwargs)"))) == []
    assert en(override_problems(old, sig("(x)"), sig("(x, y)"))) == [
        "still requires y, which callers no longer pass"
    ]
    assert en(override_problems(old, sig("(x)"), sig("(x, y=None)"))) == []
    assert en(override_problems(old, sig("(y, x)"), sig("(x, y)"))) == [
        "keeps the old positional order: x, y"
    ]
    assert en(override_problems(old, sig("(x, y)"), sig("(*args, **kwargs)"))) == []


def test_problems_are_worded_in_chinese_too_with_the_names_as_written() -> None:
    s = sig("(a, b=1, *, c)")
    assert zh(bind_problems(s, CallShape(3, ("c", "d")))) == [
        "传入 3 个位置参数，最多只接受 2 个",
        "不接受关键字参数 d",
    ]
    assert zh(bind_problems(s, CallShape(1, ("a",)))) == [
        "a 同时按位置和按关键字传入",
        "缺少必需参数 c",
    ]
    old, new = sig("(a, b, c=1, d=2)"), sig("(a, c=1, b=None, d=3)")
    assert zh(misbound_positionals(old, new, CallShape(2, ()))) == [
        "第 2 个位置参数现在传给 c，不再是 b"
    ]
    assert zh(unpassed_defaults(old, new, CallShape(2, ()))) == ["d 的默认值：2 -> 3"]
    assert zh(override_problems(sig("(x, y)"), sig("(y, x, z)"), sig("(x, y)"))) == [
        "不接受新参数 z",
        "仍沿用旧的位置参数顺序：x, y",
    ]
    assert zh(override_problems(sig("(x, y)"), sig("(x)"), sig("(x, y)"))) == [
        "仍要求参数 y，但调用方已不再传入"
    ]


def test_describe_change_covers_kinds_and_splats() -> None:
    assert describe_change(sig("(a, *args)"), sig("(*, a)")) == [
        "a became keyword-only",
        "removed *args",
    ]
    assert describe_change(sig("(a)"), sig("@staticmethod (a)")) == [
        "binding: method -> @staticmethod"
    ]
    assert describe_change(sig("(a=1)"), sig("(a)")) == ["default of a: 1 -> (required)"]
