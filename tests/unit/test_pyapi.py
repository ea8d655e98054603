"""Behaviour of the public-API extractor and differ on real and hostile sources."""

from __future__ import annotations

import warnings
from textwrap import dedent

import pytest

from repoherald.analysis.pyapi.api import diff_api, public_api
from repoherald.models import ApiChange


def api(text: str) -> dict[str, tuple[str, str]]:
    """Parse dedented text, insisting that it parses."""
    result = public_api(dedent(text).encode())
    assert result is not None
    return result


def test_kinds_and_signatures() -> None:
    result = api(
        """
        import abc

        def f(x: int, y=2, *args, **kw) -> str:
            return ""

        async def fetch(url, /, *, timeout: float = 1.0):
            pass

        class Plain:
            def method(self) -> None: ...

        class Meta(Base, abc.ABC, metaclass=M):
            pass

        CONSTANT = 1
        """
    )
    assert result == {
        "f": ("function", "(x: int, y=2, *args, **kw) -> str"),
        "fetch": ("async function", "(url, /, *, timeout: float=1.0)"),
        "Plain": ("class", "()"),
        "Meta": ("class", "(Base, abc.ABC, metaclass=M)"),
    }


def test_private_and_nested_names_are_not_public() -> None:
    result = api(
        """
        def _helper(): pass
        def __dunder__(): pass
        class Outer:
            def inner(self): pass
        def outer():
            def nested(): pass
        """
    )
    assert set(result) == {"Outer", "outer"}


def test_formatting_does_not_change_the_signature() -> None:
    compact = api("def f(a:int=1,*,b:'str'='x')->None: pass\n")
    spread = api(
        """
        def f(
            a: int = 1,
            *,
            b: "str" = "x",  # comment
        ) -> None:
            pass
        """
    )
    assert compact == spread


def test_type_checking_and_version_guards_are_included() -> None:
    result = api(
        """
        import sys
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            class Protocolish: ...

        if sys.version_info >= (3, 12):
            def compat(a): pass
        elif sys.version_info >= (3, 11):
            def only_311(): pass
        else:
            def compat(a, b): pass

        try:
            from fast import speedup
        except ImportError:
            def speedup(data: bytes) -> bytes: return data
        finally:
            def cleanup(): pass
        """
    )
    assert result["Protocolish"] == ("class", "()")
    assert result["compat"] == ("function", "(a, b)"), "last definition in source order wins"
    assert result["only_311"] == ("function", "()")
    assert result["speedup"] == ("function", "(data: bytes) -> bytes")
    assert "cleanup" in result


def test_defs_inside_with_or_for_blocks_are_ignored() -> None:
    result = api(
        """
        with ctx:
            def inside_with(): pass
        for i in range(2):
            def inside_for(): pass
        """
    )
    assert result == {}


def test_literal_all_restricts_and_can_export_private_names() -> None:
    result = api(
        """
        __all__ = ["listed", "_exported_private", "reexported"]
        from elsewhere import reexported
        def listed(): pass
        def unlisted(): pass
        def _exported_private(): pass
        """
    )
    assert set(result) == {"listed", "_exported_private"}


def test_all_tuple_annotated_and_extended() -> None:
    result = api(
        """
        __all__: tuple[str, ...] = ("a",)
        __all__ += ["b"]
        __all__.extend(["c"])
        __all__.append("d")
        def a(): pass
        def b(): pass
        def c(): pass
        def d(): pass
        def e(): pass
        """
    )
    assert set(result) == {"a", "b", "c", "d"}


def test_empty_all_exports_nothing() -> None:
    assert api("__all__ = []\ndef f(): pass\n") == {}


def test_computed_all_falls_back_to_the_underscore_rule() -> None:
    result = api(
        """
        __all__ = ["a"] + other.__all__
        def a(): pass
        def b(): pass
        def _c(): pass
        """
    )
    assert set(result) == {"a", "b"}


def test_all_inside_a_guard_counts() -> None:
    result = api(
        """
        try:
            __all__ = ["a"]
        except Exception:
            pass
        def a(): pass
        def b(): pass
        """
    )
    assert set(result) == {"a"}


