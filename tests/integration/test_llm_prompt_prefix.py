"""The system message is the same bytes for every commit, so providers can cache it.

Per-commit text (the repository, the nonce, the facts, the commit itself)
goes to the user message; the facts our code computed sit outside the data
block, strangers' text inside it.
"""

from __future__ import annotations

from pathlib import Path

from repoherald.config import build_settings
from repoherald.llm.prompt import prefix_share, system_prompt
from repoherald.pipeline import run
from tests.gitfixture import GitFixture
from tests.integration.test_llm_limits import day, verbose
from tests.llm_server import FakeLLM


def test_system_prompt_is_constant_and_per_commit_text_is_in_the_user_message(
    tmp_path: Path,
) -> None:
    with FakeLLM(verbose) as server:
        day(tmp_path, server)
        bodies = [r.body for r in server.chat_requests]
    assert len(bodies) == 2, "two commits, one request each"
    systems = {b["messages"][0]["content"] for b in bodies}
    assert len(systems) == 1, "byte-identical across commits"
    system = systems.pop()
    assert system == system_prompt("en", native_schema=True)
    assert "app" not in system.split(), "no repository name in the system message"
    for body in bodies:
        user = body["messages"][1]["content"]
        nonce = user.split("TOKEN: ", 1)[1].split("\n", 1)[0]
        assert nonce not in system
        assert user.index("facts computed by repoherald") < user.index(f"<commit-data-{nonce}>")
        assert user.index("- reach: ") < user.index(f"<commit-data-{nonce}>")
        share = prefix_share(body["messages"])
        assert 0.0 < share < 1.0
        assert share == len(system) / sum(len(m["content"]) for m in body["messages"])


def test_the_rubric_carries_the_labelling_decisions_in_both_languages() -> None:
    en = system_prompt("en", native_schema=True)
    zh = system_prompt("zh", native_schema=True)
    assert "however severe the failure" in en and "无论故障多严重" in zh
    assert "*_lkg.version" in en and "*_lkg.version" in zh
    assert "validation-only fixes" in en and "只增加校验的修复" in zh
    assert "judgement_reason: At most 300 characters." in en
    assert "judgement_reason: 最多 300 个字符。" in zh
    assert system_prompt("en", native_schema=False).count("JSON Schema (") == 2


MANIFEST = '[project]\nname = "vllm-fooplugin"\ndependencies = ["vllm=={v}"]\n'


def test_the_rules_facts_reach_the_model_outside_the_data_block(tmp_path: Path) -> None:
    repo = GitFixture.init(tmp_path / "vllm-fooplugin")
    repo.write_many(
        {
            "pyproject.toml": MANIFEST.format(v="0.10.0"),
            "fooplugin/__init__.py": "",
            "fooplugin/prototype/fast.py": "X = 1\n",
        }
    )
    repo.commit("Initial import", when="2026-05-01T00:30:00+00:00")
    repo.write("pyproject.toml", MANIFEST.format(v="0.11.0"))
    repo.commit("chore: tidy the manifest", when="2026-05-01T01:00:00+00:00")
    repo.write("fooplugin/prototype/fast.py", "X = 2\n")
    repo.commit("[H100] Tune the prototype kernel", when="2026-05-01T02:00:00+00:00")
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text("[llm]\nmax_retries = 1\ntimeout = 10\n", encoding="utf-8")
    with FakeLLM(verbose) as server:
        run(
            build_settings(
                repos=(str(repo.path),), day="2026-05-01", tz="UTC", lang="zh",
                config=str(cfg), out=str(tmp_path / "out"), home=str(tmp_path / "home"),
                cwd=tmp_path, llm_base_url=server.base_url, llm_model="test-model",
            )
        )  # fmt: skip
        users = {
            title: next(
                r.body["messages"][1]["content"]
                for r in server.chat_requests
                if title in r.body["messages"][1]["content"]
            )
            for title in ("chore: tidy the manifest", "[H100] Tune the prototype kernel")
        }
        systems = {r.body["messages"][0]["content"] for r in server.chat_requests}
    assert systems == {system_prompt("zh", native_schema=True)}
    bump, tune = users["chore: tidy the manifest"], users["[H100] Tune the prototype kernel"]
    facts = bump[: bump.index("<commit-data-")]
    assert "- host framework pin moves: vllm ==0.10.0 -> ==0.11.0 (pyproject.toml)" in facts
    facts = tune[: tune.index("<commit-data-")]
    assert "- reach: every source file is in an opt-in" in facts, facts
    assert "- narrowed to one model, platform or hardware generation: " in facts, facts
