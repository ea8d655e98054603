"""One day of commits on a real git repository, reported by a real run.

The rules' fixture tests all do the same: write an initial tree, commit one
change per case an hour apart on one day, run ``repoherald run`` on that day
offline and read what the JSON twin (and the Markdown report) say about each
commit, by title.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repoherald.config import build_settings
from repoherald.pipeline import run
from tests.gitfixture import GitFixture

Steps = list[tuple[str, dict[str, str]]]
"""(commit title, files to write) per commit, in order."""


@dataclass(frozen=True)
class ReportedDay:
    analyses: dict[str, dict[str, Any]]
    """The analysis of each commit, by title."""
    markdown: str

    def verdict(self, title: str) -> tuple[str, str]:
        """(importance, the reasons joined) of one commit."""
        analysis = self.analyses[title]
        return analysis["importance"], " ".join(analysis["reasons"])


def commit_day(path: Path, day: str, initial: dict[str, str], steps: Steps) -> Path:
    """A repository at ``path``: ``initial`` at 00:30, then one commit per step each hour."""
    repo = GitFixture.init(path)
    repo.write_many(initial)
    repo.commit("Initial import", when=f"{day}T00:30:00+00:00")
    for i, (title, files) in enumerate(steps, start=1):
        repo.write_many(files)
        repo.commit(title, when=f"{day}T{i:02d}:00:00+00:00")
    return path


def report_day(tmp: Path, repo: Path, day: str) -> ReportedDay:
    """Run the rules on ``day`` of ``repo`` (UTC, English, no LLM) and read the report."""
    settings = build_settings(
        day=day, tz="UTC", lang="en", out=str(tmp / "out"), home=str(tmp / "home"), cwd=tmp,
        no_llm=True, repos=(str(repo),),
    )  # fmt: skip
    result = run(settings)
    assert result.ok, result.failures
    twin = json.loads(next(p for p in result.written if p.suffix == ".json").read_text("utf-8"))
    markdown = next(p for p in result.written if p.suffix == ".md").read_text("utf-8")
    analyses = {c["title"]: c["analysis"] for c in twin["repos"][0]["commits"]}
    return ReportedDay(analyses, markdown)
