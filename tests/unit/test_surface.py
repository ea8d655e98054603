"""The changed surface of a commit, computed from the before/after text of its Python files."""

from __future__ import annotations

import random
from textwrap import dedent

import pytest

from repoherald.analysis.surface.change import (
    FileVersions,
    Interest,
    SurfaceChange,
    SurfaceDiffer,
    is_public_module,
    module_name,
    reexports,
    spellings,
    surface_changes,
    versions_from_changes,
)
from repoherald.i18n import localise
from repoherald.models import FileChange, FileStatus


def modified(path: str, old: str, new: str) -> FileVersions:
    return FileVersions(path, path, dedent(old), dedent(new))


def added(path: str, new: str) -> FileVersions:
    return FileVersions(None, path, None, dedent(new))


def kinds(changes: list[SurfaceChange]) -> list[tuple[str, str]]:
    return [(c.kind, c.name) for c in changes]


def one(changes: list[SurfaceChange], kind: str, name: str) -> SurfaceChange:
    found = [c for c in changes if c.kind == kind and c.name == name]
    assert len(found) == 1, changes
    return found[0]


# -- module names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("vllm/a/b.py", "vllm.a.b"),
        ("src/pkg/mod.py", "pkg.mod"),
        ("pkg/__init__.py", "pkg"),
        ("src/pkg/__init__.py", "pkg"),
        ("setup.py", "setup"),
        ("README.md", None),
        ("pkg/stub.pyi", None),
    ],
)
def test_module_name(path: str, module: str | None) -> None:
    assert module_name(path) == module


@pytest.mark.parametrize(
    ("path", "public"),
    [
        ("vllm/engine/arg_utils.py", True),
        ("vllm/__init__.py", True),
        ("vllm/_custom_ops.py", False),
        ("vllm/_internal/x.py", False),
        ("tests/test_a.py", False),
        ("test/quantization/x.py", False),
        ("benchmarks/bench.py", False),
        ("examples/offline.py", False),
        ("vllm/benchmarks/serve.py", True),
        ("vllm/model/tests/helpers.py", False),
        ("vllm/test_utils.py", False),
        ("setup.py", False),
        (".github/scripts/release.py", False),
    ],
)
def test_public_modules(path: str, public: bool) -> None:
    assert is_public_module(path) is public


# -- names -----------------------------------------------------------------------------------


def test_removed_moved_and_renamed_names() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/a.py",
                """
                from pkg.util import helper
                LIMIT = 3
                def gone(x): ...
                def old_name(p, q=1): ...
                class Mover: ...
                def _private(): ...
                """,
                """
                def new_name(p, q=1): ...
                """,
            ),
            added("pkg/b.py", "class Mover:\n    pass\n"),
        ]
    )
    assert kinds(changes) == [
        ("removed", "LIMIT"),
        ("moved", "Mover"),
        ("removed", "gone"),
        ("removed", "helper"),
        ("renamed", "old_name"),
    ]
    moved = one(changes, "moved", "Mover")
    assert (moved.old, moved.new, moved.path, moved.line) == (
        "pkg.a.Mover",
        "pkg.b.Mover",
        "pkg/a.py",
        6,
    )
    assert one(changes, "renamed", "old_name").new == "pkg.a.new_name"
    helper = one(changes, "removed", "helper").detail
    assert localise("en", helper) == "was imported from pkg.util"
    assert localise("zh", helper) == "原本从 pkg.util 导入"
    assert all(c.certain for c in changes)


def test_a_name_left_behind_as_a_reexport_is_not_removed_and_its_changes_follow_it() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/a.py",
                "class Engine:\n    def step(self, n): ...\n",
                "from pkg.core import Engine\n",
            ),
            added("pkg/core.py", "class Engine:\n    def step(self, n, budget): ...\n"),
        ]
    )
    assert kinds(changes) == [("signature", "Engine.step")]
    change = changes[0]
    assert (change.module, change.path, change.line) == ("pkg.a", "pkg/core.py", 2)