def test_empty_module() -> None:
    assert api("") == {}
    assert api('"""Only a docstring."""\n') == {}


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(b"def f(:\n", id="syntax-error"),
        pytest.param(b"def f(): pass\x00\n", id="nul-byte"),
        pytest.param(b"def f(): return '\xff\xfe'\n", id="invalid-utf8"),
        pytest.param(b"# -*- coding: no-such-codec -*-\ndef f(): pass\n", id="unknown-codec"),
        pytest.param(b"\xef\xbb\xbf# coding: latin-1\ndef f(): pass\n", id="bom-vs-cookie"),
        pytest.param(b"x = " + b"(" * 300 + b"1" + b")" * 300 + b"\n", id="deep-parens"),
        pytest.param(b"x = " + b"-" * 100_000 + b"1\n", id="parser-stack-overflow"),
        pytest.param(b"x = a" + b".b" * 100_000 + b"\n", id="deep-ast"),
        pytest.param(
            b"def f(x=" + b"+".join([b"1"] * 1_500) + b"): pass\n", id="deep-default-unparse"
        ),
        pytest.param(b"if a:\n pass\n" + b"elif b:\n pass\n" * 20_000, id="long-elif"),
        pytest.param(b"def f[T](x: T) -> T: pass\n", id="newer-syntax"),
    ],
)
def test_unparseable_sources_give_none(source: bytes) -> None:
    assert public_api(source) is None


def test_latin1_coding_cookie_is_honoured() -> None:
    source = "# -*- coding: latin-1 -*-\ndef grüße(x='é') -> str: pass\n".encode("latin-1")
    with pytest.raises(UnicodeDecodeError):
        source.decode("utf-8")
    assert public_api(source) == {"grüße": ("function", "(x='é') -> str")}


def test_utf8_bom_is_accepted() -> None:
    assert public_api(b"\xef\xbb\xbfdef f(): pass\n") == {"f": ("function", "()")}


def test_tokenizer_warnings_are_silenced_even_under_w_error() -> None:
    source = b'PATTERN = "\\d+"\nx = 1if True else 2\ndef f(x=0in y): pass\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert public_api(source) == {"f": ("function", "(x=0 in y)")}


def test_size_limit() -> None:
    source = b"def f(): pass\n" + b"# padding\n" * 200
    assert public_api(source, max_bytes=len(source)) is not None
    assert public_api(source, max_bytes=len(source) - 1) is None
    assert public_api(b"x" * 1_000_001) is None


# --- diff_api -------------------------------------------------------------------------------


def test_diff_added_removed_and_resigned_sorted_by_name() -> None:
    old = api(
        """
        def keep(a): pass
        def gone(): pass
        def zeta(a, b=1): pass
        class Model(Base): pass
        """
    )
    new = api(
        """
        def keep(a): pass
        def zeta(a, b=2): pass
        class Model(Base, Mixin): pass
        async def alpha() -> int: pass
        """
    )
    assert diff_api("pkg/mod.py", old, new) == [
        ApiChange("pkg/mod.py", "Model", "class", "signature", "(Base)", "(Base, Mixin)"),
        ApiChange("pkg/mod.py", "alpha", "async function", "added", None, "() -> int"),
        ApiChange("pkg/mod.py", "gone", "function", "removed", "()", None),
        ApiChange("pkg/mod.py", "zeta", "function", "signature", "(a, b=1)", "(a, b=2)"),
    ]


def test_return_annotation_change_is_a_signature_change() -> None:
    changes = diff_api("m.py", api("def f() -> int: pass\n"), api("def f() -> str: pass\n"))
    assert [(c.name, c.change, c.old_signature, c.new_signature) for c in changes] == [
        ("f", "signature", "() -> int", "() -> str")
    ]


def test_kind_change_is_removal_then_addition() -> None:
    changes = diff_api("m.py", api("def f(x): pass\n"), api("async def f(x): pass\n"))
    assert changes == [
        ApiChange("m.py", "f", "function", "removed", "(x)", None),
        ApiChange("m.py", "f", "async function", "added", None, "(x)"),
    ]


def test_body_only_change_is_no_api_change() -> None:
    old = api("def f(x):\n    return 1\n")
    new = api("def f(x):\n    '''Doc.'''\n    return 2\n")
    assert diff_api("m.py", old, new) == []


def test_name_leaving_all_is_a_removal() -> None:
    old = api("__all__ = ['f', 'g']\ndef f(): pass\ndef g(): pass\n")
    new = api("__all__ = ['f']\ndef f(): pass\ndef g(): pass\n")
    assert diff_api("m.py", old, new) == [ApiChange("m.py", "g", "function", "removed", "()")]


def test_added_and_deleted_files() -> None:
    names = api("def f(): pass\nclass C: pass\n")
    assert diff_api("new.py", None, names) == [
        ApiChange("new.py", "C", "class", "added", None, "()"),
        ApiChange("new.py", "f", "function", "added", None, "()"),
    ]
    assert diff_api("old.py", names, None) == [
        ApiChange("old.py", "C", "class", "removed", "()", None),
        ApiChange("old.py", "f", "function", "removed", "()", None),
    ]
    assert diff_api("none.py", None, None) == []
    assert diff_api("same.py", names, dict(names)) == []
