"""An upstream history that breaks a plugin in five ways, and a plugin that uses each.

The upstream repository is real git: one commit per kind of change (module
rename, class move, base-class method signature, removed env var, CLI flag
default), plus a commit the plugin does not care about. The plugin checkout
imports, subclasses, overrides, monkey-patches and reads each thing. Every
break must be found at the right ``file:line``, nothing else may be called a
break, and what the index cannot see is counted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import dedent

import pytest

from repoherald.analysis.downstream import DownstreamIndex
from repoherald.analysis.impact import BREAKS, CHANGES, Impact, match, match_watch
from repoherald.analysis.surface import SurfaceDiffer, versions_from_changes
from repoherald.sources.checkout import index_checkout
from repoherald.sources.git.repo import open_local
from tests.gitfixture import GitFixture

DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

UPSTREAM = {
    "up/__init__.py": "",
    "up/envs.py": """
        import os
        from typing import Any, Callable

        environment_variables: dict[str, Callable[[], Any]] = {
            "UP_PORT": lambda: int(os.getenv("UP_PORT", "8000")),
            "UP_FAST_PATH": lambda: os.getenv("UP_FAST_PATH", "0") == "1",
        }

        def __getattr__(name: str) -> Any:
            if name in environment_variables:
                return environment_variables[name]()
            raise AttributeError(name)
        """,
    "up/attention/__init__.py": "",
    "up/attention/selector.py": """
        def get_attn_backend(head_size: int, dtype: str) -> str:
            return "flash"
        """,
    "up/sampling.py": """
        class SamplingParams:
            def __init__(self, n: int = 1, temperature: float = 1.0) -> None:
                self.n = n

        def clamp(x: float) -> float:
            return x
        """,
    "up/worker/__init__.py": "",
    "up/worker/base.py": """
        class WorkerBase:
            def load_model(self) -> None: ...

            def execute_model(self, scheduler_output):
                return scheduler_output
        """,
    "up/entrypoints/__init__.py": "",
    "up/entrypoints/cli.py": """
        def make_parser(parser):
            parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
            parser.add_argument("--port", type=int, default=8000)
            return parser
        """,
    "up/other.py": "def unrelated(a, b):\n    return a\n",
    "docs/index.md": "# up\n",
}

PLUGIN = {
    "plug/__init__.py": "",
    "plug/attention.py": """
        from up.attention.selector import get_attn_backend

        def backend() -> str:
            return get_attn_backend(64, "fp16")
        """,
    "plug/sampling.py": """
        import up.sampling as sampling
        from up.sampling import SamplingParams, clamp

        def greedy() -> SamplingParams:
            return sampling.SamplingParams(n=1, temperature=clamp(0.0))
        """,
    "plug/worker.py": """
        from up.worker.base import WorkerBase

        class PluginWorker(WorkerBase):
            def load_model(self) -> None:
                super().load_model()

            def execute_model(self, scheduler_output):
                return super().execute_model(scheduler_output)
        """,
    "plug/patches.py": """
        import up.attention.selector
        import up.worker.base

        def my_backend(head_size, dtype):
            return "plugin"

        up.attention.selector.get_attn_backend = my_backend
        up.worker.base.WorkerBase.load_model = lambda self: None
        """,
    "plug/env.py": """
        import os
        from up import envs

        def enable_fast_path() -> int:
            os.environ["UP_FAST_PATH"] = "1"
            return envs.UP_PORT
        """,
    "plug/launch.py": """
        import subprocess

        def serve(model: str) -> None:
            subprocess.run(["up", "serve", model, "--port", "9000"], check=True)

        def serve_small(model: str) -> None:
            subprocess.run(["up", "serve", model, "--gpu-memory-utilization", "0.5"], check=True)
        """,
    "plug/dynamic.py": """
        from up import envs
        from up.envs import *

        def read(name: str) -> object:
            return getattr(envs, name)
        """,
    "plug/broken.py": "from up.worker.base import (\n",
    "tests/test_sampling.py": """
        from unittest.mock import patch

        @patch("up.sampling.SamplingParams")
        def test_greedy(params):
            from plug.sampling import greedy
            greedy()
        """,
}


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[GitFixture, dict[str, str]]:
    """The upstream repository; returns it and the SHA of each commit by label."""
    fx = GitFixture.init(tmp_path / "up")
    fx.write_many({path: dedent(text) for path, text in UPSTREAM.items()})
    shas = {"base": fx.commit("Initial import", when=DAY)}

    fx.move("up/attention/selector.py", "up/attention/backend_registry.py")
    shas["rename_module"] = fx.commit("[Refactor] Rename selector", when=DAY + timedelta(hours=1))

    fx.write("up/sampling.py", "def clamp(x: float) -> float:\n    return x\n")
    fx.write("up/params.py", dedent(UPSTREAM["up/sampling.py"]).split("\ndef clamp")[0])
    shas["move_class"] = fx.commit("[Core] Move SamplingParams", when=DAY + timedelta(hours=2))

    base = dedent(UPSTREAM["up/worker/base.py"]).replace(
        "def execute_model(self, scheduler_output):",
        "def execute_model(self, scheduler_output, intermediate_tensors=None):",
    )
    fx.write("up/worker/base.py", base)
    shas["signature"] = fx.commit("[V1] Pass intermediate tensors", when=DAY + timedelta(hours=3))

    envs = dedent(UPSTREAM["up/envs.py"]).replace(
        '    "UP_FAST_PATH": lambda: os.getenv("UP_FAST_PATH", "0") == "1",\n', ""
    )
    fx.write("up/envs.py", envs)
    shas["env"] = fx.commit("[Cleanup] Drop UP_FAST_PATH", when=DAY + timedelta(hours=4))

    cli = dedent(UPSTREAM["up/entrypoints/cli.py"]).replace("default=0.9", "default=0.92")
    fx.write("up/entrypoints/cli.py", cli)
    shas["flag"] = fx.commit("[Perf] Raise memory utilization", when=DAY + timedelta(hours=5))

    fx.write("up/other.py", "def unrelated(a):\n    return a\n")
    fx.write("docs/index.md", "# up, documented\n")
    shas["noise"] = fx.commit("[Misc] Unrelated change", when=DAY + timedelta(hours=6))
    return fx, shas


@pytest.fixture
def plugin_index(tmp_path: Path) -> DownstreamIndex:
    root = tmp_path / "plugin"
    for rel, text in PLUGIN.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dedent(text), encoding="utf-8")
    return index_checkout(root, ("up",))


def impacts_by_commit(
    fx: GitFixture, shas: dict[str, str], index: DownstreamIndex, with_interest: bool
) -> dict[str, list[Impact]]:
    """Run surface + match over each commit, reading blobs through the project's git reader."""
    differ = SurfaceDiffer()
    interest = index.interest() if with_interest else None
    out: dict[str, list[Impact]] = {}
    with open_local(str(fx.path)) as repo:
        commits = repo.read_commits(shas.values())
        diffs = repo.diff_first_parent(commits.values())
        for label, sha in shas.items():
            files = versions_from_changes(diffs[sha], lambda oid: repo.read_blob(oid, 2_000_000))
            out[label] = match(differ.changes(files, interest), index)
    return out


