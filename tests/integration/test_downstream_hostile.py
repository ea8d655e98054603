"""No file of a downstream checkout can switch the check off, nor make it cost gigabytes.

The plugin of :mod:`tests.downstream_pair` is broken five ways by its upstream;
each test adds one hostile thing to it (a file whose name is not UTF-8, a
chain of a thousand subclasses) and runs the real pipeline: every break is
still found, and the hostile file is counted as not checked with its reason.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline import run
from repoherald.sources.checkout import PENDING_BYTES, index_checkout
from tests.downstream_pair import EXPECTED, build_upstream, write_plugin
from tests.gitfixture import run_repoherald

DATE = "2026-03-02"


def _chain(n: int) -> str:
    """``n`` classes, each the subclass of the one before, the first an upstream worker's."""
    lines = ["from up.worker.base import WorkerBase", "", "class Level0(WorkerBase):", "    pass"]
    for i in range(1, n):
        lines += ["", f"class Level{i}(Level{i - 1}):", "    pass"]
    lines += [
        "",
        f"class Deepest(Level{n - 1}):",
        "    def execute_model(self, scheduler_output):",
        "        return super().execute_model(scheduler_output)",
    ]
    return "\n".join(lines) + "\n"


def _bad_name(plugin: Path) -> None:
    with open(os.path.join(os.fsencode(plugin), b"plug", b"caf\xe9.py"), "wb") as fh:
        fh.write(b"import up.sampling\n\nup.sampling.clamp(1.0)\n")


def _deep_chain(plugin: Path) -> None:
    (plugin / "plug" / "tower.py").write_text(_chain(1000), encoding="utf-8")


HOSTILE = {"file name not UTF-8": (_bad_name, "bad_name"), "1,000 subclasses": (_deep_chain, "")}


def _report(tmp: Path, plugin: Path, up: Path) -> tuple[bool, list[str], dict[str, Any]]:
    settings = build_settings(
        day=DATE, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(up),), downstream=(str(plugin),),
    )  # fmt: skip
    result = run(settings)
    twin = next(p for p in result.written if p.suffix == ".json")
    project = json.loads(twin.read_text("utf-8"))["repos"][0]["downstream"]["projects"][0]
    return result.ok, result.failures, project


@pytest.mark.parametrize("hostile", HOSTILE, ids=list(HOSTILE))
def test_one_hostile_file_leaves_every_break_found(tmp_path: Path, hostile: str) -> None:
    _, _ = build_upstream(tmp_path / "up")
    plugin = write_plugin(tmp_path / "plugin")
    add, reason = HOSTILE[hostile]
    add(plugin)
    ok, failures, project = _report(tmp_path, plugin, tmp_path / "up")
    assert ok, failures
    breaks = {
        (i["reason_code"], str(i["upstream"]), i["path"], i["line"]) for i in project["impacts"]
    }
    expected = {
        (code, up, path, line) for items in EXPECTED.values() for _, code, up, path, line in items
    }
    assert expected <= breaks
    if reason:
        assert project["not_checked"].get(reason) == 1, project["not_checked"]
    else:  # the whole chain is followed: the deepest class's super() call is seen
        assert any(i["path"] == "plug/tower.py" for i in project["impacts"])


def test_files_that_never_name_the_upstream_are_not_held_in_memory(tmp_path: Path) -> None:
    root = tmp_path / "generated"
    root.mkdir()
    body = "VALUE = 1\n" * 190_000  # 1.9 MB, under the size limit, never naming `up`
    for i in range(40):
        (root / f"table_{i:02d}.py").write_text(body, encoding="utf-8")
    (root / "uses.py").write_text("import up\n\nup.run()\n", encoding="utf-8")
    tracemalloc.start()
    try:
        index = index_checkout(root, ("up",))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert index.files == 41 and index.refs
    # 76 MB of files, of which at most the budget is kept for the subclass passes.
    assert peak < PENDING_BYTES + 8_000_000, f"indexing held {peak:,} bytes for 76 MB of files"


def test_a_downstream_path_that_is_a_symlink_loop_is_one_line_and_exit_1(tmp_path: Path) -> None:
    _, _ = build_upstream(tmp_path / "up")
    os.symlink("loop_b", tmp_path / "loop_a")
    os.symlink("loop_a", tmp_path / "loop_b")
    proc = run_repoherald(
        "report", "--repo", str(tmp_path / "up"), "--downstream", str(tmp_path / "loop_a"),
        "--date", DATE, "--tz", "UTC", "--lang", "en", "--no-llm", "--home", str(tmp_path / "h"),
        "--out", str(tmp_path / "out"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "loop_a" in ln]
    assert len(lines) == 1 and "symbolic link loop" in lines[0], proc.stderr
    assert list((tmp_path / "out").rglob(f"{DATE}.en.md"))  # the report is still written
