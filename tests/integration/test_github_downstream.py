"""'Affects your code' on a ``github:`` upstream is what it is on the same repository read by git.

The upstream is the fixture pair's (:mod:`tests.downstream_pair`) under a
name that does not spell its package (``acme/up-project`` holds ``up``), with
a last commit that re-exports ``WorkerBase`` from ``up/__init__.py``; the
plugin gains a file that imports it by that short path. So the packages must
come from the upstream's tree and the re-export from its ``__init__.py``: a
source that could not list its tree would check ``up_project`` and find
nothing. GitHub is a real HTTP server on 127.0.0.1 serving the same git
repository, whole and with the recursive tree cut (``truncated``).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.pipeline.run import run
from tests.downstream_pair import DAY, EXPECTED, build_upstream, write_plugin
from tests.github_server import FakeGitHub

DATE = "2026-03-02"
NAME = "acme/up-project"
SHORT = """
    from up import WorkerBase


    class ShortWorker(WorkerBase):
        def execute_model(self, scheduler_output):
            return scheduler_output
    """


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("gh-downstream")
    fx, shas = build_upstream(base / "up")
    fx.write("up/__init__.py", "from up.worker.base import WorkerBase\n")
    shas["reexport"] = fx.commit("[Core] Export WorkerBase", when=DAY + timedelta(hours=7))
    plugin = write_plugin(base / "plugin")
    (plugin / "plug" / "short.py").write_text(dedent(SHORT), encoding="utf-8")
    return base, shas


def downstream_of(base: Path, tag: str, source: str, api_url: str) -> dict[str, Any]:
    """The day's report of ``source`` with the plugin downstream; its downstream block and
    the impacts by commit."""
    cfg = base / f"{tag}.toml"
    cfg.write_text(
        f'[report]\ntz = "UTC"\nlang = "en"\n\n[github]\napi_url = "{api_url}"\n\n'
        f'[[repos]]\nsource = "{source}"\nname = "{NAME}"\n'
        f'downstream = ["{base / "plugin"}"]\n',
        encoding="utf-8",
    )
    settings = build_settings(
        config=str(cfg), day=DATE, home=str(base / f"home-{tag}"), out=str(base / f"out-{tag}")
    )
    result = run(settings)
    assert result.ok, result.failures
    path = next(p for p in result.written if p.suffix == ".json")
    section = json.loads(path.read_text(encoding="utf-8"))["repos"][0]
    reasons = {c["sha"]: c["analysis"]["reasons"] for c in section["commits"]}
    return {"downstream": section["downstream"], "reasons": reasons}


@pytest.mark.parametrize("tree_limit", [100_000, 5], ids=["whole", "truncated"])
def test_a_github_upstream_affects_the_plugin_as_the_local_repository_does(
    pair: tuple[Path, dict[str, str]], tree_limit: int
) -> None:
    base, shas = pair
    local = downstream_of(base, f"git-{tree_limit}", str(base / "up"), "http://127.0.0.1:9")
    with FakeGitHub(tree_limit=tree_limit) as server:
        server.add_repo(NAME, base / "up")
        remote = downstream_of(base, f"api-{tree_limit}", f"github:{NAME}", server.api_url)
        if tree_limit < 100_000:
            cut = [r for r in server.requests if "recursive=1" in r.path]
            assert len(cut) > 1, "the cut answer was completed below the root"
    assert remote == local
    block = remote["downstream"]
    assert block["packages"] == ["up"], "found in the tree, not guessed from the name"
    (project,) = block["projects"]
    found = {(i["reason_code"], i["path"], i["sha"]) for i in project["impacts"]}
    for label, items in EXPECTED.items():
        assert {(i[1], i[3], shas[label]) for i in items} <= found
    # Only the re-export in up/__init__.py ties plug/short.py to the changed method.
    assert ("override_mismatch", "plug/short.py", shas["signature"]) in found