def brief(impacts: list[Impact]) -> list[tuple[str, str, str, str, int]]:
    return [(i.kind, i.reason_code, i.upstream, i.path, i.line) for i in impacts]


@pytest.mark.parametrize("with_interest", [True, False])
def test_every_break_is_found_at_its_line_and_nothing_else_breaks(
    upstream: tuple[GitFixture, dict[str, str]],
    plugin_index: DownstreamIndex,
    with_interest: bool,
) -> None:
    fx, shas = upstream
    found = impacts_by_commit(fx, shas, plugin_index, with_interest)
    selector = "up.attention.selector"
    assert brief(found["rename_module"]) == [
        (BREAKS, "import_fails", selector, "plug/attention.py", 2),
        (BREAKS, "import_fails", selector, "plug/patches.py", 2),
        (BREAKS, "patch_target_gone", selector, "plug/patches.py", 8),
    ]
    assert found["rename_module"][0].replacement == "up.attention.backend_registry"
    assert brief(found["move_class"]) == [
        (BREAKS, "import_fails", "up.sampling.SamplingParams", "plug/sampling.py", 3),
        (BREAKS, "attribute_fails", "up.sampling.SamplingParams", "plug/sampling.py", 6),
        (BREAKS, "patch_target_gone", "up.sampling.SamplingParams", "tests/test_sampling.py", 4),
    ]
    assert {i.replacement for i in found["move_class"]} == {"up.params.SamplingParams"}
    # The override no longer matches; its super() call still binds (the new
    # parameter has a default), so it is not reported.
    assert brief(found["signature"]) == [
        (
            BREAKS,
            "override_mismatch",
            "up.worker.base.WorkerBase.execute_model",
            "plug/worker.py",
            8,
        ),
    ]
    assert "intermediate_tensors" in found["signature"][0].detail
    assert brief(found["env"]) == [
        (BREAKS, "env_removed", "UP_FAST_PATH", "plug/env.py", 6),
    ]
    assert brief(found["flag"]) == [
        (CHANGES, "flag_default_changed", "--gpu-memory-utilization", "plug/launch.py", 8),
    ]
    assert found["flag"][0].detail == "default of --gpu-memory-utilization: 0.9 -> 0.92"
    assert found["noise"] == []
    assert found["base"] == []


def test_what_cannot_be_checked_is_counted(plugin_index: DownstreamIndex) -> None:
    assert [(n.path, n.line, n.reason) for n in plugin_index.not_checked] == [
        ("plug/broken.py", 1, "syntax"),
        ("plug/dynamic.py", 3, "star_import"),
        ("plug/dynamic.py", 6, "dynamic_getattr"),
    ]
    assert plugin_index.files == len(PLUGIN)


def test_watch_globs_over_the_same_history(upstream: tuple[GitFixture, dict[str, str]]) -> None:
    fx, shas = upstream
    with open_local(str(fx.path)) as repo:
        commits = repo.read_commits(shas.values())
        diffs = repo.diff_first_parent(commits.values())
    globs = ["up/attention/**", "up/worker/*.py", "csrc/**"]
    hits = {
        label: match_watch([f.path for f in diffs[sha]], globs)
        for label, sha in shas.items()
        if label != "base"
    }
    assert hits == {
        "rename_module": [("up/attention/**", "up/attention/backend_registry.py")],
        "move_class": [],
        "signature": [("up/worker/*.py", "up/worker/base.py")],
        "env": [],
        "flag": [],
        "noise": [],
    }