def test_dropping_a_submodule_binding_from_a_package_is_not_a_removal() -> None:
    changes = surface_changes(
        [modified("pkg/__init__.py", "from . import dtypes\nfrom .x import Y\n", "")]
    )
    assert kinds(changes) == [("removed", "Y")]


def test_module_getattr_makes_a_removal_uncertain() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/a.py",
                "def old(): ...\n",
                "def __getattr__(name):\n    raise AttributeError(name)\n",
            )
        ]
    )
    assert kinds(changes) == [("removed", "old")]
    assert changes[0].certain is False


def test_module_renamed_removed_and_turned_into_a_package() -> None:
    changes = surface_changes(
        [
            FileVersions("pkg/old.py", "pkg/new.py", "def k(): ...\n", "def k(): ...\n"),
            FileVersions("pkg/dead.py", None, "def z(): ...\n", None),
            FileVersions("pkg/grow.py", None, "def g(): ...\n", None),
            FileVersions(None, "pkg/grow/__init__.py", None, "def g(): ...\n"),
        ]
    )
    assert [(c.kind, c.module, c.new) for c in changes] == [
        ("module_removed", "pkg.dead", ""),
        ("module_renamed", "pkg.old", "pkg.new"),
    ]


def test_a_renamed_module_with_a_shim_left_at_the_old_path_is_not_renamed() -> None:
    changes = surface_changes(
        [
            FileVersions("pkg/old.py", "pkg/new.py", "def k(): ...\n", "def k(): ...\n"),
            FileVersions(None, "pkg/old.py", None, "from pkg.new import k\n"),
        ]
    )
    assert changes == []


def test_private_and_test_modules_are_not_surface() -> None:
    changes = surface_changes(
        [
            modified("pkg/_impl.py", "def f(): ...\n", ""),
            modified("tests/test_x.py", "def helper(): ...\n", ""),
            modified("pkg/a.py", "class _Hidden:\n    def m(self): ...\n", "class _Hidden: ...\n"),
        ]
    )
    assert changes == []


# -- signatures and methods --------------------------------------------------------------------


def test_function_signature_changes_are_described() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/api.py",
                """
                def add(a, b): ...
                def drop(a, b, c=1): ...
                def rename(x, y): ...
                def order(a, b, c): ...
                def default(a, mode="fast"): ...
                def typed(a: int) -> int: ...
                """,
                """
                def add(a, b, c): ...
                def drop(a, b): ...
                def rename(x, z): ...
                def order(a, c, b): ...
                def default(a, mode="safe"): ...
                def typed(a: str) -> str: ...
                """,
            )
        ]
    )
    details = {c.name: c.detail for c in changes}
    assert details == {
        "add": "added required parameter c",
        "drop": "removed parameter c",
        "rename": "renamed parameter y to z",
        "order": "reordered positional parameters",
        "default": "default of mode: 'fast' -> 'safe'",
    }
    assert one(changes, "signature", "add").old == "(a, b)"
    assert one(changes, "signature", "add").new == "(a, b, c)"


def test_methods_of_public_classes() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/runner.py",
                """
                class Base:
                    def run(self, x, y=2): ...
                    def stop(self): ...
                    @staticmethod
                    def shape(n): ...
                    @property
                    def size(self): ...
                    def __repr__(self): ...
                    def __mangled(self): ...
                """,
                """
                class Base:
                    def run(self, x, z, y=3): ...
                    @staticmethod
                    def shape(n, m): ...
                    @property
                    def size(self): ...
                """,
            )
        ]
    )
    assert kinds(changes) == [
        ("signature", "Base.run"),
        ("signature", "Base.shape"),
        ("method_removed", "Base.stop"),
    ]
    run = one(changes, "signature", "Base.run")
    assert (run.old, run.new, run.line) == ("(self, x, y=2)", "(self, x, z, y=3)", 3)
    assert run.detail == "added required parameter z; default of y: 2 -> 3"
    assert one(changes, "signature", "Base.shape").new == "@staticmethod (n, m)"
    stop = one(changes, "method_removed", "Base.stop")
    assert stop.certain and (stop.path, stop.line) == ("pkg/runner.py", 4)


