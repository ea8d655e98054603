"""The issue-11 signals of the rule analyser, one fixture commit per signal.

Reach, not size; moved is not removed; public means importable; severity
scoped by path; the host framework's pin; plain imperative titles. Each
commit is built from files and blob contents the way the pipeline feeds
the rules, without git.
"""

from __future__ import annotations

import pytest

from repoherald.analysis.facts.commit import AreaRules, FactsExtractor
from repoherald.analysis.verdict.reach import host_pin, is_public_module, signature_breaks
from repoherald.analysis.verdict.rules import RuleAnalyser
from repoherald.i18n import localise_analysis
from repoherald.models import (
    Analysis,
    ChangeType,
    Commit,
    FileChange,
    FileStatus,
    Importance,
    Person,
)

M, A, D = FileStatus.MODIFIED, FileStatus.ADDED, FileStatus.DELETED

FUNCS = (
    "def alpha(x):\n    return x\n\n\ndef beta(x):\n    return x\n\n\ndef gamma(x):\n    return x\n"
)
"""Three public functions: removing all three is the API-removal threshold."""


def _run(
    message: str,
    files: list[tuple[str, FileStatus, int, int]],
    blobs: dict[str, tuple[str, str]] | None = None,
) -> Analysis:
    """The English analysis of a commit; ``blobs`` maps a path to (before, after) text."""
    blobs = blobs or {}
    store: dict[str, bytes] = {}
    changes = []
    for path, status, added, deleted in files:
        old, new = blobs.get(path, ("", ""))
        old_id, new_id = (f"old:{path}" if old else ""), (f"new:{path}" if new else "")
        store.update({old_id: old.encode(), new_id: new.encode()})
        changes.append(FileChange(path, status, None, added, deleted, old_blob=old_id,
                                  new_blob=new_id))  # fmt: skip
    who = Person("Dev", "dev@example.com")
    commit = Commit("a" * 40, ("b" * 40,), who, 0, 0, who, 0, 0, message)
    extractor = FactsExtractor(AreaRules(package_names=frozenset({"pkg"})), store.get)
    facts = extractor.extract(commit, changes)
    return localise_analysis("en", RuleAnalyser().analyse(commit, facts))


def test_host_framework_pin_bump_is_high_and_names_the_host() -> None:
    analysis = _run(
        "[skip ci] Update vLLM LKG to d626108b1841888ec90aced33367149a6bbc7e4b",
        [(".buildkite/vllm_lkg.version", M, 1, 1)],
    )
    assert analysis.change_type is ChangeType.DEPENDENCIES
    assert analysis.importance is Importance.HIGH
    assert any("`vllm`" in r for r in analysis.reasons), analysis.reasons
    assert host_pin_of(".python-version") is None


def host_pin_of(path: str) -> str | None:
    extractor = FactsExtractor(AreaRules(package_names=frozenset()), lambda oid: None)
    who = Person("Dev", "dev@example.com")
    commit = Commit("a" * 40, ("b" * 40,), who, 0, 0, who, 0, 0, "Bump")
    return host_pin(extractor.extract(commit, [FileChange(path, M, None, 1, 1)]))


def test_a_moved_function_is_not_a_removal() -> None:
    analysis = _run(
        "Split helpers into their own module",
        [("pkg/core.py", M, 0, 9), ("pkg/helpers.py", A, 9, 0)],
        {"pkg/core.py": (FUNCS + "X = 1\n", "X = 1\n"), "pkg/helpers.py": ("", FUNCS)},
    )
    assert analysis.importance is not Importance.HIGH, analysis.reasons
    assert any(r.startswith("moved, not removed") for r in analysis.reasons), analysis.reasons


