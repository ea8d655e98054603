"""The downstream index: what a checkout imports, calls, subclasses, patches and mentions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from textwrap import dedent

import pytest

from repoherald.analysis.downstream import index as ds
from repoherald.analysis.downstream.index import DownstreamIndex, build_index
from repoherald.analysis.downstream.visit import index_source
from repoherald.errors import SourceError
from repoherald.sources.checkout import index_checkout, index_key
from tests.gitfixture import GitFixture

PKGS = ("vllm",)


def index(source: str, path: str = "plug/mod.py") -> ds.FileIndex:
    return index_source(path, dedent(source).encode(), PKGS)


def refs(fi: ds.FileIndex) -> list[tuple[str, int, str, str]]:
    return [(r.target, r.line, r.how, r.base) for r in fi.refs]


# -- names and chains ---------------------------------------------------------------------


def test_imports_bind_names_and_attribute_chains_resolve_through_them() -> None:
    fi = index(
        """
        import vllm
        import vllm.engine.arg_utils
        import vllm.model_executor as me
        from vllm.config import CacheConfig as CC
        import torch

        vllm.envs.VLLM_X
        me.layers.Linear
        CC.block_size
        torch.nn.Linear
        """
    )
    assert refs(fi) == [
        ("vllm", 2, "import", ""),
        ("vllm.engine.arg_utils", 3, "import", ""),
        ("vllm.model_executor", 4, "import", ""),
        ("vllm.config.CacheConfig", 5, "import", ""),
        ("vllm.envs.VLLM_X", 8, "attr", "vllm"),
        ("vllm.model_executor.layers.Linear", 9, "attr", "vllm.model_executor"),
        ("vllm.config.CacheConfig.block_size", 10, "attr", "vllm.config.CacheConfig"),
    ]


def test_parameters_and_assignments_shadow_and_aliases_follow() -> None:
    fi = index(
        """
        from vllm import utils

        def f(utils):
            utils.cdiv(1, 2)

        def g():
            u = utils
            u.cdiv(3, 4)
            utils = object()
            utils.cdiv(5, 6)

        utils.round_up(1, 2)
        """
    )
    assert [(c.target, c.line) for c in fi.calls] == [
        ("vllm.utils.cdiv", 9),
        ("vllm.utils.round_up", 13),
    ]


def test_calls_record_what_they_pass() -> None:
    fi = index(
        """
        from vllm import LLM
        args, kw = (), {}
        LLM("m", 2, max_model_len=10, enforce_eager=True)
        LLM(*args, **kw)
        """
    )
    assert [(c.positional, c.keywords, c.star_args, c.star_kwargs) for c in fi.calls] == [
        (2, ("max_model_len", "enforce_eager"), False, False),
        (0, (), True, True),
    ]


def test_instances_of_upstream_classes_resolve_their_methods() -> None:
    fi = index(
        """
        from vllm import LLM

        llm = LLM(model="m")
        llm.generate(["hi"], use_tqdm=False)
        llm.tokenizer = None
        setattr(llm, "engine", None)
        engine = llm.llm_engine
        LLM("other").generate([])
        """
    )
    assert [(c.target, c.line, c.instance) for c in fi.calls] == [
        ("vllm.LLM", 4, False),
        ("vllm.LLM.generate", 5, True),
        ("vllm.LLM.generate", 9, True),
        ("vllm.LLM", 9, False),
    ]
    assert fi.patches == []  # an instance's attributes are its own business
    assert refs(fi)[-3:] == [
        ("vllm.LLM.generate", 5, "attr", "vllm.LLM"),
        ("vllm.LLM.llm_engine", 8, "attr", "vllm.LLM"),
        ("vllm.LLM.generate", 9, "attr", "vllm.LLM"),
    ]


def test_relative_imports_resolve_within_the_downstream_package() -> None:
    fi = index("from . import sibling\nfrom ..top import thing\n", path="plug/sub/mod.py")
    assert fi.refs == []
    fi = index(
        "from .base import Runner\nclass Mine(Runner):\n    pass\n", path="plug/sub/__init__.py"
    )
    assert fi.classes[0].bases == ("plug.sub.base.Runner",)


# -- classes -------------------------------------------------------------------------------


def test_subclasses_overrides_and_super_calls_across_files() -> None:
    base = index_source(
        "plug/base.py",
        dedent(
            """
            from vllm.worker import Worker

            class PluginWorker(Worker):
                def load_model(self, path, *, strict=True):
                    return super().load_model(path, strict=strict)

                def execute(self, batch):
                    return super().execute(batch)
            """
        ).encode(),
        PKGS,
    )
    child = index_source(
        "plug/child.py",
        dedent(
            """
            from plug.base import PluginWorker

            class FastWorker(PluginWorker):
                def execute(self, batch):
                    return super().execute(batch)

                def warm_up(self):
                    super().warm_up()
            """
        ).encode(),
        PKGS,
    )
    plain = index_source("plug/plain.py", b"class Local:\n    def f(self): ...\n", PKGS)
    idx = build_index("/x", PKGS, [child, base, plain])
    assert [(c.qualname, c.bases, [m.name for m in c.methods]) for c in idx.classes] == [
        ("plug.base.PluginWorker", ("vllm.worker.Worker",), ["load_model", "execute"]),
        ("plug.child.FastWorker", ("vllm.worker.Worker",), ["execute", "warm_up"]),
    ]
    assert idx.classes[0].methods[0].signature == "(self, path, *, strict=True)"
    supers = [(c.target, c.path, c.line, c.keywords) for c in idx.calls if c.via_super]
    # FastWorker.execute's super() reaches PluginWorker.execute (downstream), not vllm's.
    assert supers == [
        ("vllm.worker.Worker.load_model", "plug/base.py", 6, ("strict",)),
        ("vllm.worker.Worker.execute", "plug/base.py", 9, ()),
        ("vllm.worker.Worker.warm_up", "plug/child.py", 9, ()),
    ]


def test_a_third_party_base_first_in_the_bases_hides_super_targets() -> None:
    fi = index(
        """
        import torch
        from vllm.layers import Base

        class Mixed(torch.nn.Module, Base):
            def forward(self, x):
                return super().forward(x)
        """
    )
    idx = build_index("/x", PKGS, [fi])
    assert [c.qualname for c in idx.classes] == ["plug.mod.Mixed"]
    assert [c for c in idx.calls if c.via_super] == []


# -- patches, strings, guards ---------------------------------------------------------------


def test_monkey_patches_in_every_form() -> None:
    fi = index(
        """
        import vllm.platforms as platforms
        from unittest import mock
        from unittest.mock import patch
        import vllm

        platforms.current = object()
        vllm.model_executor.layers.Linear.forward = lambda self, x: x
        setattr(platforms, "detect", None)

        @patch("vllm.engine.llm_engine.LLMEngine.step")
        def test_a(step, monkeypatch, mocker):
            mock.patch.object(platforms, "current_platform")
            monkeypatch.setattr(platforms, "cuda", 1)
            monkeypatch.setattr("vllm.utils.is_pin_memory_available", lambda: False)
            mocker.patch("torch.cuda.is_available")
            del vllm.envs.VLLM_Y
        """
    )
    assert [(p.target, p.line, p.how) for p in fi.patches] == [
        ("vllm.platforms.current", 7, "assign"),
        ("vllm.model_executor.layers.Linear.forward", 8, "assign"),
        ("vllm.platforms.detect", 9, "setattr"),
        ("vllm.engine.llm_engine.LLMEngine.step", 11, "patch"),
        ("vllm.platforms.current_platform", 13, "patch.object"),
        ("vllm.platforms.cuda", 14, "patch.object"),
        ("vllm.utils.is_pin_memory_available", 15, "patch"),
        ("vllm.envs.VLLM_Y", 17, "delete"),
    ]


def test_env_and_flag_strings_but_not_prose() -> None:
    fi = index(
        '''
        """Set VLLM_USE_V1 or pass --enforce-eager (module docstring: prose)."""
        import os
        import argparse

        def f(monkeypatch, n):
            """Also prose: --max-model-len."""
            os.environ["VLLM_USE_V1"] = "1"
            monkeypatch.setenv("VLLM_ATTENTION_BACKEND", "FLASH")
            cmd = ["vllm", "serve", "--max-model-len", str(n), f"--block-size={n}"]
            line = "vllm serve --enforce-eager --tp=2 -- --"
            note = "raise --max-num-seqs."
            parser = argparse.ArgumentParser()
            parser.add_argument("--my-own-flag")
            word = "HELLO"
            os.environ["LOCAL_RANK"] = "0"  # not vllm's variable
        '''
    )
    assert [(s.value, s.line, s.context) for s in fi.strings] == [
        ("VLLM_USE_V1", 8, "env"),
        ("VLLM_ATTENTION_BACKEND", 9, "env"),
        ("--max-model-len", 10, "flag"),
        ("--block-size", 10, "flag"),
        ("--enforce-eager", 11, "flag"),
        ("--tp", 11, "flag"),
        ("--max-num-seqs", 12, "flag"),
        ("--my-own-flag", 14, "flag"),
    ]
    assert fi.own_flags == ["--my-own-flag"]


def test_guards_are_recorded() -> None:
    fi = index(
        """
        from typing import TYPE_CHECKING
        import vllm
        try:
            from vllm.old import Thing
        except (ImportError, AttributeError):
            from vllm.new import Thing
        if TYPE_CHECKING:
            from vllm.config import VllmConfig
        hook = getattr(vllm.platforms, "hook", None)
        """
    )
    assert [(r.target, r.guard) for r in fi.refs] == [
        ("vllm", ()),
        ("vllm.old.Thing", ("AttributeError", "ImportError")),
        ("vllm.new.Thing", ()),
        ("vllm.config.VllmConfig", ("TYPE_CHECKING",)),
        ("vllm.platforms.hook", ("default",)),
        ("vllm.platforms", ()),
    ]


# -- not checked -------------------------------------------------------------------------------


def test_what_cannot_be_checked_is_counted() -> None:
    fi = index(
        """
        import vllm
        from vllm.utils import *
        from os.path import *
        name = "x"
        getattr(vllm.envs, name)
        setattr(vllm.envs, name, 1)
        getattr(object(), name)
        """
    )
    assert [(n.line, n.reason, n.detail) for n in fi.not_checked] == [
        (3, "star_import", "vllm.utils"),
        (6, "dynamic_getattr", "vllm.envs"),
        (7, "dynamic_setattr", "vllm.envs"),
    ]
    broken = index_source("plug/bad.py", b"def f(:\n    pass\n", PKGS)
    assert [(n.path, n.line, n.reason) for n in broken.not_checked] == [
        ("plug/bad.py", 1, "syntax")
    ]
    huge = index_source("plug/gen.py", b"x = 1\n" * 400_000, PKGS)
    assert [n.reason for n in huge.not_checked] == ["too_large"]
    deep = index_source("plug/deep.py", ("x = " + "(" * 300 + ")" * 300).encode(), PKGS)
    assert [n.reason for n in deep.not_checked] == ["syntax"]


# -- the whole index ----------------------------------------------------------------------------


def test_round_trips_through_json_and_refuses_other_versions() -> None:
    files = [
        index("from vllm import LLM\nLLM(model='m')\nclass W(LLM):\n    def generate(self): ...\n"),
        index('import os\nos.environ["VLLM_X"] = "1"\nfrom vllm import *\n', path="plug/b.py"),
    ]
    idx = build_index("/x", PKGS, files, excluded=[".venv"])
    again = DownstreamIndex.from_dict(json.loads(json.dumps(idx.to_dict())))
    assert again == idx
    assert again.interest().modules >= {"vllm", "vllm.LLM"}
    assert again.interest().env == frozenset({"VLLM_X"})
    with pytest.raises(ValueError, match="version"):
        DownstreamIndex.from_dict({**idx.to_dict(), "version": 0})


def test_interest_includes_where_reexported_names_are_defined() -> None:
    idx = build_index(
        "/x", PKGS, [index("from vllm import LLM\nllm = LLM('m')\nllm.generate([])\n")]
    )
    assert "vllm.entrypoints.llm" not in idx.interest().modules
    aliased = idx.interest({"vllm.LLM": "vllm.entrypoints.llm.LLM"})
    assert {"vllm.entrypoints.llm", "vllm.entrypoints.llm.LLM.generate"} <= aliased.modules


def test_own_flags_are_not_interest() -> None:
    fi = index('import vllm\np.add_argument("--mine")\ncmd = ["--mine", "--theirs"]\n')
    assert build_index("/x", PKGS, [fi]).interest().flags == frozenset({"--theirs"})


def test_flags_count_only_where_the_file_names_the_upstream() -> None:
    fi = index('cmd = ["tune", "run", "--config", "x.yaml"]\n')
    assert fi.strings == []


# -- the checkout walk -------------------------------------------------------------------------


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_walk_skips_what_is_not_the_project_and_counts_what_it_cannot_read(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    write(root, "plug/__init__.py", "")
    write(root, "plug/a.py", "from vllm import LLM\nclass Mine(LLM): ...\n")
    write(root, "plug/notes.txt", "from vllm import LLM\n")
    write(root, "plug/broken.py", "from vllm import (\n")
    write(root, "plug/unrelated.py", "def (\n")  # names nothing upstream: not even parsed
    write(root, "plug/child.py", "from plug.a import Mine\nclass Sub(Mine): ...\n")
    write(root, "plug/generated.py", b"x = 1\n" * 400_000)
    write(root, ".venv/pyvenv.cfg", "home = /usr\n")
    write(root, ".venv/lib/vllm/x.py", "import vllm\n")
    write(root, "env2/pyvenv.cfg", "home = /usr\n")
    write(root, "env2/site.py", "import vllm\n")
    write(root, "plug/__pycache__/a.py", "import vllm\n")
    os.symlink(root / "plug", root / "plug" / "loop")  # a directory symlink loop
    os.symlink(root / "plug" / "a.py", root / "plug" / "alias.py")
    os.symlink(root / "missing", root / "dangling")
    idx = index_checkout(root, PKGS)
    assert (idx.files, idx.prefiltered) == (6, 2)
    # Sub never names vllm, but its base does: the prefilter lets it through.
    assert [c.qualname for c in idx.classes] == ["plug.a.Mine", "plug.child.Sub"]
    assert idx.root == str(root.resolve())
    assert [(r.target, r.path) for r in idx.refs] == [("vllm.LLM", "plug/a.py")]
    assert [(n.path, n.reason) for n in idx.not_checked] == [
        ("plug/alias.py", "symlink"),
        ("plug/broken.py", "syntax"),
        ("plug/generated.py", "too_large"),
    ]
    assert idx.excluded == (".venv", "dangling", "env2", "plug/__pycache__", "plug/loop")


def test_bad_roots_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        index_checkout(tmp_path / "nope", PKGS)
    write(tmp_path, "file.py", "")
    with pytest.raises(SourceError, match="not a directory"):
        index_checkout(tmp_path / "file.py", PKGS)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert index_checkout(empty, PKGS).files == 0


def _touch_later(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text)
    # Force a distinct mtime even on filesystems with coarse timestamps.
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_index_key_follows_head_and_dirty_state(git_repo: GitFixture) -> None:
    git_repo.write("plug/a.py", "import vllm\n")
    git_repo.commit("first", when="1700000000 +0000")
    clean = index_key(git_repo.path, PKGS)
    assert clean.startswith(f"git:{git_repo.rev()}:")
    assert index_key(git_repo.path, PKGS) == clean
    assert index_key(git_repo.path, ("torchao",)) != clean

    target = git_repo.path / "plug/a.py"
    _touch_later(target, "import vllm.config\n")
    dirty = index_key(git_repo.path, PKGS)
    assert dirty != clean
    _touch_later(target, "import vllm.envs\n")  # same status line, different content
    assert index_key(git_repo.path, PKGS) != dirty

    write(git_repo.path, "plug/new.py", "import vllm\n")
    untracked = index_key(git_repo.path, PKGS)
    git_repo.git("add", "--all")
    git_repo.commit("second", when="1700000100 +0000")
    committed = index_key(git_repo.path, PKGS)
    assert len({clean, dirty, untracked, committed}) == 4


def test_index_key_differs_for_a_subdirectory_of_the_same_work_tree(
    git_repo: GitFixture,
) -> None:
    git_repo.write("plug/a.py", "import vllm\n")
    git_repo.commit("first", when="1700000000 +0000")
    whole, sub = index_key(git_repo.path, PKGS), index_key(git_repo.path / "plug", PKGS)
    assert whole.startswith(f"git:{git_repo.rev()}:") and sub.startswith(f"git:{git_repo.rev()}:")
    assert whole != sub, "the two index different files"


def test_index_key_without_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "a.py", "import vllm\n")
    first = index_key(root, PKGS)
    assert first.startswith("tree:") and index_key(root, PKGS) == first
    _touch_later(root / "a.py", "import vllm.config\n")
    assert index_key(root, PKGS) != first
    second = index_key(root, PKGS)
    write(root, "notes.txt", "not python")
    assert index_key(root, PKGS) == second
