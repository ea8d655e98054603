"""Facts from derived APIs equal facts from parsing every blob whole, on real and fixture history.

The incremental path (:mod:`repoherald.analysis.pyapi.outline`) parses only the
statements an edit touches. These tests run it and the whole-parse path over
the same commits, in the pipeline's order and in the reverse one, and demand
identical facts.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bench import goldset
from bench.replay import build_repo, load_shapes
from repoherald.analysis.facts.commit import AreaRules, FactsExtractor, file_kind
from repoherald.analysis.pyapi import blobs as blobapi
from repoherald.analysis.pyapi import outline as pyoutline
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.config import build_settings
from repoherald.models import Commit, Facts, FileChange
from repoherald.pipeline.analyse import analyse_day
from repoherald.pipeline.events import Emitter
from repoherald.pipeline.identity import identify
from repoherald.pipeline.run import _prepare
from repoherald.sources.git.repo import GitRepo, open_local
from repoherald.store.db import SqliteStore as Store
from tests.gitfixture import GitFixture

SAMPLE_SHAPES = Path(__file__).parents[1] / "data" / "shapes-2026-08-17_22.jsonl"
Inputs = list[tuple[str, Commit, tuple[FileChange, ...]]]


def both_paths(inputs: Inputs, read_blob: dict[str, bytes] | GitRepo) -> dict[bool, list[Facts]]:
    """Facts for every commit by each path; extractors are per repository, as in the pipeline."""
    reader = read_blob.get if isinstance(read_blob, dict) else _git_reader(read_blob)
    out: dict[bool, list[Facts]] = {}
    for incremental in (False, True):
        extractors: dict[str, FactsExtractor] = {}
        facts = []
        for repo, commit, files in inputs:
            if repo not in extractors:
                extractors[repo] = FactsExtractor(AreaRules(), reader, incremental=incremental)
            facts.append(extractors[repo].extract(commit, files))
        out[incremental] = facts
        if incremental:
            assert sum(e.apis.stats["derived"] for e in extractors.values()) > 0
    return out


def _git_reader(git: GitRepo):  # type: ignore[no-untyped-def]
    return lambda oid: git.read_blob(oid, 1_000_000)


def read_history(git: GitRepo) -> Inputs:
    """Every first-parent commit, newest first (the pipeline's order within a day)."""
    shas = [sha for sha, _ in git.first_parent(git.resolve_branch(git.default_branch()) or "")]
    commits = git.read_commits(shas)
    diffs = git.diff_first_parent(commits[s] for s in shas if commits[s].parents)
    return [("r", commits[s], tuple(diffs[s])) for s in shas if s in diffs]


@pytest.fixture(scope="module")
def gold_inputs() -> tuple[Inputs, dict[str, bytes]]:
    inputs, blobs = goldset.load_cache()
    return [(i.repo, i.commit, i.files) for i in inputs], blobs


def test_gold_history_gives_identical_facts(
    gold_inputs: tuple[Inputs, dict[str, bytes]],
) -> None:
    # One repository keeps this quick; the next test covers every real edit.
    inputs = [i for i in gold_inputs[0] if i[0] == "vllm-project/llm-compressor"]
    facts = both_paths(inputs, gold_inputs[1])
    assert facts[True] == facts[False]
    reverse = both_paths(inputs[::-1], gold_inputs[1])
    assert reverse[True] == reverse[False]


@pytest.mark.parametrize("budget", [0, 40_000])
def test_a_small_source_budget_changes_nothing(
    gold_inputs: tuple[Inputs, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """Sources and their split lines dropped early (none held, or a file or two): same facts."""
    monkeypatch.setattr(blobapi, "SOURCE_CACHE_BYTES", budget)
    inputs = [i for i in gold_inputs[0] if i[0] == "vllm-project/llm-compressor"]
    facts = both_paths(inputs, gold_inputs[1])
    assert facts[True] == facts[False]


def test_gold_history_derived_outlines_match_whole_parses(
    gold_inputs: tuple[Inputs, dict[str, bytes]],
) -> None:
    inputs, blobs = gold_inputs
    pairs = derived = 0
    for _, _, files in inputs:
        for f in files:
            if not (f.path.endswith(".py") and file_kind(f.path) == "source"):
                continue
            if not (f.old_blob and f.new_blob) or f.binary:
                continue
            old, new = blobs[f.old_blob], blobs[f.new_blob]
            if max(len(old), len(new)) > 200_000:
                continue  # a few versions of one 400 KB file: slow, and like the others
            parsed = {b: pyoutline.parse(b) for b in (old, new)}
            for known, other in ((old, new), (new, old)):
                whole = parsed[known]
                assert whole is not None and whole[1] is not None
                got = pyoutline.derive(whole[1], known, other)
                pairs += 1
                if got is not None:
                    derived += 1
                    assert (got.api(), got) == parsed[other], f.path
    # Real edits are nearly all derivable; a regression here costs speed, not results.
    assert derived >= 0.9 * pairs


def test_replayed_history_gives_identical_facts(tmp_path: Path) -> None:
    shapes = load_shapes(SAMPLE_SHAPES, date(2026, 8, 20), date(2026, 8, 22))
    build_repo(shapes, tmp_path / "replay", seed=5)
    with open_local(str(tmp_path / "replay")) as git:
        inputs = read_history(git)
        assert len(inputs) >= len(shapes)
        facts = both_paths(inputs, git)
    assert facts[True] == facts[False]


def test_fixture_history_gives_identical_facts(git_repo: GitFixture) -> None:
    when = datetime(2026, 3, 1, 9, tzinfo=UTC)
    steps = _fixture_steps()
    for i, (message, files) in enumerate(steps):
        for path, content in files.items():
            if content is None:
                git_repo.remove(path)
            else:
                git_repo.write(path, content)
        git_repo.commit(message, when=when + timedelta(hours=i))
    with open_local(str(git_repo.path)) as git:
        inputs = read_history(git)
        assert len(inputs) == len(steps) - 1
        facts = both_paths(inputs, git)
        reverse = both_paths(inputs[::-1], git)
    assert facts[True] == facts[False]
    assert reverse[True] == reverse[False]
    by_title = {c.title: f for (_, c, _), f in zip(inputs, facts[True], strict=True)}
    assert by_title["break a body"].unparsed == ("pkg/core.py",)
    changed = {(a.name, a.change) for a in by_title["widen run"].api_changes}
    assert changed == {("run", "signature")}


def _fixture_steps() -> list[tuple[str, dict[str, str | bytes | None]]]:
    core = (
        "import os\n\n\ndef run(a):\n    return a\n\n\n"
        "class Engine:\n    def start(self):\n        self.on = True\n"
    )
    return [
        ("start", {"pkg/core.py": core, "pkg/__init__.py": "from .core import run\n"}),
        ("edit a method", {"pkg/core.py": core.replace("self.on = True", "self.on = 1")}),
        ("widen run", {"pkg/core.py": core.replace("def run(a):", "def run(a, b=0):")}),
        ("break a body", {"pkg/core.py": core.replace("return a\n", "return (a\n")}),
        ("mend it", {"pkg/core.py": core + "\n\ndef extra():\n    pass\n"}),
        ("add __all__", {"pkg/core.py": '__all__ = ["run"]\n' + core}),
        ("crlf", {"pkg/core.py": core.replace("\n", "\r\n").encode()}),
        ("back to lf", {"pkg/core.py": core}),
        (
            "move run",
            {
                "pkg/core.py": core.replace("def run(a):\n    return a\n", ""),
                "pkg/run.py": "def run(a):\n    return a\n",
            },
        ),
        ("drop run", {"pkg/run.py": None}),
    ]


def test_pipeline_parses_a_file_whole_once_across_days(
    git_repo: GitFixture, tmp_path: Path
) -> None:
    # Two edits a day for three days: each version is derived from the one
    # before it only if facts follow the history oldest first, across days too.
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
    git_repo.write("pkg/engine.py", body)
    git_repo.commit("baseline", when=datetime(2026, 2, 28, 9, tzinfo=UTC))
    for day in (1, 2, 3):
        for hour in (9, 15):
            body = body.replace("return x", f"return x * {day * hour}", 1)
            body += f"def g{day}_{hour}(y):\n    return y\n"
            git_repo.write("pkg/engine.py", body)
            git_repo.commit(f"day {day} {hour}h", when=datetime(2026, 3, day, hour, tzinfo=UTC))
    settings = build_settings(
        repos=(str(git_repo.path),),
        since="2026-03-01",
        until="2026-03-03",
        tz="UTC",
        lang="en",
        out=str(tmp_path / "out"),
        home=str(tmp_path / "home"),
        no_llm=True,
        cwd=tmp_path,
    )
    days = list(settings.selection.days)
    state = _prepare(settings, identify(settings.repos[0]), days)
    assert state.source is not None and state.extractor is not None
    try:
        with Store.open(Path(":memory:")) as store:
            entries = [
                e
                for d in days
                for e in analyse_day(state, "en", RuleAnalyser(), store, state.by_day[d], Emitter())
            ]
    finally:
        state.source.close()
    added = {e.commit.title: [(a.name, a.change) for a in e.facts.api_changes] for e in entries}
    assert added == {f"day {d} {h}h": [(f"g{d}_{h}", "added")] for d in (1, 2, 3) for h in (9, 15)}
    assert state.extractor.apis.stats == Counter(parsed=1, derived=6)