def test_private_names_and_modules_are_not_public_api() -> None:
    private = FUNCS.replace("def ", "def _")
    analysis = _run(
        "Drop helpers",
        [("pkg/ops.py", M, 0, 9), ("pkg/_impl/kernels.py", M, 0, 9)],
        {
            "pkg/ops.py": (private + "X = 1\n", "X = 1\n"),
            "pkg/_impl/kernels.py": (FUNCS, "Y = 2\n"),
        },
    )
    assert analysis.importance is Importance.LOW, analysis.reasons
    assert is_public_module("pkg/ops.py") and is_public_module("pkg/sub/__init__.py")
    assert not is_public_module("pkg/_impl/kernels.py")
    assert not is_public_module("examples/serve.py") and not is_public_module("tests/test_a.py")


def test_removing_public_api_is_high_but_capped_in_a_prototype() -> None:
    files = [("pkg/quant/api.py", M, 1, 9)]
    core = _run("Delete the old quantizers", files, {"pkg/quant/api.py": (FUNCS, "X = 1\n")})
    assert core.importance is Importance.HIGH, core.reasons
    assert any("`alpha`" in r for r in core.reasons), core.reasons
    proto = [("pkg/prototype/quant/api.py", M, 1, 9)]
    opt_in = _run("Delete the old quantizers", proto,
                  {"pkg/prototype/quant/api.py": (FUNCS, "X = 1\n")})  # fmt: skip
    assert opt_in.importance is Importance.MEDIUM, opt_in.reasons
    assert any("prototype/" in r for r in opt_in.reasons), opt_in.reasons


def test_size_alone_never_makes_high() -> None:
    huge = [("pkg/kernels/gemm.py", M, 2500, 900), ("pkg/kernels/tune.py", A, 1200, 0)]
    analysis = _run("Rework the gemm kernel tuning", huge)
    assert analysis.importance is Importance.MEDIUM, analysis.reasons
    tools = [("tools/tuner/run.py", A, 1500, 0), ("tools/tuner/space.py", A, 900, 0)]
    analysis = _run("Add support for batched kernel tuning", tools)
    assert analysis.importance is not Importance.HIGH, analysis.reasons


def test_severity_on_a_core_path_is_high_and_on_a_model_is_medium() -> None:
    core = _run("Fix NaN in the attention output buffers", [("pkg/attention/backend.py", M, 6, 2)])
    assert core.importance is Importance.HIGH, core.reasons
    assert any("“nan”" in r for r in core.reasons), core.reasons
    tagged = _run("[gemma4] Fix NaN in attention buffers", [("pkg/attention/backend.py", M, 6, 2)])
    assert tagged.importance is Importance.MEDIUM, tagged.reasons
    assert any("confined to gemma4" in r for r in tagged.reasons), tagged.reasons
    model = _run("Fix crash on DeepSeek V3 forward", [("pkg/models/deepseek_v3.py", M, 3, 1)])
    assert model.importance is Importance.MEDIUM, model.reasons


def test_a_fix_whose_description_names_a_broad_failure_is_high() -> None:
    body = "\n\nAfter the upstream change every MoE job raised TypeError at load.\n"
    analysis = _run("Restore the shared-experts sync in the MoE forward" + body,
                    [("pkg/ops/fused_moe.py", M, 12, 12)])  # fmt: skip
    assert analysis.change_type is ChangeType.BUGFIX, analysis.reasons
    assert analysis.importance is Importance.HIGH, analysis.reasons
    quiet = _run("Restore the log line in the loader\n\nThe message was lost.",
                 [("pkg/loader.py", M, 1, 0)])  # fmt: skip
    assert quiet.importance is Importance.MEDIUM, quiet.reasons


def test_plain_titles_need_the_diff_to_agree() -> None:
    matrices = [("support_matrices/nightly/v6e/model_support_matrix.csv", M, 3, 3)]
    analysis = _run("Update nightly support matrices", matrices)
    assert analysis.change_type is not ChangeType.FEATURE, analysis.reasons
    assert analysis.importance is Importance.LOW, analysis.reasons
    tag = _run("[FIX_FOR_UPSTREAM=abc] Track the runner refactor", [("pkg/ops/moe.py", M, 4, 1)])
    assert tag.change_type is ChangeType.BUGFIX, tag.reasons


