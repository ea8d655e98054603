"""A good answer that runs past the schema's bounds is kept, fitted, in one request.

Real capable models wrote a ``judgement_reason`` longer than its 300
characters in a third of their answers; each cost a repair request. The
bounds are now told to the model and an answer over them is cut at a
sentence end, not refused.
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
SENTENCE = "The scheduler no longer crashes when a request is cancelled while it waits. "
LONG_REASON = (SENTENCE * 10).strip()  # 10 sentences, about 760 characters
IMPACT = [f"Every caller of the scheduler, case {word}." for word in
          ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")]  # fmt: skip


def verbose(body: dict[str, Any], attempt: int) -> Reply:
    """A capable model that writes too much: a long reason and nine impact items."""
    return ok(
        answer_for(
            body, change_type="bugfix", importance="high", judgement_reason=LONG_REASON,
            impact=IMPACT,
        )
    )  # fmt: skip


def day(tmp_path: Path, server: FakeLLM) -> dict[str, Any]:
    repo = GitFixture.init(tmp_path / "app")
    repo.write_many({"src/app/__init__.py": "", "src/app/scheduler.py": "def run():\n    pass\n"})
    repo.commit("Initial import", when=f"{DAY}T00:30:00+00:00")
    repo.write("src/app/scheduler.py", "def run():\n    return wait()\n\n\ndef wait():\n    pass\n")
    repo.commit("Fix crash in the scheduler when a request is cancelled",
                when=f"{DAY}T01:00:00+00:00")  # fmt: skip
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text("[llm]\nmax_retries = 1\ntimeout = 10\n", encoding="utf-8")
    result = run(
        build_settings(
            repos=(str(repo.path),), day=DAY, tz="UTC", lang="en", config=str(cfg),
            out=str(tmp_path / "out"), home=str(tmp_path / "home"), cwd=tmp_path,
            llm_base_url=server.base_url, llm_model="test-model",
        )
    )  # fmt: skip
    twin = next(p for p in result.written if p.suffix == ".json")
    commits = json.loads(twin.read_text(encoding="utf-8"))["repos"][0]["commits"]
    return {c["title"]: c["analysis"] for c in commits}


def test_an_over_long_answer_is_fitted_not_repaired(tmp_path: Path) -> None:
    with FakeLLM(verbose) as server:
        analyses = day(tmp_path, server)
        requests = [r.body for r in server.chat_requests if "Fix crash" in json.dumps(r.body)]
    fix = next(a for t, a in analyses.items() if t.startswith("Fix crash"))
    assert len(requests) == 1, "one request: no repair turn"
    assert "impact" in json.dumps(requests[0]), "the full analysis was asked for"
    assert not fix.get("llm_error"), fix.get("llm_error")
    assert fix["analyser"].startswith("llm/")
    reason = next(r for r in fix["reasons"] if SENTENCE.strip()[:30] in r)
    kept = reason[reason.index(SENTENCE.strip()[:30]) :]
    assert kept.endswith("waits."), "cut at a sentence end"
    assert len(kept) <= 300
    assert len(fix["impact"]) == 8
    assert fix["impact"][0] == IMPACT[0]


def test_the_bounds_are_told_to_the_model(tmp_path: Path) -> None:
    with FakeLLM(verbose) as server:
        day(tmp_path, server)
        body = next(r.body for r in server.chat_requests if "Fix crash" in json.dumps(r.body))
    system = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "system"
    assert "judgement_reason: At most 300 characters" in system
    assert "impact: At most 8 items" in system
    schema = json.dumps(body.get("response_format", {})) + system
    assert "At most 300 characters." in schema
