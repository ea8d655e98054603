"""Matching a commit's changed surface against a downstream index, and watch globs."""

from __future__ import annotations

from textwrap import dedent

import pytest

from repoherald.analysis.downstream.impact import Impact, match, match_watch
from repoherald.analysis.downstream.index import DownstreamIndex, build_index
from repoherald.analysis.downstream.visit import index_source
from repoherald.analysis.surface.change import FileVersions, SurfaceChange, surface_changes
from repoherald.errors import UsageError
from repoherald.i18n import localise

PKGS = ("up",)


def downstream(**files: str) -> DownstreamIndex:
    parts = [
        index_source(f"{name.replace('__', '/')}.py", dedent(src).encode(), PKGS)
        for name, src in files.items()
    ]
    return build_index("/plugin", PKGS, parts)


def upstream(path: str, old: str | None, new: str | None) -> FileVersions:
    return FileVersions(
        path if old is not None else None,
        path if new is not None else None,
        dedent(old) if old is not None else None,
        dedent(new) if new is not None else None,
    )


def summary(impacts: list[Impact]) -> list[tuple[str, str, str, int]]:
    return [(i.kind, i.reason_code, i.upstream, i.line) for i in impacts]


# -- names ------------------------------------------------------------------------------------

UP_A_OLD = """
def helper(x): ...
class Engine:
    def step(self, n): ...
def legacy(): ...
"""
UP_A_NEW = """
def helper(x): ...
def __getattr__(name): ...
"""


def name_changes() -> list[SurfaceChange]:
    return surface_changes(
        [
            upstream("up/a.py", UP_A_OLD, UP_A_NEW),
            upstream("up/core.py", None, "class Engine:\n    def step(self, n): ...\n"),
        ]
    )


def test_imports_and_attributes_of_vanished_names() -> None:
    index = downstream(
        plug__x="""
        from up.a import Engine, helper
        import up
        import up.a as a

        Engine(1).step(2)
        up.a.Engine
        a.legacy()
        a.helper(1)
        try:
            from up.a import Engine as E2
        except ImportError:
            E2 = None
        getattr(a, "Engine", None)
        """
    )
    assert summary(match(name_changes(), index)) == [
        ("breaks", "import_fails", "up.a.Engine", 2),
        ("breaks", "attribute_fails", "up.a.Engine", 7),
        ("changes", "maybe_attribute_fails", "up.a.legacy", 8),
        ("changes", "guarded", "up.a.Engine", 11),
        ("changes", "guarded", "up.a.Engine", 14),
    ]
    moved = match(name_changes(), index)[0]
    assert (moved.replacement, moved.upstream_path, moved.upstream_line) == (
        "up.core.Engine",
        "up/a.py",
        3,
    )
    assert localise("en", moved.detail) == "up.a.Engine moved to up.core.Engine"
    assert localise("zh", moved.detail) == "up.a.Engine 已移到 up.core.Engine"


def test_modules_renamed_and_package_init_removed() -> None:
    changes = surface_changes(
        [
            FileVersions("up/old.py", "up/new.py", "X = 1\n", "X = 1\n"),
            FileVersions("up/pkg/__init__.py", None, "Y = 1\n", None),
        ]
    )
    index = downstream(
        plug__m="""
        import up.old
        from up.old import X
        from up.pkg import Y
        from up.pkg.sub import Z
        import up.pkg.sub
        """
    )
    assert summary(match(changes, index)) == [
        ("breaks", "import_fails", "up.old", 2),
        ("breaks", "import_fails", "up.old", 3),
        ("breaks", "import_fails", "up.pkg.Y", 4),
    ]


def test_patches_of_vanished_names() -> None:
    index = downstream(
        tests__test_p="""
        from unittest.mock import patch
        import up.a

        up.a.legacy = None
        @patch("up.a.Engine.step")
        def test(monkeypatch):
            monkeypatch.setattr(up.a, "helper", None)
        """
    )
    assert summary(match(name_changes(), index)) == [
        ("changes", "maybe_patch_target_gone", "up.a.legacy", 5),
        ("breaks", "patch_target_gone", "up.a.Engine", 6),
    ]


# -- calls, overrides ------------------------------------------------------------------------