def test_deleting_dead_code_is_a_refactor_not_a_fix_or_a_removal() -> None:
    analysis = _run(
        "Delete broken SmoothQuant example",
        [
            ("pkg/smoothquant/README.md", M, 0, 16),
            ("pkg/prototype/smoothquant/example.py", D, 0, 309),
        ],
        {"pkg/prototype/smoothquant/example.py": (FUNCS, "")},
    )
    assert analysis.change_type is ChangeType.REFACTOR, analysis.reasons
    assert analysis.importance is Importance.LOW, analysis.reasons


def test_a_title_mentioning_security_in_a_feature_is_not_a_security_fix() -> None:
    analysis = _run("Add a security policy link to the CLI help", [("pkg/cli.py", M, 3, 0)])
    assert analysis.importance is Importance.MEDIUM, analysis.reasons


def test_signature_breaks_only_when_callers_can_fail() -> None:
    assert not signature_breaks("(a, b=1)", "(a, b=1, c=None)")
    assert not signature_breaks("(a) -> int", "(a, *args, **kwargs) -> int")
    assert signature_breaks("(a, scheme)", "(a, config)")
    assert signature_breaks("(a)", "(a, b)")


def test_deleting_a_public_package_is_high_unless_it_moves() -> None:
    gone = [("pkg/swizzle/__init__.py", D, 0, 3), ("pkg/swizzle/ops.py", D, 0, 40)]
    analysis = _run("Tidy the swizzle code", gone)
    assert analysis.importance is Importance.HIGH, analysis.reasons
    assert any("`pkg.swizzle`" in r for r in analysis.reasons), analysis.reasons
    moved = [*gone, ("pkg/kernels/swizzle/__init__.py", A, 3, 0)]
    assert _run("Tidy the swizzle code", moved).importance is not Importance.HIGH
    proto = [("pkg/prototype/swizzle/__init__.py", D, 0, 3)]
    assert _run("Tidy the swizzle code", proto).importance is not Importance.HIGH


def test_a_failure_at_model_load_counts_as_broad() -> None:
    body = "\n\nUpstream removed the attribute; the wrapper still used it, raising\n"
    body += "AttributeError at model load.\n"
    analysis = _run("Fix the kv-scales path in attention for upstream" + body,
                    [("pkg/ops/attention.py", M, 4, 2)])  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons


def test_switching_a_named_flag_is_a_compatibility_change() -> None:
    files = [("pkg/platforms/tpu.py", M, 21, 0), ("pkg/models/loader.py", M, 16, 8)]
    analysis = _run("Disable mm_device_do_normalize for JAX-native multimodal models", files)
    assert analysis.importance is Importance.HIGH, analysis.reasons
    assert any("`mm_device_do_normalize`" in r for r in analysis.reasons), analysis.reasons
    example = [("examples/autoround/run.py", M, 1, 1)]
    assert _run("disable calibrate_all_experts for the example", example).importance is (
        Importance.LOW
    )


def test_an_unclassified_change_to_default_path_code_is_medium() -> None:
    analysis = _run("Clamp decode buckets to the cache size", [("pkg/sched/buckets.py", M, 9, 2)])
    assert analysis.importance is Importance.MEDIUM, analysis.reasons
    plain = _run(
        "Separate q, k, v projections in sliding layers", [("pkg/layers/attn.py", M, 36, 47)]
    )
    assert plain.change_type is ChangeType.OTHER and plain.importance is Importance.MEDIUM


def test_features_in_tools_and_hidden_directories_are_low() -> None:
    tools = [("tools/tuning/rpa_tuner.py", A, 400, 0), (".claude/skills/tiny/finetune.py", M, 4, 0)]
    analysis = _run("Add a batched kernel tuner", tools)
    assert analysis.importance is Importance.LOW, analysis.reasons
    assert any("tools/tuning/rpa_tuner.py" in r for r in analysis.reasons), analysis.reasons


