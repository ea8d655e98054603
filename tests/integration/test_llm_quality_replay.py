"""A good recorded answer survives the LLM path: validation, floors and caps, the fact-check.

CI has no mirrors and no model, so the slice's repository is built here for
real (three commits on one day) and a loopback chat-completions server
answers each request with a recorded "capable" answer from
``tests/data/llm_slice/answers.json``, keyed by commit title and depth
(request ids change with every prompt version; titles and depths do not).
The run is the real pipeline, as ``bench.llm_quality`` runs it.

The answers are what a capable model writes: a judgement reason longer than
300 characters, a claim naming a path that is in the diff's text but is not
a changed file, a "2x" that the diff also says, and an exact framework pin
answered medium, which the floor must lift to high.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.llm_recording import depth_of, is_repair
from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.dayfixture import commit_day
from tests.llm_server import FakeLLM, Reply, bad_request, last_user_message, message_text, ok

ANSWERS = Path(__file__).parents[1] / "data" / "llm_slice" / "answers.json"
DAY = "2026-08-03"
FIX = "Fall back to an empty configuration when the default file is missing"
PIN = "Bump torch to 2.6.0"
DOCS = "Document the configuration fallback"

INITIAL = {
    "pkg/__init__.py": "",
    "pkg/loader.py": (
        'DEFAULT_CONFIG = "configs/default.yaml"\n\n\n'
        "def load(path=None):\n"
        "    with open(path or DEFAULT_CONFIG) as fh:\n"
        "        return fh.read()\n"
    ),
    "requirements.txt": "numpy>=1.26\ntorch==2.5.0\n",
    "README.md": "# pkg\n\nLoads configurations.\n",
}
STEPS = [
    (
        FIX,
        {
            "pkg/loader.py": (
                'DEFAULT_CONFIG = "configs/default.yaml"\n'
                "CHUNK = 1 << 20\n\n\n"
                "def load(path=None):\n"
                "    try:\n"
                "        fh = open(path or DEFAULT_CONFIG)\n"
                "    except FileNotFoundError:\n"
                '        return ""\n'
                "    # Reading in chunks is 2x faster than one read on large files.\n"
                "    with fh:\n"
                '        return "".join(iter(lambda: fh.read(CHUNK), ""))\n'
            )
        },
    ),
    (PIN, {"requirements.txt": "numpy>=1.26\ntorch==2.6.0\n"}),
    (
        DOCS,
        {
            "README.md": (
                "# pkg\n\nLoads configurations. When configs/default.yaml is missing, "
                "load() returns an empty configuration.\n"
            )
        },
    ),
]


@dataclass(frozen=True)
class Replayed:
    analyses: dict[str, dict[str, Any]]
    """Each commit's final analysis in the JSON twin, by title."""
    bodies: list[dict[str, Any]]
    answers: dict[str, dict[str, Any]]


def _responder(answers: dict[str, dict[str, Any]]) -> Any:
    """The recorded answer for the request's commit (its title) and depth, repairs included
    (a model asked to repair a good answer gives it again); else a 400, which is not retried."""

    def respond(body: dict[str, Any], _attempt: int) -> Reply:
        texts = "\n".join(message_text(m) for m in body["messages"])
        title = next((t for t in answers if t in texts), None)
        answer = answers.get(title or "", {}).get(depth_of(body))
        if answer is None:
            return bad_request("no recorded answer for this request")
        return ok(answer)

    return respond


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Replayed:
    tmp = tmp_path_factory.mktemp("llm-slice")
    repo = commit_day(tmp / "slice", DAY, INITIAL, STEPS)
    answers = json.loads(ANSWERS.read_text("utf-8"))
    with FakeLLM(responder=_responder(answers)) as server:
        settings = build_settings(
            day=DAY, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
            repos=(str(repo),), llm_base_url=server.base_url, llm_model="capable",
        )  # fmt: skip
        result = run(settings, use_cache=False)
        bodies = [b for b in server.bodies if isinstance(b, dict)]
    twin_path = next(p for p in result.written if p.suffix == ".json")
    twin = json.loads(twin_path.read_text("utf-8"))
    analyses = {c["title"]: c["analysis"] for c in twin["repos"][0]["commits"]}
    return Replayed(analyses, bodies, answers)


def _recorded(r: Replayed, title: str) -> dict[str, Any]:
    """The answer the model gave last for ``title`` (full when it was asked for it)."""
    by_depth = r.answers[title]
    return by_depth["full"] if "full" in by_depth else by_depth["short"]


def test_no_good_answer_costs_a_repair_request(replayed: Replayed) -> None:
    repairs = [last_user_message(b)[:120] for b in replayed.bodies if is_repair(b)]
    assert replayed.bodies, "the model was never asked"
    assert repairs == []


def test_every_final_verdict_is_the_models(replayed: Replayed) -> None:
    for title in (FIX, PIN, DOCS):
        analysis = replayed.analyses[title]
        assert analysis["llm_error"] == "", (title, analysis["llm_error"])
        assert analysis["analyser"].startswith("llm/"), (title, analysis["analyser"])
        assert analysis["change_type"] == _recorded(replayed, title)["change_type"], title
    assert replayed.analyses[FIX]["importance"] == "medium"
    assert replayed.analyses[DOCS]["importance"] == "low"


def test_the_framework_pin_floor_lifts_a_medium_answer(replayed: Replayed) -> None:
    analysis = replayed.analyses[PIN]
    assert analysis["analyser"].startswith("llm/"), analysis["llm_error"]
    assert analysis["importance"] == "high"


def test_true_claims_are_kept(replayed: Replayed) -> None:
    analysis = replayed.analyses[FIX]
    assert analysis["analyser"].startswith("llm/"), analysis["llm_error"]
    assert analysis["unverified"] == [], "; ".join(analysis["unverified"])
    recorded = _recorded(replayed, FIX)
    assert len(analysis["impact"]) == len(recorded["impact"])
    assert len(analysis["risks"]) == len(recorded["risks"])
    assert len(analysis["recommendations"]) == len(recorded["recommendations"])
    assert "(unverified)" not in json.dumps(analysis, ensure_ascii=False)
