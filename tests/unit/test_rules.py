"""The rule analyser against the rubric (shared/IMPORTANCE.md) on real-world titles.

Titles come from the seeds and from common conventions; the expected values
are what the rubric says a downstream maintainer should get, including the
cases the old tool got wrong (a segfault fix rated low, a CI change medium).
"""

from __future__ import annotations

import pytest

from repoherald.analysis.facts.commit import AreaRules, FactsExtractor, parse_title
from repoherald.analysis.verdict.rules import RULES_VERSION, RuleAnalyser
from repoherald.analysis.verdict.writeup import describe
from repoherald.i18n import localise, localise_analysis
from repoherald.models import ChangeType, Commit, FileChange, FileStatus, Importance, Person, Text

M, A, D = FileStatus.MODIFIED, FileStatus.ADDED, FileStatus.DELETED


def _commit(message: str) -> Commit:
    who = Person("Dev", "dev@example.com")
    return Commit("a" * 40, ("b" * 40,), who, 0, 0, who, 0, 0, message)


def _neutral(message: str, files: list[tuple[str, FileStatus, int, int]]):
    extractor = FactsExtractor(AreaRules(package_names=frozenset({"vllm"})), lambda oid: None)
    changes = [FileChange(path=p, status=s, added=a, deleted=d) for p, s, a, d in files]
    commit = _commit(message)
    facts = extractor.extract(commit, changes)
    return facts, RuleAnalyser().analyse(commit, facts)


def _analyse(message: str, files: list[tuple[str, FileStatus, int, int]], lang: str = "en"):
    """The rule analysis as a report in ``lang`` shows it."""
    facts, analysis = _neutral(message, files)
    return facts, localise_analysis(lang, analysis)


