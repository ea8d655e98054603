"""What the rules know about a commit, as labelled lines for the model's user message.

These lines are computed by our own code from git, so they sit outside the
data block that holds strangers' text: reach (default path or opt-in,
narrowed to one model, platform or hardware generation), compatibility
(flags, environment variables, native operators, public API), host and
framework pin moves, dependency changes, and downstream hits. A model that
decides importance from the diff alone misses what took six labelling
rounds to learn; given these, it weighs them.
"""

from __future__ import annotations

from repoherald.analysis.facts import hostpins
from repoherald.analysis.facts.commit import file_kind
from repoherald.analysis.verdict import reach
from repoherald.analysis.verdict.rules import home_platforms
from repoherald.analysis.verdict.signals import PLATFORM_TAGS
from repoherald.llm.job import LlmJob
from repoherald.models import Facts

_MAX = 30


def _names(items: list[str]) -> str:
    more = f", … {len(items) - _MAX} more" if len(items) > _MAX else ""
    return ", ".join(items[:_MAX]) + more


def _reach(facts: Facts, title: str) -> list[str]:
    code = [f.path for f in facts.files if file_kind(f.path) == "source"]
    out: list[str] = []
    if code:
        opt_in = [p for p in code if reach.is_opt_in(p)]
        peripheral = [p for p in code if reach.is_peripheral(p)]
        if len(peripheral) == len(code):
            out.append(
                "reach: every source file is in an opt-in, experimental or non-public"
                f" directory ({_names(peripheral)})"
            )
        elif opt_in:
            out.append(f"reach: default path, and opt-in code too ({_names(opt_in)})")
        else:
            out.append("reach: default path (no opt-in or experimental directory)")
    else:
        out.append("reach: no source file changed")
    platforms = frozenset(PLATFORM_TAGS) - home_platforms(facts.home_words)
    family = reach.new_model_family(facts)
    if family:
        out.append(f"new model family added whole: {family}")
    narrow = reach.narrow_scope(title, facts, platforms, by_model=not family)
    if narrow:
        out.append(f"narrowed to one model, platform or hardware generation: {narrow}")
    else:
        out.append("narrowing: none found (not confined to one model, platform or hardware)")
    return out


def _moved(old: str, new: str) -> str:
    return f" {old or '-'} -> {new or '-'}" if old or new else ""


def _compatibility(facts: Facts) -> list[str]:
    out: list[str] = []
    if facts.breaking_marker:
        out.append("breaking-change marker in the message (feat!: or BREAKING CHANGE:)")
    if facts.flag_changes:
        flags = [
            f"{c.flag} {c.change}"
            + (f" {c.old or '-'} -> {c.new or '-'}" if c.old or c.new else "")
            for c in facts.flag_changes
        ]
        out.append(f"command-line flags: {_names(flags)}")
    if facts.env_removed:
        out.append(f"environment variables no longer read: {_names(list(facts.env_removed))}")
    if facts.env_redefaulted:
        moved = [f"{name} {old} -> {new}" for name, old, new in facts.env_redefaulted]
        out.append(f"environment variable defaults changed: {_names(moved)}")
    if facts.op_changes:
        ops = [f"{o.change} {o.name} ({o.path})" for o in facts.op_changes]
        out.append(f"native operator schemas: {_names(ops)}")
    if facts.api_changes:
        api = [f"{a.change} {a.name} ({a.path})" for a in facts.api_changes]
        out.append(f"public Python API: {_names(api)}")
    return out


def _pins(facts: Facts) -> list[str]:
    out: list[str] = []
    for b in facts.host_bumps:
        out.append(f"host framework pin moves: {b.name} {b.old} -> {b.new} ({b.path})")
    for d in hostpins.framework_pins(facts.dependency_changes):
        out.append(f"exact framework pin moves: {d.name} {d.old or '-'} -> {d.new or '-'}")
    move = reach.host_pin_move(facts)
    pin_file = reach.host_pin(facts)
    if move:
        out.append(f"host pin file moves: {move[0]} {move[1]} -> {move[2]} ({move[3]})")
    elif pin_file:
        out.append(f"host pin file changed: {pin_file}")
    if facts.dependency_changes:
        deps = [f"{d.name} {d.old or '-'} -> {d.new or '-'}" for d in facts.dependency_changes]
        out.append(f"dependency changes: {_names(deps)}")
    if facts.version_only:
        out.append("version-only: every changed line outside docs is a version string")
    return out


def fact_lines(job: LlmJob) -> list[str]:
    """The rule facts of ``job``, one labelled line each, in a stable order."""
    facts, rules = job.facts, job.rules
    kinds = ", ".join(f"{k} {n}" for k, n in facts.kinds.items())
    lines = [
        f"files changed: {facts.files_changed} (+{facts.added}/-{facts.deleted} lines)",
        f"areas: {', '.join(facts.areas) if facts.areas else '(none)'}",
        f"file kinds: {kinds or '(none)'}",
        f"rule verdict: type {rules.change_type.value}, importance {rules.importance.value}"
        f" ({'; '.join(str(r) for r in rules.reasons)})",
    ]
    if facts.pr_number:
        lines.append(f"pull request: #{facts.pr_number}")
    if facts.is_revert:
        lines.append("revert: yes")
    lines += _reach(facts, job.commit.title)
    lines += _compatibility(facts)
    lines += _pins(facts)
    if job.downstream:
        lines.append(f"downstream hits: {_names(list(job.downstream))}")
    return lines