def test_the_write_up_says_moved_and_leaves_out_empty_insights() -> None:
    analysis = _run(
        "Split helpers into their own module",
        [("pkg/core.py", M, 0, 9), ("pkg/helpers.py", A, 9, 0)],
        {"pkg/core.py": (FUNCS + "X = 1\n", "X = 1\n"), "pkg/helpers.py": ("", FUNCS)},
    )
    assert "moves `alpha`, `beta`, `gamma` to another module" in analysis.summary
    assert "moved, still importable" in analysis.insights["compatibility"]
    assert "Downstream calls break" not in [r.risk for r in analysis.risks]
    docs = _run("Update the guide", [("docs/guide.md", M, 3, 1)])
    assert docs.insights == {}, docs.insights


def test_impact_lists_a_moved_name_as_moved_not_removed() -> None:
    widget = "class Widget:\n    pass\n"
    analysis = _run(
        "Move Widget into its own module",
        [("pkg/old.py", M, 0, 2), ("pkg/new.py", A, 2, 0)],
        {"pkg/old.py": (widget + "X = 1\n", "X = 1\n"), "pkg/new.py": ("", widget)},
    )
    assert any("moved" in line and "Widget" in line for line in analysis.impact), analysis.impact
    assert not any(line.startswith("Public API removed") for line in analysis.impact)
    assert not any(line.startswith("Public API added") for line in analysis.impact)


def _with_pr(message: str, labels: tuple[str, ...], body: str = "") -> Analysis:
    """A one-file source change whose pull request carries ``labels`` and ``body``."""
    from dataclasses import replace

    from repoherald.models import PullRequest

    who = Person("Dev", "dev@example.com")
    commit = Commit("a" * 40, ("b" * 40,), who, 0, 0, who, 0, 0, message)
    change = FileChange("pkg/engine.py", M, None, 3, 1)
    facts = FactsExtractor(AreaRules(package_names=frozenset({"pkg"})), {}.get).extract(
        commit, [change]
    )
    pr = PullRequest(7, "PR title", body, labels, "dev", "lead", "https://github.com/o/r/pull/7")
    return localise_analysis("en", RuleAnalyser().analyse(commit, replace(facts, pull_request=pr)))


def test_bug_label_is_evidence_of_a_fix() -> None:
    analysis = _with_pr("Handle the empty batch", ("bug",))
    assert analysis.change_type is ChangeType.BUGFIX
    assert "pull request label `bug`" in analysis.reasons[0]


def test_performance_label_is_evidence_of_performance() -> None:
    assert _with_pr("Reuse the buffer", ("performance",)).change_type is ChangeType.PERFORMANCE


def test_breaking_label_raises_to_high_naming_the_label() -> None:
    analysis = _with_pr("Rename the scheduler option", ("breaking",))
    assert analysis.importance is Importance.HIGH
    assert any("labelled `breaking`" in r for r in analysis.reasons)


def test_unrelated_labels_change_nothing() -> None:
    plain = _with_pr("Rename the scheduler option", ())
    labelled = _with_pr("Rename the scheduler option", ("ready", "ci"))
    assert (plain.change_type, plain.importance) == (labelled.change_type, labelled.importance)


def test_pr_body_is_the_description_when_the_message_has_none() -> None:
    analysis = _with_pr("Handle the empty batch", (), body="The scheduler crashed on empty input.")
    assert analysis.description == "The scheduler crashed on empty input."


# -- rules/7: signals found on the held-out repositories --------------------------------


