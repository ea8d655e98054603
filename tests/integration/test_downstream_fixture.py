"""An upstream history that breaks a plugin in five ways, and a plugin that uses each.

The upstream repository is real git: one commit per kind of change (module
rename, class move, base-class method signature, removed env var, CLI flag
default), plus a commit the plugin does not care about. The plugin checkout
imports, subclasses, overrides, monkey-patches and reads each thing. Every
break must be found at the right ``file:line``, nothing else may be called a
break, and what the index cannot see is counted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repoherald.analysis.downstream.impact import BREAKS, CHANGES, Impact, match, match_watch
from repoherald.analysis.downstream.index import DownstreamIndex
from repoherald.analysis.surface.change import SurfaceDiffer, versions_from_changes
from repoherald.i18n import localise
from repoherald.sources.checkout import index_checkout
from repoherald.sources.git.repo import open_local
from tests.downstream_pair import PLUGIN, build_upstream, write_plugin
from tests.gitfixture import GitFixture


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[GitFixture, dict[str, str]]:
    """The upstream repository; returns it and the SHA of each commit by label."""
    return build_upstream(tmp_path / "up")


@pytest.fixture
def plugin_index(tmp_path: Path) -> DownstreamIndex:
    return index_checkout(write_plugin(tmp_path / "plugin"), ("up",))


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
    assert "intermediate_tensors" in localise("en", found["signature"][0].detail)
    assert brief(found["env"]) == [
        (BREAKS, "env_removed", "UP_FAST_PATH", "plug/env.py", 6),
    ]
    assert brief(found["flag"]) == [
        (CHANGES, "flag_default_changed", "--gpu-memory-utilization", "plug/launch.py", 8),
    ]
    flag = found["flag"][0].detail
    assert localise("en", flag) == "default of --gpu-memory-utilization: 0.9 -> 0.92"
    assert localise("zh", flag) == "--gpu-memory-utilization 的默认值：0.9 -> 0.92"
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