CASES = [
    ("[Bugfix] Fix potential EAGLE spec decode segfault during graph capture (#32818)",
     [("vllm/v1/spec_decode/eagle.py", M, 10, 2)], ChangeType.BUGFIX, Importance.HIGH),
    ("[Bugfix] Fix Whisper/encoder-decoder GPU memory leak (#32789)",
     [("vllm/v1/worker/gpu_model_runner.py", M, 12, 3)], ChangeType.BUGFIX, Importance.HIGH),
    ("[CI] refactor release pipeline config into groups (#32833)",
     [(".buildkite/release-pipeline.yaml", M, 80, 60)], ChangeType.CI_BUILD, Importance.LOW),
    ("[ROCm][CI] Fix AITER test flakiness by using explicit attention backend (#32346)",
     [("tests/models/test_aiter.py", M, 5, 1)], ChangeType.TESTS, Importance.LOW),
    ("[Deprecation] Remove deprecated environment variables (#32812)",
     [("vllm/envs.py", M, 2, 40)], ChangeType.REFACTOR, Importance.HIGH),
    ("[Docs] Remove outdated async_scheduling limitation with speculative decoding (#32775)",
     [("vllm/config/scheduler.py", M, 1, 3)], ChangeType.DOCS, Importance.LOW),
    ("Upgrade transformers-4.57.5 (#32287)",
     [("requirements/test.in", M, 1, 1), ("tests/models/test_jina.py", M, 3, 0)],
     ChangeType.DEPENDENCIES, Importance.LOW),
    ("Bump Flashinfer to v0.6.1 (#30993)",
     [("requirements/cuda.txt", M, 1, 1), ("docker/Dockerfile", M, 1, 1)],
     ChangeType.DEPENDENCIES, Importance.MEDIUM),
    ("fix(scheduler): avoid deadlock when the queue is empty",
     [("src/sched/queue.py", M, 8, 2)], ChangeType.BUGFIX, Importance.HIGH),
    ("feat!: drop support for the v1 config format",
     [("src/app/config.py", M, 20, 80)], ChangeType.FEATURE, Importance.HIGH),
    ('Revert "[Feature] Add new scheduler (#100)"',
     [("vllm/core/scheduler.py", M, 10, 300)], ChangeType.REVERT, Importance.HIGH),
    ("Update README.md", [("README.md", M, 3, 1)], ChangeType.DOCS, Importance.LOW),
    ("[AMD][ROCm] Fix crash in MoRI EP all2all", [("vllm/distributed/mori.py", M, 9, 2)],
     ChangeType.BUGFIX, Importance.MEDIUM),
    ("[Perf] Speed up the sampler", [("vllm/v1/sample/sampler.py", M, 40, 30)],
     ChangeType.PERFORMANCE, Importance.MEDIUM),
    # The rubric: typos and messages are low; the held-out readers typed them docs.
    ("[Misc] Fix typo in log message", [("vllm/engine/llm.py", M, 1, 1)],
     ChangeType.DOCS, Importance.LOW),
    ("[Model] Add support for FooLM family",
     [("vllm/model_executor/models/foolm.py", A, 650, 0),
      ("tests/models/test_foolm.py", A, 80, 0)], ChangeType.FEATURE, Importance.HIGH),
    ("[Core] Enable prefix caching by default", [("vllm/config/cache.py", M, 1, 1)],
     ChangeType.FEATURE, Importance.HIGH),
    ("Add unit tests for the tokenizer", [("tests/test_tokenizer.py", A, 120, 0)],
     ChangeType.TESTS, Importance.LOW),
    ("[Security] Reject path traversal in model download", [("vllm/download.py", M, 15, 2)],
     ChangeType.BUGFIX, Importance.HIGH),
    ("[CI] Fix crash in nightly workflow", [(".github/workflows/nightly.yml", M, 2, 2)],
     ChangeType.CI_BUILD, Importance.LOW),
    ("Tidy imports", [("vllm/utils.py", M, 3, 3)], ChangeType.REFACTOR, Importance.LOW),
    # Plain imperative titles: the leading verb (after an "Area:" prefix) decides.
    ("Split the analyser's ask loop into three steps", [("pkg/llm/analyser.py", M, 80, 50)],
     ChangeType.REFACTOR, Importance.LOW),
    ("Store: move the transaction helper into one module", [("pkg/store/db.py", M, 30, 30)],
     ChangeType.REFACTOR, Importance.LOW),
    ("Contain unexpected errors per commit in the LLM stage", [("pkg/llm/stage.py", M, 20, 4)],
     ChangeType.BUGFIX, Importance.MEDIUM),
    ("Print the run's token usage in the summary", [("pkg/cli/summary.py", M, 12, 1)],
     ChangeType.FEATURE, Importance.MEDIUM),
    ("Docstrings for the write-up functions", [("pkg/writeup.py", M, 25, 3)],
     ChangeType.DOCS, Importance.LOW),
    ("Add missing attribute to the scheduler", [("pkg/sched.py", M, 2, 0)],
     ChangeType.BUGFIX, Importance.MEDIUM),
    ("Refactor the queue to fix a deadlock on shutdown", [("pkg/queue.py", M, 40, 30)],
     ChangeType.BUGFIX, Importance.HIGH),
    ("Test DST days", [("pkg/days.py", M, 1, 1), ("tests/test_days.py", M, 60, 0)],
     ChangeType.TESTS, Importance.LOW),
    # A verb whose files disagree is just a word.
    ("Document the retry policy", [("pkg/retry.py", M, 40, 10)],
     ChangeType.OTHER, Importance.MEDIUM),
    # Mentioning a break or an injection is not announcing one.
    ("PR labels are evidence (bug -> fix, breaking/deprecation -> high)",
     [("pkg/rules.py", M, 30, 2)], ChangeType.BUGFIX, Importance.MEDIUM),
    ("The analyser takes no dependency injection it does not need",
     [("pkg/llm/analyser.py", M, 5, 9)], ChangeType.OTHER, Importance.MEDIUM),
    ("[Breaking] Rename the serve entry point", [("pkg/serve.py", M, 5, 5)],
     ChangeType.REFACTOR, Importance.HIGH),
    ("Fix SQL injection in the search endpoint", [("pkg/api/search.py", M, 6, 2)],
     ChangeType.BUGFIX, Importance.HIGH),
    # Checking input changes only what input that failed anyway is told; a large one is more.
    ("Validate the profiler schedule before starting", [("pkg/profiling.py", M, 12, 1)],
     ChangeType.BUGFIX, Importance.LOW),
    ("fix(vl): raise a clear error on malformed data URLs", [("pkg/vl/media.py", M, 6, 2)],
     ChangeType.BUGFIX, Importance.LOW),
    ("Validate every request field through one schema", [("pkg/api/schema.py", M, 90, 40)],
     ChangeType.BUGFIX, Importance.MEDIUM),
    ("Batch the structured-output bitmask application", [("pkg/sample.py", M, 30, 20)],
     ChangeType.PERFORMANCE, Importance.MEDIUM),
    ("!1340 【BugFix】update the rotary cache for the VL model", [("pkg/rope.py", M, 3, 1)],
     ChangeType.BUGFIX, Importance.MEDIUM),
    ("!1420 【Master】【Feature】try set graph capture default Merge pull request !1420 from a/b",
     [("pkg/config.py", M, 10, 2)], ChangeType.FEATURE, Importance.HIGH),
]  # fmt: skip