def test_a_parameter_dropped_from_many_public_functions_is_a_removal() -> None:
    before = "".join(f"def op_{n}(q, k, head_first=False):\n    return q\n\n\n" for n in "abc")
    after = "".join(f"def op_{n}(q, k):\n    return q\n\n\n" for n in "abc")
    analysis = _run("[Cleanup] Remove remaining head_first code paths",
                    [("pkg/ops.py", M, 6, 6)], {"pkg/ops.py": (before, after)})  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons
    assert any("`head_first`" in r and "`op_a`" in r for r in analysis.reasons), analysis.reasons
    # One function re-shaped is plumbing, not a removal; in a prototype it is opt-in.
    one = _run("[Cleanup] Simplify op_a", [("pkg/ops.py", M, 1, 1)],
               {"pkg/ops.py": (before, before.replace("k, head_first=False", "k", 1))})  # fmt: skip
    assert one.importance is not Importance.HIGH, one.reasons
    opt_in = _run("[Cleanup] Remove head_first", [("pkg/prototype/ops.py", M, 6, 6)],
                  {"pkg/prototype/ops.py": (before, after)})  # fmt: skip
    assert opt_in.importance is not Importance.HIGH, opt_in.reasons


def test_wrong_gradients_and_invalid_launches_are_failures() -> None:
    for title in (
        "Fix wrong grad_weight for fused linear cross entropy with reduction='none'",
        "[Fix] Fix invalid launch above 65535 blocks in decode-path kernels",
        "[Fix] Kernels fail to compile under Triton 3.6",
        "Stop non-finite steps before optimizer updates",
        "fix(ce): restore true-class gradient precision in low-precision buffers",
    ):
        analysis = _run(title, [("pkg/ops/cross_entropy.py", M, 20, 5)])
        assert (analysis.change_type, analysis.importance) == (
            ChangeType.BUGFIX,
            Importance.HIGH,
        ), (title, analysis.reasons)


def test_a_fix_under_one_platforms_backend_directory_is_narrow() -> None:
    analysis = _run("[Fix] Fix invalid launch in the reverse cumsum",
                    [("pkg/ops/utils/backends/triton_ascend/cumsum.py", M, 8, 3)])  # fmt: skip
    assert analysis.importance is Importance.MEDIUM, analysis.reasons
    assert any("triton_ascend/" in r for r in analysis.reasons), analysis.reasons
    # The project's own top package naming a platform narrows nothing.
    analysis = _run("[Fix] Fix invalid launch in the reverse cumsum",
                    [("vllm_ascend/ops/cumsum.py", M, 8, 3)])  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons


def test_typo_titles_are_docs_even_when_they_say_fix() -> None:
    for title in ("[Typo] Fix recurring spelling errors across docs and layers",
                  "[Next] Fix docstring inaccuracies and typos"):  # fmt: skip
        analysis = _run(title, [("pkg/layers/attn.py", M, 6, 6), ("docs/index.md", M, 2, 2)])
        assert (analysis.change_type, analysis.importance) == (ChangeType.DOCS, Importance.LOW), (
            title,
            analysis.reasons,
        )


def test_a_conventional_test_scope_backed_by_the_files_is_tests() -> None:
    files = [("test/test_rms_norm.py", M, 30, 4), ("pkg/ops/rms_norm.py", M, 1, 1)]
    analysis = _run("fix(test): prevent in-place backward from clobbering shared buffers", files)
    assert (analysis.change_type, analysis.importance) == (ChangeType.TESTS, Importance.LOW)
    code = _run("fix(test): harness needs the new loader",
                [("test/test_x.py", M, 2, 1), ("pkg/loader.py", M, 40, 10)])  # fmt: skip
    assert code.change_type is ChangeType.BUGFIX, code.reasons


def test_a_release_that_only_moves_the_version_is_low() -> None:
    analysis = _run("Bump version to 0.12.0rc1", [("pkg/version.py", M, 1, 1)])
    assert (analysis.change_type, analysis.importance) == (ChangeType.OTHER, Importance.LOW)
    deps = _run("[release] update dependency versions", [("setup.py", M, 7, 7)])
    assert deps.importance is Importance.MEDIUM, (
        "a release that moves dependencies is not bookkeeping"
    )


