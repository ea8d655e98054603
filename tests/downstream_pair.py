"""A fixture pair for the downstream check: an upstream history that breaks a plugin five ways.

The upstream repository is real git: one commit per kind of change (module
rename, class move, base-class method signature, removed env var, CLI flag
default), plus a commit the plugin does not care about. The plugin checkout
imports, subclasses, overrides, monkey-patches and reads each thing, and has
a file that does not parse, a star-import and a dynamic ``getattr``. Shared by
the library test (:mod:`tests.integration.test_downstream_fixture`) and the
end-to-end test of the report (:mod:`tests.e2e.test_downstream_report`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import dedent

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


def build_upstream(root: Path) -> tuple[GitFixture, dict[str, str]]:
    """The upstream repository at ``root``; returns it and the SHA of each commit by label."""
    fx = GitFixture.init(root)
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


def write_plugin(root: Path) -> Path:
    """The plugin checkout at ``root`` (plain files, not a git repository); returns ``root``."""
    for rel, text in PLUGIN.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dedent(text), encoding="utf-8")
    return root


EXPECTED = {
    "rename_module": [
        ("breaks", "import_fails", "up.attention.selector", "plug/attention.py", 2),
        ("breaks", "import_fails", "up.attention.selector", "plug/patches.py", 2),
        ("breaks", "patch_target_gone", "up.attention.selector", "plug/patches.py", 8),
    ],
    "move_class": [
        ("breaks", "import_fails", "up.sampling.SamplingParams", "plug/sampling.py", 3),
        ("breaks", "attribute_fails", "up.sampling.SamplingParams", "plug/sampling.py", 6),
        ("breaks", "patch_target_gone", "up.sampling.SamplingParams", "tests/test_sampling.py", 4),
    ],
    "signature": [
        (
            "breaks",
            "override_mismatch",
            "up.worker.base.WorkerBase.execute_model",
            "plug/worker.py",
            8,
        ),
    ],
    "env": [("breaks", "env_removed", "UP_FAST_PATH", "plug/env.py", 6)],
    "flag": [
        ("changes", "flag_default_changed", "--gpu-memory-utilization", "plug/launch.py", 8),
    ],
}
"""What each upstream commit breaks or changes in the plugin: (kind, reason code, upstream
name, path, line). The other commits ("base", "noise") affect nothing."""

NOT_CHECKED = {"syntax": 1, "star_import": 1, "dynamic_getattr": 1}
"""What the plugin's index cannot see: broken.py does not parse, dynamic.py star-imports
and reads a computed attribute."""
