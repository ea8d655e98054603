"""Reading which environment variables a module reads, and with which default."""

from __future__ import annotations

import ast

from repoherald.analysis.surface.envvars import changes, reads
from repoherald.analysis.surface.extract import extract

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
    # A whole-module regular expression once backtracked on long argument
    # lists; the detector walks the syntax tree once.
    text = "x = f(" + "a, " * 50_000 + ")\n" + 'y = os.getenv("PKG_Y", "2")\n'
    assert reads(text) == {"PKG_Y": '"2"'}


def test_a_read_mentioned_in_a_comment_or_string_is_no_read() -> None:
    text = (
        "import os\n"
        '# int(os.getenv("PKG_OLD", "1024"))\n'
        "HELP = 'set os.environ[\"PKG_DOC\"] to enable'\n"
        'X = os.getenv("PKG_X", "1")\n'
    )
    assert reads(text) == {"PKG_X": '"1"'}


def test_a_default_dropped_into_a_comment_is_not_a_change() -> None:
    old = {"pkg/runner.py": 'import os\nN = int(os.getenv("PKG_N", "1024"))\n'}
    new = {"pkg/runner.py": 'import os\nN = cfg.n  # int(os.getenv("PKG_N", "2048"))\n'}
    assert changes(old, new).redefaulted == ()


def test_facts_and_surface_see_the_same_reads() -> None:
    surface = extract(ast.parse(MODULE), "pkg.mod", "pkg/mod.py", False)
    shared = {"PKG_A", "PKG_B", "PKG_C", "PKG_E"}  # setdefault is a write the surface leaves out
    assert shared <= set(reads(MODULE)) and shared <= set(surface.env)
    assert surface.env["PKG_A"][0].default == "'0'" and reads(MODULE)["PKG_A"] == '"0"'