def test_a_moved_submodule_is_a_dependency_change() -> None:
    who = Person("Dev", "dev@example.com")
    commit = Commit("a" * 40, ("b" * 40,), who, 0, 0, who, 0, 0, "Pin composable_kernel to 15e12dd")
    change = FileChange("3rdparty/ck", M, None, 0, 0, old_mode="160000", new_mode="160000")
    facts = FactsExtractor(AreaRules(), lambda oid: None).extract(commit, [change])
    analysis = localise_analysis("en", RuleAnalyser().analyse(commit, facts))
    assert (analysis.change_type, analysis.importance) == (
        ChangeType.DEPENDENCIES,
        Importance.MEDIUM,
    ), analysis.reasons
    assert any("3rdparty/ck" in r for r in analysis.reasons)


def test_a_failure_in_the_tests_is_not_a_severe_fix() -> None:
    analysis = _run("fix moe ut oom", [("pkg/fused_moe.py", M, 3, 3)])
    assert analysis.importance is not Importance.HIGH, analysis.reasons
    core = _run("fix moe oom", [("pkg/fused_moe.py", M, 3, 3)])
    assert core.importance is Importance.HIGH, core.reasons


def test_a_low_kind_tag_yields_to_the_next_tag_when_the_change_is_code() -> None:
    files = [("pkg/kernels/mega_moe.py", A, 900, 0), (".github/workflows/moe.yml", M, 4, 1)]
    analysis = _run("[FlyDSL] [CI] [feat] mega-moe stage2", files)
    assert analysis.change_type is ChangeType.FEATURE, analysis.reasons
    # Mostly tests: the low-kind tag stands, not the "fix" after it.
    files = [("tests/test_moe.py", M, 40, 10), ("pkg/ops/reference.py", M, 2, 2)]
    analysis = _run("[CI] fix: lazily build reference weights", files)
    assert analysis.change_type is ChangeType.CI_BUILD, analysis.reasons


def test_tuning_is_performance() -> None:
    analysis = _run("tune chunked prefill params for gfx950", [("pkg/ops/paged_attn.py", M, 9, 9)])
    assert analysis.change_type is ChangeType.PERFORMANCE, analysis.reasons


def test_support_matrices_are_docs_whatever_their_format() -> None:
    files = [("support_matrices/nightly/v6e/model_support_matrix.csv", M, 3, 3)]
    analysis = _run("[skip ci] Update nightly support matrices (v6e/v7x)", files)
    assert (analysis.change_type, analysis.importance) == (ChangeType.DOCS, Importance.LOW)


def test_tuned_kernel_configs_are_performance() -> None:
    files = [("pkg/configs/gfx950-GEMM-A16W16.json", M, 40, 40)]
    analysis = _run("[gfx950] Retune the small-M tiles in the A16W16 fallback config", files)
    assert analysis.change_type is ChangeType.PERFORMANCE, analysis.reasons
    assert analysis.importance is Importance.MEDIUM, analysis.reasons


def test_plain_fix_verbs_beyond_fix() -> None:
    for title in ("Preserve first-tile flag during scheduler reconstruction",
                  "Stabilize tensor max_seqlen compile key",
                  "Don't scatter dK/dV at sentinel indices"):  # fmt: skip
        analysis = _run(title, [("pkg/ops/scheduler.py", M, 6, 2)])
        assert analysis.change_type is ChangeType.BUGFIX, (title, analysis.reasons)


def test_removing_behaviour_from_the_default_path_is_medium() -> None:
    analysis = _run("Remove qwen3.5 from flatten_input", [("pkg/runner.py", M, 0, 1)])
    assert (analysis.change_type, analysis.importance) == (ChangeType.REFACTOR, Importance.MEDIUM)
    assert any("`pkg/runner.py`" in r for r in analysis.reasons), analysis.reasons


# -- rules/7, third held-out round: compatibility surface and model paths ---------------