def test_a_method_may_still_come_from_a_base_class() -> None:
    before = """
        from torch.nn import Module
        class Root:
            pass
        class Local(Root):
            def hook(self): ...
        class Foreign(Module):
            def hook(self): ...
        """
    after = """
        from torch.nn import Module
        class Root:
            def hook(self): ...
        class Local(Root):
            pass
        class Foreign(Module):
            pass
        """
    changes = surface_changes([modified("pkg/m.py", before, after)])
    assert kinds(changes) == [("method_removed", "Foreign.hook")]
    assert changes[0].certain is False


# -- environment variables ---------------------------------------------------------------------


def test_env_reads_in_every_form() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/cfg.py",
                """
                import os
                from os import environ
                A = os.environ["PKG_A"]
                B = os.getenv("PKG_B", "1")
                C = environ.get("PKG_C", 0)
                D = "PKG_D" in os.environ
                os.environ["PKG_WRITTEN"] = "x"
                """,
                """
                import os
                B = os.getenv("PKG_B", "2")
                C = os.environ.get("PKG_C", 0)
                """,
            )
        ]
    )
    assert kinds([c for c in changes if c.kind.startswith("env")]) == [
        ("env_removed", "PKG_A"),
        ("env_default", "PKG_B"),
        ("env_removed", "PKG_D"),
    ]
    b = one(changes, "env_default", "PKG_B")
    assert (b.old, b.new, b.line) == ("'1'", "'2'", 3)
    assert not one(changes, "env_removed", "PKG_A").certain  # another file may read it


def test_env_registry_like_vllm() -> None:
    before = """
        import os
        from typing import Any, Callable
        def env_with_choices(name, default, choices): ...
        environment_variables: dict[str, Callable[[], Any]] = {
            "PKG_PORT": lambda: int(os.getenv("PKG_PORT", "8000")),
            "PKG_OLD": lambda: os.environ.get("PKG_OLD", "0") == "1",
            "PKG_BACKEND": env_with_choices("PKG_BACKEND", "auto", ["auto", "x"]),
        }
        """
    after = """
        import os
        from typing import Any, Callable
        def env_with_choices(name, default, choices): ...
        environment_variables: dict[str, Callable[[], Any]] = {
            "PKG_PORT": lambda: int(os.getenv("PKG_PORT", "8001")),
            "PKG_BACKEND": env_with_choices("PKG_BACKEND", "x", ["auto", "x"]),
        }
        """
    changes = surface_changes([modified("pkg/envs.py", before, after)])
    env = [c for c in changes if c.kind.startswith("env")]
    assert [(c.kind, c.name, c.old, c.new, c.certain) for c in env] == [
        ("env_default", "PKG_BACKEND", "'auto'", "'x'", True),
        ("env_removed", "PKG_OLD", "'0'", "", True),
        ("env_default", "PKG_PORT", "'8000'", "'8001'", True),
    ]
    assert one(changes, "env_removed", "PKG_OLD").line == 7


def test_variables_the_project_does_not_own_are_not_its_surface() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/dist.py",
                'import os\nR = os.getenv("LOCAL_RANK", "0")\nP = os.getenv("PKG_RANK", "0")\n',
                'import os\nP = os.getenv("PKG_RANK", "1")\n',
            )
        ]
    )
    assert kinds([c for c in changes if c.kind.startswith("env")]) == [("env_default", "PKG_RANK")]


def test_an_env_read_that_moves_to_another_file_is_not_removed() -> None:
    changes = surface_changes(
        [
            modified("pkg/a.py", 'import os\nX = os.getenv("PKG_X")\n', "X = 1\n"),
            added("pkg/b.py", 'import os\nX = os.getenv("PKG_X")\n'),
        ]
    )
    assert [c for c in changes if c.kind.startswith("env")] == []


