"""A model may not talk a host framework bump down: the facts keep it high.

A plugin-named fixture repository (``vllm-fooplugin``) moves its vLLM pin
twice: in its manifest under a "chore" title, and in a CI pin file. A model
behind a real HTTP server on 127.0.0.1 calls both low; the report says high.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture
from tests.integration.test_llm import answer_for
from tests.llm_server import FakeLLM, Reply, ok

DAY = "2026-05-01"
MANIFEST = '[project]\nname = "vllm-fooplugin"\ndependencies = ["vllm=={v}"]\n'


def dismissive(body: dict[str, Any], attempt: int) -> Reply:
    """A model that finds every commit trivial."""
    return ok(answer_for(body, change_type="refactor", importance="low"))


def test_the_model_cannot_lower_a_host_bump(tmp_path: Path) -> None:
    repo = GitFixture.init(tmp_path / "vllm-fooplugin")
    repo.write_many({"pyproject.toml": MANIFEST.format(v="0.10.0"),
                     ".buildkite/vllm_lkg.version": "0123456789abcdef\n",
                     "fooplugin/__init__.py": ""})  # fmt: skip
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    repo.write("pyproject.toml", MANIFEST.format(v="0.11.0"))
    repo.commit("chore: tidy the manifest", when=f"{DAY}T01:00:00+00:00")
    repo.write(".buildkite/vllm_lkg.version", "fedcba9876543210\n")
    repo.commit("[skip ci] Update LKG", when=f"{DAY}T02:00:00+00:00")
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text("[llm]\nmax_retries = 1\ntimeout = 10\n", encoding="utf-8")
    with FakeLLM(dismissive) as server:
        result = run(
            build_settings(
                repos=(str(repo.path),),
                day=DAY,
                tz="UTC",
                lang="en",
                config=str(cfg),
                out=str(tmp_path / "out"),
                home=str(tmp_path / "home"),
                cwd=tmp_path,
                llm_base_url=server.base_url,
                llm_model="test-model",
            )
        )
        assert server.chat_requests, "the model was asked"
    twin_path = next(p for p in result.written if p.suffix == ".json")
    commits = json.loads(twin_path.read_text(encoding="utf-8"))["repos"][0]["commits"]
    by_title = {c["title"]: c["analysis"] for c in commits}
    for title in ("chore: tidy the manifest", "[skip ci] Update LKG"):
        analysis = by_title[title]
        assert not analysis["analyser"].startswith("rules/"), "the model's answer was used"
        assert (analysis["change_type"], analysis["importance"]) == ("dependencies", "high"), title