def test_deleting_a_public_module_breaks_its_import_path() -> None:
    shim = "from pkg.checkpointer import CheckpointManager\n"
    analysis = _run("Remove the legacy pkg.components.checkpoint import path",
                    [("pkg/components/checkpoint.py", D, 0, 1)],
                    {"pkg/components/checkpoint.py": (shim, "")})  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons
    assert any("`pkg.components.checkpoint`" in r for r in analysis.reasons), analysis.reasons
    files = [("pkg/components/checkpoint.py", D, 0, 1), ("pkg/ckpt/checkpoint.py", A, 1, 0)]
    blobs = {"pkg/components/checkpoint.py": (shim, ""), "pkg/ckpt/checkpoint.py": ("", shim)}
    moved = _run("Move the checkpoint helpers", files, blobs)
    assert moved.importance is not Importance.HIGH, moved.reasons
    for path in ("csrc/ops/sampling/build.py", "pkg/models/longcat/system_prompt.py",
                 "pkg/tests.py"):  # fmt: skip
        other = _run("Remove a helper", [(path, D, 0, 1)], {path: ("X = 1\n", "")})
        assert other.importance is not Importance.HIGH, (path, other.reasons)


def test_a_word_that_starts_like_a_model_name_is_not_one() -> None:
    analysis = _run("[Bugfix] Pin sampling to CPU to stop random token corruption",
                    [("pkg/v1/sampling_batch.py", M, 20, 10)])  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons
    granite = _run("Fix a crash in GraniteMoe experts", [("pkg/modeling/granitemoe.py", M, 5, 5)])
    assert granite.importance is Importance.MEDIUM, granite.reasons


def test_one_models_directory_is_narrow() -> None:
    files = [("pkg/models/longcat_image/pipeline.py", M, 30, 5)]
    analysis = _run("Fix wrong outputs in the edit pipeline", files)
    assert analysis.importance is Importance.MEDIUM, analysis.reasons
    shared = _run("Fix wrong outputs in the loader", [("pkg/models/utils.py", M, 30, 5)])
    assert shared.importance is Importance.HIGH, shared.reasons


def test_a_title_that_starts_or_stops_a_default_changes_defaults() -> None:
    for title in ("Default MLX command-buffer limits on macOS",
                  "Stop defaulting MLX buffer memory limit"):  # fmt: skip
        analysis = _run(title, [("pkg/__init__.py", M, 4, 1)])
        assert analysis.importance is Importance.HIGH, (title, analysis.reasons)


def test_environment_variables_removed_or_redefaulted_are_high() -> None:
    entry = '    "PKG_DEBUG": lambda: os.getenv("PKG_DEBUG"),\n'
    envs = "import os\nenvironment_variables = {\n" + entry + "}\n"
    analysis = _run("Remove custom debug config", [("pkg/envs.py", M, 0, 1)],
                    {"pkg/envs.py": (envs, "import os\nenvironment_variables = {}\n")})  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons
    assert any("`PKG_DEBUG`" in r for r in analysis.reasons), analysis.reasons
    assert "`PKG_DEBUG`" in str(analysis.insights["compatibility"])
    assert any("`PKG_DEBUG`" in str(r.detail) for r in analysis.risks), analysis.risks
    before = 'import os\nPIPE = os.getenv("PKG_DECODE_PIPELINE", "0") == "1"\n'
    analysis = _run("Tidy the decode loop", [("pkg/runner.py", M, 1, 1)],
                    {"pkg/runner.py": (before, before.replace('"0"', '"1"'))})  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons
    assert any("`PKG_DECODE_PIPELINE`" in r and '`"0"`' in r for r in analysis.reasons)
    # A read that only moves out of a module that is not the registry, or a
    # platform variable, is no change of the project's surface.
    moved = _run("Tidy the decode loop", [("pkg/runner.py", M, 0, 1)],
                 {"pkg/runner.py": (before, "import os\n")})  # fmt: skip
    assert moved.importance is not Importance.HIGH, moved.reasons
    cuda = 'import os\nD = os.getenv("CUDA_VISIBLE_DEVICES", "0")\n'
    platform = _run("Tidy", [("pkg/runner.py", M, 1, 1)],
                    {"pkg/runner.py": (cuda, cuda.replace('"0"', '""'))})  # fmt: skip
    assert platform.importance is not Importance.HIGH, platform.reasons