# -- flags and config fields ----------------------------------------------------------------


def test_cli_flags() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/cli.py",
                """
                def add(parser):
                    parser.add_argument("--block-size", "-b", type=int, default=16)
                    parser.add_argument("--max-len", dest="max_len", default=None)
                    parser.add_argument("--legacy", action="store_true")
                    parser.add_argument("--eager", action="store_true")
                    parser.add_argument("--tp", **tp_kwargs)
                """,
                """
                def add(parser):
                    parser.add_argument("--block-size", "-b", type=int, default=32)
                    parser.add_argument("--max-model-len", dest="max_len", default=None)
                    parser.add_argument("--eager", action="store_false")
                    parser.add_argument("--tp", default=1)
                """,
            )
        ]
    )
    assert [(c.kind, c.name, c.old, c.new) for c in changes] == [
        ("flag_default", "--block-size", "16", "32"),
        ("flag_default", "--eager", "False", "True"),
        ("flag_removed", "--legacy", "False", ""),
        ("flag_renamed", "--max-len", "--max-len", "--max-model-len"),
    ]


def test_config_class_fields() -> None:
    changes = surface_changes(
        [
            modified(
                "pkg/config.py",
                """
                from dataclasses import dataclass, field
                from typing import ClassVar
                from pydantic import BaseModel
                @dataclass
                class CacheConfig:
                    block_size: int = 16
                    swap_space: float = 4
                    old_knob: bool = False
                    prefix: list[str] = field(default_factory=list)
                    registry: ClassVar[dict] = {}
                class ServerSettings(BaseModel):
                    host: str = "0.0.0.0"
                    port: int
                """,
                """
                from dataclasses import dataclass, field
                from pydantic import BaseModel
                @dataclass
                class CacheConfig:
                    block_size: int = field(default=32)
                    swap: float = 4
                    prefix: list[str] = field(default_factory=list)
                class ServerSettings(BaseModel):
                    host: str = "127.0.0.1"
                    port: int
                """,
            )
        ]
    )
    assert [(c.kind, c.name, c.old, c.new) for c in changes] == [
        ("field_default", "CacheConfig.block_size", "16", "32"),
        ("field_removed", "CacheConfig.old_knob", "False", ""),
        ("field_renamed", "CacheConfig.swap_space", "CacheConfig.swap_space", "CacheConfig.swap"),
        ("field_default", "ServerSettings.host", "'0.0.0.0'", "'127.0.0.1'"),
    ]


# -- bad input, determinism, laziness -----------------------------------------------------------


def test_a_side_that_does_not_parse_is_reported_once_and_nothing_is_guessed() -> None:
    changes = surface_changes(
        [
            modified("pkg/a.py", "def f(): ...\n", "def f(:\n"),
            modified("pkg/b.py", "def (\n", "def g(): ...\n"),
            FileVersions("pkg/c.py", "pkg/c.py", "def h(): ...\n", None),
        ]
    )
    assert [(c.kind, c.path, c.detail) for c in changes] == [
        ("unparsed", "pkg/a.py", "new version does not parse"),
        ("unparsed", "pkg/b.py", "old version does not parse"),
        ("unparsed", "pkg/c.py", "new version does not parse"),
    ]


def test_order_does_not_depend_on_input_order() -> None:
    files = [
        modified("pkg/a.py", "def a(x): ...\nclass K: ...\n", "def a(y): ...\n"),
        modified(
            "pkg/b.py", 'import os\nos.getenv("PKG_Q", 1)\n', 'import os\nos.getenv("PKG_Q", 2)\n'
        ),
        added("pkg/c.py", "class K: ...\n"),
        FileVersions("pkg/d.py", None, "def d(): ...\n", None),
    ]
    expected = surface_changes(files)
    for seed in range(5):
        shuffled = files[:]
        random.Random(seed).shuffle(shuffled)
        assert surface_changes(shuffled) == expected