SIG_OLD = """
def load(path, strict=True, mode="r"): ...
def shape(a, b, c=0): ...
class Runner:
    def __init__(self, config, device="cpu"): ...
    def execute(self, batch, timeout=None): ...
    def warm_up(self): ...
    def profile(self, n): ...
"""
SIG_NEW = """
def load(path, *, strict=True, mode="rb"): ...
def shape(a, c=0, b=None): ...
class Runner:
    def __init__(self, vllm_config, device="cpu"): ...
    def execute(self, batch, intermediate, timeout=None): ...
    def profile(self, n): ...
"""


def sig_changes() -> list[SurfaceChange]:
    return surface_changes([upstream("up/api.py", SIG_OLD, SIG_NEW)])


def test_calls_that_stop_binding_bind_differently_or_lose_a_default() -> None:
    index = downstream(
        plug__calls="""
        from up.api import load, shape, Runner

        load("p", False)
        load("p", strict=False)
        load("p", mode="w")
        shape(1, 2)
        shape(1, b=2)
        Runner(config=1)
        Runner(1)
        load()
        try:
            load("p", False)
        except TypeError:
            pass
        """
    )
    assert summary(match(sig_changes(), index)) == [
        ("breaks", "call_fails", "up.api.load", 4),
        ("changes", "default_changed", "up.api.load", 5),
        ("breaks", "call_fails", "up.api.shape", 7),
        ("breaks", "call_fails", "up.api.Runner.__init__", 9),
        ("changes", "guarded", "up.api.load", 13),
    ]
    first = match(sig_changes(), index)[0]
    assert (
        localise("en", first.detail) == "2 positional arguments, at most 1 accepted "
        "(up.api.load(path, *, strict=True, mode='rb'))"
    )
    assert localise("zh", first.detail) == (
        "传入 2 个位置参数，最多只接受 1 个（up.api.load(path, *, strict=True, mode='rb')）"
    )


def test_overrides_and_super_calls() -> None:
    index = downstream(
        plug__runner="""
        from up.api import Runner

        class MyRunner(Runner):
            def __init__(self, config):
                super().__init__(config)

            def execute(self, batch, timeout=None):
                return super().execute(batch, timeout=timeout)

            def warm_up(self):
                super().warm_up()

            def profile(self, n):
                return 0
        """
    )
    impacts = match(sig_changes(), index)
    assert summary(impacts) == [
        ("breaks", "override_mismatch", "up.api.Runner.__init__", 5),
        ("breaks", "override_mismatch", "up.api.Runner.execute", 8),
        ("breaks", "super_call_fails", "up.api.Runner.execute", 9),
        ("breaks", "override_orphaned", "up.api.Runner.warm_up", 11),
        ("breaks", "super_call_fails", "up.api.Runner.warm_up", 12),
    ]
    assert localise("en", impacts[1].detail) == (
        "plug.runner.MyRunner.execute does not accept the new parameter intermediate "
        "(up.api.Runner.execute(self, batch, intermediate, timeout=None))"
    )
    assert localise("zh", impacts[1].detail) == (
        "plug.runner.MyRunner.execute：不接受新参数 intermediate"
        "（up.api.Runner.execute(self, batch, intermediate, timeout=None)）"
    )
    assert localise("zh", impacts[3].detail) == (
        "重写了 up.api.Runner.warm_up，但基类已没有这个方法，它不会再被调用"
    )


def test_calls_and_attributes_through_an_instance() -> None:
    index = downstream(
        plug__use="""
        from up.api import Runner

        runner = Runner({})
        runner.execute([1, 2])
        runner.warm_up()
        runner.profile(3)
        """
    )
    # Runner({}) still binds: the renamed constructor parameter is passed by position.
    assert summary(match(sig_changes(), index)) == [
        ("breaks", "call_fails", "up.api.Runner.execute", 5),
        ("breaks", "attribute_fails", "up.api.Runner.warm_up", 6),
    ]


def test_reexported_names_meet_changes_at_their_definition() -> None:
    index = downstream(plug__short="from up import load\nload('p', False)\n")
    assert match(sig_changes(), index) == []
    aliased = match(sig_changes(), index, aliases={"up.load": "up.api.load"})
    assert summary(aliased) == [("breaks", "call_fails", "up.api.load", 2)]


