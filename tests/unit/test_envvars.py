"""Reading which environment variables a module reads, and with which default."""

from __future__ import annotations

from repoherald.analysis.surface.envvars import changes, reads

MODULE = """import os
A = os.getenv("PKG_A", "0") == "1"
B = os.environ.get('PKG_B', str(max(1, 2)))
C = os.environ["PKG_C"]
D = os.environ.setdefault("PKG_D", "x")
E = os.getenv("PKG_E")
F = os.getenv(name)  # not a literal: not a variable we can name
"""


def test_every_form_of_read_and_its_default() -> None:
    assert reads(MODULE) == {
        "PKG_A": '"0"',
        "PKG_B": "str(max(1, 2))",
        "PKG_C": None,
        "PKG_D": '"x"',
        "PKG_E": None,
    }


def test_a_default_written_differently_is_the_same_default() -> None:
    old = {"pkg/a.py": "import os\nX = os.getenv(\"PKG_X\", '1')\n"}
    new = {"pkg/a.py": 'import os\nX = os.getenv( "PKG_X" , "1" )\n'}
    assert changes(old, new).redefaulted == ()


def test_a_huge_module_is_read_in_one_pass() -> None:
    # The whole-module regular expression this replaced backtracked on long
    # argument lists; the scan looks at most 200 characters past each call.
    text = "x = f(" + "a, " * 50_000 + ")\n" + 'y = os.getenv("PKG_Y", "2")\n'
    assert reads(text) == {"PKG_Y": '"2"'}