def test_interest_limits_comparison_but_still_finds_destinations() -> None:
    files = [
        modified("pkg/a.py", "class Mover: ...\ndef f(x): ...\n", "def f(x, y): ...\n"),
        modified("pkg/other.py", "def g(x): ...\n", "def g(): ...\n"),
        added("pkg/b.py", "class Mover: ...\n"),
        modified("pkg/env.py", 'import os\nos.getenv("PKG_E", 1)\n', ""),
    ]
    interest = Interest(frozenset({"pkg", "pkg.a", "pkg.a.Mover"}))
    changes = SurfaceDiffer().changes(files, interest)
    assert kinds(changes) == [("moved", "Mover"), ("signature", "f")]
    with_env = SurfaceDiffer().changes(files, Interest(env=frozenset({"PKG_E"})))
    assert kinds(with_env) == [("env_removed", "PKG_E")]


def test_versions_from_changes_reads_python_blobs_only_and_only_when_needed() -> None:
    blobs = {"1" * 40: b"old = 1\n", "2" * 40: b"new = 1\n"}
    reads: list[str] = []

    def read(oid: str) -> bytes | None:
        reads.append(oid)
        return blobs.get(oid)

    changes = [
        FileChange("pkg/a.py", FileStatus.MODIFIED, old_blob="1" * 40, new_blob="2" * 40),
        FileChange("pkg/n.py", FileStatus.ADDED, old_blob="0" * 40, new_blob="2" * 40),
        FileChange("pkg/c.py", FileStatus.COPIED, old_path="pkg/a.py", new_blob="2" * 40),
        FileChange("pkg/gone.py", FileStatus.DELETED, old_blob="3" * 40, new_blob="0" * 40),
        FileChange("README.md", FileStatus.MODIFIED, old_blob="1" * 40, new_blob="2" * 40),
        FileChange("pkg/l.py", FileStatus.MODIFIED, new_mode="120000", new_blob="2" * 40),
    ]
    versions = versions_from_changes(changes, read)
    assert reads == []
    assert [(v.old_path, v.new_path, v.old_id, v.new_id) for v in versions] == [
        ("pkg/a.py", "pkg/a.py", "1" * 40, "2" * 40),
        (None, "pkg/n.py", "", "2" * 40),
        (None, "pkg/c.py", "", "2" * 40),
        ("pkg/gone.py", None, "3" * 40, ""),
    ]
    # A module the downstream does not use is never read.
    assert SurfaceDiffer().changes(versions, Interest(frozenset({"other"}))) == []
    assert reads == []
    # The unreadable old side of the deleted file is reported, not treated as empty.
    assert [(c.kind, c.path) for c in surface_changes(versions)] == [
        ("removed", "pkg/a.py"),
        ("unparsed", "pkg/gone.py"),
    ]
    assert sorted(set(reads)) == ["1" * 40, "2" * 40, "3" * 40]


def test_reexports_map_short_paths_to_definitions() -> None:
    aliases = reexports(
        [
            ("pkg/__init__.py", "from pkg.engine.llm import LLM\nfrom typing import Any\n"),
            ("pkg/sub/__init__.py", "from .impl import Thing as Public, _hidden\n"),
            ("tests/__init__.py", "from pkg import LLM\n"),
        ]
    )
    assert aliases == {"pkg.LLM": "pkg.engine.llm.LLM", "pkg.sub.Public": "pkg.sub.impl.Thing"}


def test_spellings_follow_aliases_by_longest_prefix_without_looping() -> None:
    aliases = {"up.LLM": "up.entry.llm.LLM", "up.entry": "up.entry", "a": "b", "b": "a"}
    assert spellings("up.LLM.generate", aliases) == ["up.LLM.generate", "up.entry.llm.LLM.generate"]
    assert spellings("up.other", aliases) == ["up.other"]
    assert spellings("a.x", aliases) == ["a.x", "b.x"]
