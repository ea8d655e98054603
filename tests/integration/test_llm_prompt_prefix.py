"""The system message is the same bytes for every commit, so providers can cache it.

Per-commit text (the repository, the nonce, the facts, the commit itself)
goes to the user message; the facts our code computed sit outside the data
block, strangers' text inside it.
"""

from __future__ import annotations

from pathlib import Path

from repoherald.llm.prompt import prefix_share, system_prompt
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