@pytest.mark.parametrize(("title", "files", "ctype", "importance"), CASES)
def test_rubric_cases(title, files, ctype, importance) -> None:
    _, analysis = _analyse(title, files)
    assert (analysis.change_type, analysis.importance) == (ctype, importance), analysis.reasons
    assert analysis.reasons, "every verdict states its reasons"


@pytest.mark.parametrize(("title", "files", "ctype", "importance"), CASES)
def test_every_message_exists_in_every_language(title, files, ctype, importance) -> None:
    _, neutral = _neutral(title, files)
    zh, en = localise_analysis("zh", neutral), localise_analysis("en", neutral)
    assert len(zh.reasons) == len(en.reasons) == len(neutral.reasons)
    assert zh.summary != en.summary


def test_title_conventions() -> None:
    info = parse_title("[Bugfix][Kernel] Fix `foo` crash (#1234)")
    assert info.tags == ("bugfix", "kernel") and info.pr_number == 1234
    assert info.text == "Fix `foo` crash"
    cc = parse_title("feat(api)!: remove the v1 endpoint")
    assert (cc.conventional_type, cc.conventional_scope, cc.breaking) == ("feat", "api", True)
    assert parse_title("Merge pull request #77 from a/b").pr_number == 77
    assert parse_title("plain message").tags == ()
    gitee = parse_title("!1340 【BugFix】【Master】update cache Merge pull request !1340 from a/b")
    assert (gitee.tags, gitee.text, gitee.pr_number) == (("bugfix", "master"), "update cache", None)


def test_facts_from_message() -> None:
    facts, analysis = _analyse(
        'Revert "Add thing"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n\n'
        "Co-authored-by: Ann Lee <ann@example.com>\nBREAKING CHANGE: gone\n",
        [("src/x.py", M, 1, 1)],
    )
    assert facts.is_revert and facts.reverted_sha and facts.reverted_sha.startswith("0123456")
    assert facts.co_authors == ("Ann Lee",)
    assert facts.breaking_marker
    assert "ann@example.com" not in repr(analysis)


def test_summary_is_built_from_facts_only() -> None:
    _facts, analysis = _analyse(
        "[Bugfix] Fix leak (#9)", [("vllm/a.py", M, 7, 3), ("tests/test_a.py", M, 2, 0)]
    )
    assert "Fix leak" in analysis.summary
    assert "(+9/−3)" not in analysis.summary, "line counts are shown elsewhere, not restated"
    # Only dimensions with something to say: a leak fix touching a module and its test
    # has no new module, no perf or security word and no API change.
    assert set(analysis.insights) == {"maintainability"}
    assert not any(ch.isdigit() and ch not in "0123456789" for ch in analysis.summary)


def test_zh_labels() -> None:
    _, analysis = _analyse("[Doc] Update guide", [("docs/guide.md", M, 1, 1)], lang="zh")
    assert isinstance(analysis.summary, str) and analysis.summary.startswith("文档：")
    assert analysis.analyser == f"rules/{RULES_VERSION}"


def test_one_analysis_serves_every_language() -> None:
    title, files = "[Bugfix] Fix leak in the cache (#9)", [("vllm/a.py", M, 7, 3)]
    _, neutral = _neutral(title, files)
    assert "zh" not in neutral.analyser and "en" not in neutral.analyser
    messages = [
        *neutral.reasons, neutral.summary, *neutral.impact, *neutral.insights.values(),
        *(m for r in neutral.risks for m in (r.risk, r.detail, r.mitigation)),
        *neutral.recommendations,
    ]  # fmt: skip
    assert all(isinstance(m, Text) for m in messages), "rules store codes, not prose"
    zh, en = localise("zh", neutral.summary), localise("en", neutral.summary)
    assert zh == "问题修复：Fix leak in the cache"
    assert en == "Bug fix: Fix leak in the cache"
    assert localise("zh", neutral.reasons[0]) == "类型：标题标签 [bugfix]"
    assert localise("en", neutral.reasons[0]) == "Type: title tag [bugfix]"