# -- rules/7, fourth held-out round --------------------------------------------------------


def _run_in(
    repo_words: frozenset[str], message: str, files: list[tuple[str, FileStatus, int, int]]
) -> Analysis:
    """Like :func:`_run`, for a repository whose package names are ``repo_words``."""
    who = Person("Dev", "dev@example.com")
    commit = Commit("a" * 40, ("b" * 40,), who, 0, 0, who, 0, 0, message)
    changes = [FileChange(p, s, None, a, d) for p, s, a, d in files]
    extractor = FactsExtractor(AreaRules(package_names=repo_words), lambda oid: None)
    facts = extractor.extract(commit, changes)
    return localise_analysis("en", RuleAnalyser().analyse(commit, facts))


def test_the_platform_a_project_is_for_narrows_nothing() -> None:
    files = [("csrc/xpu/attn/paged_decode.cpp", M, 12, 3)]
    title = "Fix bug: the paged-decode kernel outputs NaN with attention sinks"
    home = _run_in(frozenset({"vllm-xpu-kernels", "vllm_xpu_kernels"}), title, files)
    assert home.importance is Importance.HIGH, home.reasons
    other = _run_in(frozenset({"vllm", "vllm_core"}), title, files)
    assert other.importance is Importance.MEDIUM, other.reasons
    # A platform has several names: a project named for one is for all of them.
    tagged = "[NPU] Fix a crash in the model runner"
    runner = [("plugin/worker/model_runner.py", M, 9, 3)]
    ascend = _run_in(frozenset({"vllm-ascend", "vllm_ascend"}), tagged, runner)
    assert ascend.importance is Importance.HIGH, ascend.reasons
    assert _run_in(frozenset({"vllm"}), tagged, runner).importance is Importance.MEDIUM


def test_a_module_that_becomes_a_package_keeps_its_import_path() -> None:
    files = [("pkg/prefix_cache.py", D, 0, 300), ("pkg/prefix_cache/__init__.py", A, 10, 0),
             ("pkg/prefix_cache/trie.py", A, 290, 0)]  # fmt: skip
    analysis = _run("Modularize the prefix cache", files)
    assert not any("deletes the public module" in r for r in analysis.reasons), analysis.reasons


def test_removal_words_do_not_raise_a_ci_change_and_autotest_is_tests() -> None:
    files = [
        ("autotest/interface/test_restful.py", M, 40, 200),
        (".github/workflows/daily.yml", M, 2, 9),
    ]
    analysis = _run("[ci] remove old models and refactor interface testcase", files)
    assert analysis.importance is Importance.LOW, analysis.reasons


def test_replacing_pickle_on_a_wire_is_a_security_fix() -> None:
    analysis = _run("fix(disagg): use JSON instead of pickle for P2P ZMQ requests",
                    [("pkg/disagg/p2p.py", M, 20, 12)])  # fmt: skip
    assert analysis.importance is Importance.HIGH, analysis.reasons


@pytest.mark.parametrize(
    "title",
    [
        "[Bugfix] Fix illegal memory access in paged attention on Blackwell",
        "[GFX1250] Fix wrong results in the decode kernel",
        "[310P] Fix accuracy of rotary embedding",
        "Fix NaN in fused MoE on A3",
    ],
)
def test_one_hardware_generation_caps_a_severe_fix_at_medium(title: str) -> None:
    analysis = _run(title, [("pkg/ops/attention.py", M, 12, 3)])
    assert analysis.importance is Importance.MEDIUM, analysis.reasons


def test_a_model_size_is_not_a_hardware_generation() -> None:
    analysis = _run("Fix NaN in Qwen3-30B-A3B routing", [("pkg/ops/moe.py", M, 12, 3)])
    assert analysis.importance is Importance.HIGH, analysis.reasons
