"""The model is told what a commit breaks in the reader's code, and cannot talk it below 🔴.

The fixture pair of :mod:`tests.downstream_pair` (a real upstream history and
a plugin checkout that uses it) is reported with a model behind a real HTTP
server on 127.0.0.1 that calls every commit low. The request about the
signature change names the plugin's line; the report keeps the commit 🔴
with the downstream reason first, in front of the model's own reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.downstream_pair import DAY, build_upstream, write_plugin
from tests.integration.test_llm import answer_for
from tests.llm_server import FakeLLM, Reply, ok


def dismissive(body: dict[str, Any], attempt: int) -> Reply:
    """A model that finds every commit trivial."""
    return ok(answer_for(body, change_type="refactor", importance="low"))


def test_downstream_hits_reach_the_model_and_keep_their_red(tmp_path: Path) -> None:
    build_upstream(tmp_path / "up")
    plugin = write_plugin(tmp_path / "plugin")
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text(
        '[llm]\nmax_retries = 1\ntimeout = 10\n\n[[repos]]\nsource = "up"\nname = "acme/up"\n'
        f'downstream = ["{plugin}"]\n',
        encoding="utf-8",
    )
    with FakeLLM(dismissive) as server:
        result = run(
            build_settings(
                day=DAY.date().isoformat(),
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
        prompts = [
            "\n".join(str(m["content"]) for m in r.body["messages"]) for r in server.chat_requests
        ]
    about_signature = [p for p in prompts if "Pass intermediate tensors" in p]
    assert about_signature and all("downstream hits:" in p for p in about_signature)
    assert any("execute_model" in p.split("downstream hits:", 1)[1] for p in about_signature)
    about_noise = [p for p in prompts if "Unrelated change" in p]
    assert about_noise and not any("downstream hits:" in p for p in about_noise)

    twin_path = next(p for p in result.written if p.suffix == ".json")
    commits = json.loads(twin_path.read_text(encoding="utf-8"))["repos"][0]["commits"]
    signature = next(c for c in commits if c["title"] == "[V1] Pass intermediate tensors")
    analysis = signature["analysis"]
    assert not analysis["analyser"].startswith("rules/"), "the model's answer was used"
    assert analysis["importance"] == "high"
    assert analysis["reasons"][0].startswith("affects your code")
    noise = next(c for c in commits if c["title"] == "[Misc] Unrelated change")
    assert noise["analysis"]["importance"] == "low"