# -- env vars, flags, fields -------------------------------------------------------------------


def test_env_vars_flags_and_fields() -> None:
    changes = surface_changes(
        [
            upstream(
                "up/envs.py",
                """
                import os
                environment_variables = {
                    "UP_OLD": lambda: os.getenv("UP_OLD", "0"),
                    "UP_PORT": lambda: int(os.getenv("UP_PORT", "80")),
                }
                """,
                """
                import os
                environment_variables = {
                    "UP_PORT": lambda: int(os.getenv("UP_PORT", "8080")),
                }
                """,
            ),
            upstream("up/util.py", 'import os\nA = os.getenv("UP_ADHOC")\n', "A = 1\n"),
            upstream(
                "up/cli.py",
                """
                from dataclasses import dataclass
                def add(p):
                    p.add_argument("--old-flag", default=1)
                    p.add_argument("--block-size", default=16)
                    p.add_argument("--mine", default=1)
                @dataclass
                class Cfg:
                    size: int = 1
                    legacy: bool = False
                """,
                """
                from dataclasses import dataclass
                def add(p):
                    p.add_argument("--block-size", default=32)
                @dataclass
                class Cfg:
                    size: int = 2
                """,
            ),
        ]
    )
    index = downstream(
        plug__cfg="""
        import os
        from up import envs
        from up.cli import Cfg

        os.environ["UP_OLD"] = "1"
        os.environ.setdefault("UP_PORT", "81")
        os.environ["UP_ADHOC"] = "1"
        envs.UP_OLD
        cmd = ["up", "serve", "--old-flag", "2", "--block-size", "8", "--mine"]
        Cfg(legacy=True)
        Cfg(size=3)
        parser.add_argument("--mine")
        """
    )
    assert summary(match(changes, index)) == [
        ("breaks", "env_removed", "UP_OLD", 6),
        ("changes", "env_default_changed", "UP_PORT", 7),
        ("changes", "env_read_removed", "UP_ADHOC", 8),
        ("breaks", "attribute_fails", "up.envs.UP_OLD", 9),
        ("breaks", "flag_removed", "--old-flag", 10),
        ("changes", "flag_default_changed", "--block-size", 10),
        ("breaks", "field_removed", "up.cli.Cfg.legacy", 11),
        ("changes", "field_default_changed", "up.cli.Cfg.size", 11),
    ]


def test_nothing_is_reported_for_what_the_downstream_does_not_use() -> None:
    index = downstream(plug__q="from up.other import thing\nthing(1, x=2)\nimport os\n")
    changes = name_changes() + sig_changes()
    assert match(changes, index) == []
    assert match([], index) == []


# -- watch globs ----------------------------------------------------------------------------------


def test_watch_globs_with_double_star() -> None:
    paths = [
        "vllm/attention/backends/flash.py",
        "vllm/attention/__init__.py",
        "vllm/v1/attention/x.py",
        "vllm/config.py",
        "docs/config.py",
        "README.md",
    ]
    assert match_watch(
        paths, ["vllm/attention/**", "**/config.py", "vllm/*.py", "vllm/**/attention/*.py", "*.md"]
    ) == [
        ("vllm/attention/**", "vllm/attention/backends/flash.py"),
        ("vllm/attention/**", "vllm/attention/__init__.py"),
        ("**/config.py", "vllm/config.py"),
        ("**/config.py", "docs/config.py"),
        ("vllm/*.py", "vllm/config.py"),
        ("vllm/**/attention/*.py", "vllm/attention/__init__.py"),
        ("vllm/**/attention/*.py", "vllm/v1/attention/x.py"),
        ("*.md", "README.md"),
    ]
    assert match_watch(paths, ["vllm/**/**/config.py", "csrc/**"]) == [
        ("vllm/**/**/config.py", "vllm/config.py")
    ]


@pytest.mark.parametrize("glob", ["", "  ", "/abs/**", "a\\b", "../up/**"])
def test_bad_watch_globs_are_usage_errors(glob: str) -> None:
    with pytest.raises(UsageError, match="watch glob"):
        match_watch(["a.py"], [glob])