def test_describe_strips_template_trailers_and_addresses() -> None:
    body = (
        "### What this PR does / why we need it?\n"
        "Fixes the leak in the KV cache when requests abort, reported by x@y.com.\n\n"
        "### How was this patch tested?\npytest\n\n"
        "Signed-off-by: Someone <someone@example.com>\n"
    )
    text = describe(body)
    assert text.startswith("Fixes the leak in the KV cache")
    assert "@" not in text.replace("<email>", "")
    long = describe("word " * 200)
    assert long.endswith("…") and len(long) <= 281


def test_security_prose_in_a_description_does_not_raise() -> None:
    files = [("src/app/a.py", M, 20, 5)]
    _, casual = _analyse("Add a cache\n\nThis has no security impact at all.", files)
    assert casual.importance is Importance.MEDIUM, casual.reasons
    _, cve = _analyse("Update the parser\n\nFixes CVE-2026-12345 in header parsing.", files)
    assert cve.importance is Importance.HIGH, cve.reasons


def test_a_title_word_alone_does_not_make_a_code_change_a_test_change() -> None:
    mostly_code = [("src/app/a.py", M, 300, 20), ("tests/test_a.py", M, 10, 0)]
    _, analysis = _analyse("Rework the scheduler and its tests", mostly_code)
    assert analysis.change_type is not ChangeType.TESTS, analysis.reasons
    mostly_tests = [("src/app/a.py", M, 2, 1), ("tests/test_a.py", M, 200, 0)]
    _, analysis = _analyse("Rework the scheduler tests", mostly_tests)
    assert analysis.change_type is ChangeType.TESTS, analysis.reasons


@pytest.mark.parametrize(
    "body",
    [
        "SUMMARY:\nFixes #3057.",
        "Fixes #2745",
        "This PR is:\n\n- [x] tested",
        "* Update\n\n* Update\n\n* WIP",
        "From: @lllrt \nReviewed-by: @ \n\n\nSee merge request: mindspore/vllm-mindspore!1639",
        "Thank you for contributing to vLLM! Please fill in the template below.",
        "| Metric | old | new |\n|---|---:|---:|\n| tok/s | 974 | 990 |",
        "Add the cache",
        "Differential Revision: D113826710",
    ],
)
def test_describe_drops_what_only_points_elsewhere_or_repeats_the_title(body: str) -> None:
    assert describe(body, "Add the cache (#12)") == ""


def test_describe_keeps_the_account_after_a_label_and_stops_before_a_table() -> None:
    body = (
        "SUMMARY: Fixes #2975, replaces the static round-robin GPU assignment with a scheduler.\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    text = describe(body, "Dynamic GPU scheduling")
    assert text == "Fixes #2975, replaces the static round-robin GPU assignment with a scheduler."


def test_a_failure_and_its_breadth_must_share_a_sentence() -> None:
    files = [("pkg/core/sched.py", M, 20, 5)]
    apart = "Fix the scheduler\n\nThis runs for every request. A rare path raised `KeyError`."
    together = "Fix the scheduler\n\nEvery request raised `KeyError` after the refactor."
    abbreviated = "Fix the scheduler\n\nA default run (e.g. `serve x`) crashes on start."
    assert _analyse(apart, files)[1].importance is not Importance.HIGH
    assert _analyse(together, files)[1].importance is Importance.HIGH
    assert _analyse(abbreviated, files)[1].importance is Importance.HIGH


def test_an_accuracy_score_in_a_title_is_not_a_failure() -> None:
    files = [("pkg/rules.py", M, 20, 5)]
    score = "Fix the verdict of releases: accuracy holdout3 0.738 -> 0.770, gold 0.913 -> 0.918"
    failure = "Fix FP8 e4m3 accuracy: make max_offset dtype-aware"
    assert _analyse(score, files)[1].importance is not Importance.HIGH
    assert _analyse(failure, files)[1].importance is Importance.HIGH
