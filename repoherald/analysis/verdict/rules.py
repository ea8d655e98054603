"""The rule analyser: change type, importance and a factual write-up.

It always runs first, offline, and must be good enough on its own: the
rubric is ``shared/IMPORTANCE.md`` (what a downstream maintainer should read
today). Every decision records the reason that produced it, as a
language-neutral message (a ``rule.*`` catalogue key and its arguments), so
one analysis serves every report language and the store keys it without one.

Bump ``RULES_VERSION`` whenever the output for the same input changes: the
store keys cached analyses by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from repoherald.analysis.facts import deps, hostpins
from repoherald.analysis.facts.commit import file_kind, parse_title
from repoherald.analysis.facts.hostpins import DEV_SECTION
from repoherald.analysis.verdict import reach, writeup
from repoherald.analysis.verdict.signals import (
    BODY_BREADTH,
    BODY_SEVERITY,
    BREAKING,
    CVE,
    DATA_SUFFIXES,
    DEAD_CODE,
    DEFAULT_CHANGE,
    DELETE_VERB,
    DOCSTRING_WORDS,
    FLAG_TOGGLE,
    GENERIC_TAGS,
    KEYWORD_NEEDS,
    KEYWORD_TYPES,
    LOW_KINDS,
    NEW_CAPABILITY,
    PLATFORM_TAGS,
    RELEASE_TITLE,
    REMOVAL,
    SCOPE_PREFIX,
    SECURITY,
    SEVERITY,
    SOURCE_KINDS,
    SUPPORT_MATRIX,
    TAG_TYPES,
    TEST_DEP_MANIFEST,
    TEST_SCOPE,
    TITLE_VERBS,
    TYPO_WORDS,
    VALIDATION_LINES,
    VALIDATION_ONLY,
    VERSION_FILES,
    norm_tag,
)
from repoherald.analysis.verdict.writeup import kinds_text, names, rule
from repoherald.i18n import type_text
from repoherald.models import (
    Analysis,
    ApiChange,
    ChangeType,
    Commit,
    Facts,
    FileStatus,
    Importance,
    Text,
)

RULES_VERSION = "9"
"""2: reasons and write-up stored as messages (codes and arguments), not prose.
3: reach, public surface, host pins and severity scope (issue 11).
6: the leading verb of a plain title decides the type before keywords anywhere in it;
   "breaking" counts only as an announcement, not as a word.
7: host framework pins in manifests and CI/build files; release, lock-only and dev-extra
   manifest changes are low; typo titles are docs; wider failure words for fixes."""

_ONLY_KINDS: tuple[tuple[tuple[str, ...], ChangeType], ...] = (
    (("docs",), ChangeType.DOCS),
    (("tests",), ChangeType.TESTS),
    (("tests", "bench"), ChangeType.TESTS),
    (("ci",), ChangeType.CI_BUILD),
    (("ci", "build"), ChangeType.CI_BUILD),
    (("deps",), ChangeType.DEPENDENCIES),
)


@dataclass
class Verdict:
    """Type and importance, with the reasons that produced them, in order."""

    change_type: ChangeType
    type_reason: Text
    importance: Importance
    reasons: list[Text]


def classify_type(title: str, facts: Facts) -> tuple[ChangeType, Text]:
    """The change type and the reason, in priority order of the evidence."""
    if facts.is_revert:
        return ChangeType.REVERT, rule("t_revert")
    host = reach.host_pin(facts)
    if host:
        return ChangeType.DEPENDENCIES, rule("t_host_pin", name=host)
    if facts.host_bumps:
        return ChangeType.DEPENDENCIES, rule("t_host_bump", name=facts.host_bumps[0].name)
    if facts.version_only:
        return ChangeType.OTHER, rule("t_release")
    for kinds, ctype in _ONLY_KINDS:
        if facts.only(*kinds):
            if ctype is ChangeType.DEPENDENCIES and _release_only(title, facts):
                return ChangeType.OTHER, rule("t_release")
            return ctype, rule("t_only", kinds=kinds_text(kinds))
    if _release_only(title, facts) and all(_version_file(f.path) for f in facts.files):
        return ChangeType.OTHER, rule("t_release")
    submodules = [f.path for f in facts.files if f.is_submodule]
    if submodules and len(submodules) == len(facts.files):
        return ChangeType.DEPENDENCIES, rule("t_submodule", names=names(submodules))
    scoped = _scope_type(facts)
    if scoped is not None:
        return scoped
    tagged_all = [(tag, _tag_type(tag)) for tag in facts.tags]
    typed = [(tag, ctype) for tag, ctype in tagged_all if ctype is not None]
    for i, (tag, ctype) in enumerate(typed):
        if norm_tag(tag) in GENERIC_TAGS and runtime_dependencies(facts):
            return ChangeType.DEPENDENCIES, rule("t_deps")
        needs = KEYWORD_NEEDS.get(ctype)
        later = i + 1 < len(typed)
        if needs and ctype is not ChangeType.DEPENDENCIES and later and _mostly_code(facts, needs):
            continue  # "[CI] [feat] mega-moe stage2": the kernels are the change
        return ctype, rule("t_tag", tag=tag)
    labelled = _label_type(facts)
    if labelled is not None:
        return labelled
    text = parse_title(title).text
    matrix = SUPPORT_MATRIX.search(text)
    if matrix and not facts.kinds.get("source"):
        return ChangeType.DOCS, rule("t_keyword", word=matrix.group(0).lower())
    typo = TYPO_WORDS.search(text)
    if typo and not facts.api_changes and not facts.dependency_changes:
        return ChangeType.DOCS, rule("t_typo", word=typo.group(0).lower())
    if DELETE_VERB.search(text) and facts.deleted >= 3 * max(facts.added, 1):
        return ChangeType.REFACTOR, rule("t_deletes", word=text.split()[0].lower())
    if facts.dependency_changes and re.search(r"\b(bump|upgrade|update|pin)\b", text, re.I):
        return ChangeType.DEPENDENCIES, rule("t_deps")
    verb = _verb_type(text, facts)
    if verb is not None:
        return verb
    keyword = _keyword_type(text, facts)
    if keyword is not None:
        return keyword
    if facts.only(*LOW_KINDS):
        ctype = ChangeType.TESTS if facts.kinds.get("tests") else ChangeType.CI_BUILD
        return ctype, rule("t_only", kinds=kinds_text(facts.kinds))
    new_source = sum(1 for f in facts.files if _new_source(f.status, f.path))
    if new_source:
        return ChangeType.FEATURE, rule("t_new_files", n=new_source)
    return ChangeType.OTHER, rule("t_none")


_SAME_PLATFORM = (
    frozenset({"ascend", "npu"}),
    frozenset({"gaudi", "hpu"}),
    frozenset({"metal", "mps", "mac", "macos"}),
    frozenset({"rocm", "amd", "hip"}),
    frozenset({"xpu", "intel"}),
    frozenset({"neuron", "inferentia", "trainium"}),
)
"""Names of one platform: a project named for one is for all of them."""


def home_platforms(words: tuple[str, ...]) -> set[str]:
    """The platform words a project's own name stands for (``vllm-ascend``: ascend, npu)."""
    home = set(words)
    for group in _SAME_PLATFORM:
        if home & group:
            home |= group
    return home


def _mostly_code(facts: Facts, needs: tuple[str, ...]) -> bool:
    """Most of the change is code, not files of the kinds a low-kind tag names."""
    return _share(facts, needs) < 0.5 and _share(facts, ("source", "build")) >= 0.5


def _tag_type(tag: str) -> ChangeType | None:
    tagged = TAG_TYPES.get(norm_tag(tag)) or TAG_TYPES.get(tag)
    if tagged is None and norm_tag(tag).startswith("fix"):
        tagged = ChangeType.BUGFIX
    return tagged


def _version_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name in VERSION_FILES or deps.is_manifest(path)


_SCOPE_TYPES = {
    "test": ChangeType.TESTS,
    "tests": ChangeType.TESTS,
    "ci": ChangeType.CI_BUILD,
    "docs": ChangeType.DOCS,
    "doc": ChangeType.DOCS,
}


def _scope_type(facts: Facts) -> tuple[ChangeType, Text] | None:
    """``fix(test): …``: a Conventional scope naming tests, CI or docs, which the files back up."""
    ctype = _SCOPE_TYPES.get((facts.conventional_scope or "").lower())
    if ctype is None:
        return None
    needs = KEYWORD_NEEDS[ctype]
    if _share(facts, needs) < 0.5:
        return None
    return ctype, rule("t_scope", scope=facts.conventional_scope or "")


def runtime_dependencies(facts: Facts) -> list[str]:
    """Dependencies users install whose spec changed: not test/dev manifests or extras."""
    return [
        d.name
        for d in facts.dependency_changes
        if not TEST_DEP_MANIFEST.search(d.manifest) and not DEV_SECTION.search(d.name)
    ]


def _release_only(title: str, facts: Facts) -> bool:
    """The project's own version moves in its manifest, and no dependency does."""
    mentions_deps = re.search(r"\b(dependenc\w*|requirements?|deps|pins?)\b", title, re.I)
    return bool(RELEASE_TITLE.search(title)) and not facts.dependency_changes and not mentions_deps


_LABEL_TYPES = (
    (re.compile(r"^(?:kind/|type: ?)?(?:bug|bugfix|regression)$", re.I), ChangeType.BUGFIX),
    (re.compile(r"^(?:kind/|type: ?)?(?:performance|perf)$", re.I), ChangeType.PERFORMANCE),
)
_LABEL_BREAKING = re.compile(
    r"^(?:kind/|type: ?)?(?:breaking|breaking[- ]change|deprecation|api[- ]change)$", re.I
)


def _pr_labels(facts: Facts) -> tuple[str, ...]:
    return facts.pull_request.labels if facts.pull_request else ()


def _pr_body(facts: Facts) -> str:
    """The pull request's description: the author's words when the commit message has none."""
    return facts.pull_request.body if facts.pull_request else ""


def _label_type(facts: Facts) -> tuple[ChangeType, Text] | None:
    """A maintainer's label on the pull request (``bug``, ``performance``) is evidence of type."""
    for label in _pr_labels(facts):
        for pattern, ctype in _LABEL_TYPES:
            if pattern.match(label.strip()):
                return ctype, rule("t_label", label=label)
    return None


def _verb_type(text: str, facts: Facts) -> tuple[ChangeType, Text] | None:
    """The leading verb of a plain title, after an ``Area:`` prefix, when the files agree.

    Titles without tags ("Split the analyser's _ask into three steps") say
    what the commit does in their first word. The same evidence rule as for
    keywords applies: a docs, tests or CI verb needs most of the change in
    such files (a docstring is docs wherever it lives); a code verb needs code.
    """
    subject = SCOPE_PREFIX.sub("", text, count=1)
    m = re.match(r"[A-Za-z']+", subject)
    if m is None:
        return None
    word = m.group(0).lower()
    ctype = TITLE_VERBS.get(word)
    if ctype is None or (ctype is not ChangeType.BUGFIX and _fix_words(subject)):
        return None  # "Add missing attribute", "Split X to fix a deadlock": a fix
    needs = KEYWORD_NEEDS.get(ctype)
    docstrings = ctype is ChangeType.DOCS and DOCSTRING_WORDS.search(subject)
    if needs and not docstrings and _share(facts, needs) < 0.5:
        return None
    if not needs and not (facts.kinds.get("source") or facts.kinds.get("build")):
        return None
    return ctype, rule("t_verb", word=word)


def _has_code(facts: Facts) -> bool:
    return bool(facts.kinds.get("source") or facts.kinds.get("build"))


def _tuned_data(ctype: ChangeType, facts: Facts) -> bool:
    """Tuned kernel configs (JSON, CSV) are what a performance change to them changes."""
    return ctype is ChangeType.PERFORMANCE and any(
        f.path.lower().endswith(DATA_SUFFIXES) and file_kind(f.path) == "other" for f in facts.files
    )


def _fix_words(text: str) -> bool:
    return any(p.search(text) for p, ctype in KEYWORD_TYPES if ctype is ChangeType.BUGFIX)


def _keyword_type(text: str, facts: Facts) -> tuple[ChangeType, Text] | None:
    """The first title keyword that the files back up.

    A word like "test" or "build" in the title only counts when the commit
    touches files of that kind; otherwise it is just a word. A dependency
    bump is real whenever a manifest changed; for the other kinds, most of
    the change must be in such files.
    """
    for pattern, ctype in KEYWORD_TYPES:
        hit = pattern.search(text)
        if not hit:
            continue
        needs = KEYWORD_NEEDS.get(ctype)
        if needs and ctype is ChangeType.DEPENDENCIES:
            if not any(facts.kinds.get(k) for k in needs):
                continue
        elif needs and _share(facts, needs) < 0.5:
            continue
        elif not needs and not (_has_code(facts) or _tuned_data(ctype, facts)):
            continue  # "support", "fix": a code word needs code in the diff to agree
        return ctype, rule("t_keyword", word=hit.group(0).lower())
    return None


def decide(commit: Commit, facts: Facts) -> Verdict:
    """Type and importance, each step recording why.

    The type sets a base level; severity, security, breaking changes and
    new capabilities can raise it to high, unless the change is narrow (one
    model family, one hardware generation or platform, opt-in code), which
    caps it at medium; a commit that only touches docs, tests, CI or
    benchmarks stays low whatever its words say. Size alone never raises.
    """
    ctype, type_reason = classify_type(commit.title, facts)
    host = reach.host_pin(facts) if ctype is ChangeType.DEPENDENCIES else None
    if host:
        move = reach.host_pin_move(facts)
        reason = (
            rule("r_host_bump", name=move[0], old=move[1], new=move[2], path=move[3])
            if move
            else rule("r_host_pin", name=host)
        )
        return Verdict(ctype, type_reason, Importance.HIGH, [reason])
    if facts.host_bumps and not facts.is_revert:
        bumps = [
            rule("r_host_bump", name=b.name, old=b.old, new=b.new, path=b.path)
            for b in facts.host_bumps[:3]
        ]
        return Verdict(ctype, type_reason, Importance.HIGH, bumps)
    frameworks = hostpins.framework_pins(facts.dependency_changes)
    if frameworks and not facts.is_revert and ctype not in _QUIET_TYPES:
        pins = [
            rule("r_framework_pin", name=c.name, old=c.old or "", new=c.new or "", path=c.manifest)
            for c in frameworks[:2]
        ]
        return Verdict(ctype, type_reason, Importance.HIGH, pins)
    importance, reasons = _base_level(ctype, commit.title, facts)
    low_only = facts.only(*LOW_KINDS)
    removed, moved = reach.public_removals(facts)
    if DEAD_CODE.search(commit.title) and ctype is ChangeType.REFACTOR:
        # Dead code in an opt-in path had no users to break.
        removed = [a for a in removed if not reach.is_peripheral(a.path)]
    if moved:
        reasons.append(rule("r_moved", names=names(moved)))
    if removed and importance is Importance.LOW and not low_only:
        importance = Importance.MEDIUM
        reasons.append(rule("r_api_medium", names=names(a.name for a in removed)))
    raises = _raising_signals(ctype, commit, facts, removed)
    # The platform a project is for (vllm-xpu-kernels: xpu) narrows none of its changes.
    platforms = frozenset(PLATFORM_TAGS) - home_platforms(facts.home_words)
    family = _new_family(ctype, facts)
    if family:
        raises.append(rule("r_new_model", path=family))
    narrow = reach.narrow_scope(commit.title, facts, platforms, by_model=not family)
    if raises and low_only:
        reasons.append(rule("r_low_only_wins", kinds=kinds_text(facts.kinds)))
        importance = Importance.LOW
    elif raises and narrow:
        importance = Importance.MEDIUM
        reasons.extend([*raises, rule("r_narrow", scope=narrow)])
    elif raises:
        importance = Importance.HIGH
        reasons.extend(raises)
    elif low_only and importance is not Importance.LOW:
        importance = Importance.LOW
        reasons.append(rule("r_low_only", kinds=kinds_text(facts.kinds)))
    return Verdict(ctype, type_reason, importance, reasons)


def _base_level(ctype: ChangeType, title: str, facts: Facts) -> tuple[Importance, list[Text]]:
    """The importance the change type alone deserves, and why."""
    if ctype in (ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD):
        reasons = [rule("r_low_type", type=type_text(ctype))]
        if ctype is ChangeType.CI_BUILD and facts.kinds.get("build"):
            return Importance.MEDIUM, [*reasons, rule("r_build")]
        return Importance.LOW, reasons
    if ctype is ChangeType.DEPENDENCIES:
        return _dependency_level(title, facts)
    if ctype is ChangeType.REVERT:
        return _revert_level(title)
    release = ctype is ChangeType.OTHER and _release_only(title, facts)
    if facts.version_only or (release and all(_version_file(f.path) for f in facts.files)):
        return Importance.LOW, [rule("r_release")]
    if ctype in (ChangeType.REFACTOR, ChangeType.OTHER):
        lines = _source_lines(facts)
        if DEAD_CODE.search(title):
            return Importance.LOW, [rule("r_dead_code")]
        if lines >= 200 or facts.files_changed >= 10:
            return Importance.MEDIUM, [rule("r_large_refactor", lines=lines)]
        if ctype is ChangeType.OTHER and _core_source(facts):
            return Importance.MEDIUM, [
                rule("r_unclassified_code", names=names(_core_source(facts)))
            ]
        deletes_names = any(a.change == "removed" for a in facts.api_changes)
        if (
            DELETE_VERB.search(parse_title(title).text)
            and _core_source(facts)
            and not deletes_names
        ):
            # "Remove qwen3.5 from flatten_input": what the default path does changes.
            # Deleted definitions are judged by the API rules (private helpers are low).
            return Importance.MEDIUM, [rule("r_removes_core", names=names(_core_source(facts)))]
        return Importance.LOW, [rule("r_small", type=type_text(ctype))]
    code = [f.path for f in facts.files if file_kind(f.path) == "source"]
    if code and all(reach.is_non_public(p) for p in code):
        return Importance.LOW, [rule("r_tooling", names=names(code, limit=3))]
    subject = SCOPE_PREFIX.sub("", parse_title(title).text, count=1)
    if VALIDATION_ONLY.match(subject) and _source_lines(facts) <= VALIDATION_LINES:
        # "Validate max context length": only input that failed anyway is told so sooner.
        return Importance.LOW, [rule("r_validation")]
    return Importance.MEDIUM, [rule("r_code_change", type=type_text(ctype))]


def _core_source(facts: Facts) -> list[str]:
    """Changed source files of the default path (not opt-in, tooling or examples)."""
    return [
        f.path
        for f in facts.files
        if file_kind(f.path) == "source" and not reach.is_peripheral(f.path)
    ]


def _dependency_level(title: str, facts: Facts) -> tuple[Importance, list[Text]]:
    """Runtime dependencies matter to downstream; test and dev ones do not."""
    runtime = runtime_dependencies(facts)
    if runtime:
        return Importance.MEDIUM, [rule("r_runtime_deps", names=names(runtime))]
    submodules = [f.path for f in facts.files if f.is_submodule]
    if submodules:
        # A vendored dependency moved: what a build from source compiles changes.
        return Importance.MEDIUM, [rule("r_submodule", names=names(submodules))]
    runtime_manifests = [
        f.path
        for f in facts.files
        if file_kind(f.path) == "deps" and not TEST_DEP_MANIFEST.search(f.path)
    ]
    if runtime_manifests and not facts.dependency_changes:
        if all(deps.is_lockfile(p) for p in runtime_manifests):
            # A lock refreshed within unchanged declared ranges: what users
            # of the package install is decided by the ranges, not the lock.
            return Importance.LOW, [rule("r_lock_only", names=names(runtime_manifests))]
        if _release_only(title, facts) or (
            all(deps.is_declarative(p) for p in runtime_manifests)
            and not re.search(r"\b(bump|upgrade|update|pin|require)\w*", title, re.I)
        ):
            # The manifest parsed on both sides and no dependency moved: its
            # own metadata changed (the version of a release).
            return Importance.LOW, [rule("r_manifest_metadata", names=names(runtime_manifests))]
        # Versions could not be itemised (unknown format): judge by which manifest changed.
        return Importance.MEDIUM, [rule("r_runtime_manifest", names=names(runtime_manifests))]
    return Importance.LOW, [rule("r_dev_deps")]


def _revert_level(title: str) -> tuple[Importance, list[Text]]:
    """A revert is medium; reverting a feature or a severe fix is high."""
    inner = re.sub(r'^\s*Revert\s*:?\s*["“]?|["”]\s*$', "", title).strip()
    reasons = [rule("r_revert")]
    inner_tags = parse_title(inner).tags
    if (
        any(TAG_TYPES.get(norm_tag(t)) is ChangeType.FEATURE for t in inner_tags)
        or SEVERITY.search(inner)
        or NEW_CAPABILITY.search(inner)
    ):
        return Importance.HIGH, [*reasons, rule("r_revert_feature")]
    return Importance.MEDIUM, reasons


_NO_TITLE_SEVERITY = (ChangeType.FEATURE, ChangeType.PERFORMANCE, ChangeType.REFACTOR)
"""Types whose title names a failure without claiming to fix one: a refactor whose
title also says "fix" is typed a fix (see :func:`_verb_type`)."""


def _raising_signals(
    ctype: ChangeType, commit: Commit, facts: Facts, removed: list[ApiChange]
) -> list[Text]:
    """The signals that make a commit high, each with its reason, in a fixed order."""
    title = commit.title
    raises: list[Text] = []
    sev = SEVERITY.search(title)
    if sev and TEST_SCOPE.search(parse_title(title).text):
        sev = None  # "fix moe ut oom": the failure was in the tests
    if sev and ctype not in _NO_TITLE_SEVERITY:
        raises.append(rule("r_severity", word=sev.group(0).lower()))
    elif ctype is ChangeType.BUGFIX:
        raises.extend(_body_severity(commit.body))
    # Security raises from the title, or from a CVE id anywhere: prose in a
    # long description mentions "security" far too casually to count.
    sec = SECURITY.search(title) or CVE.search(commit.message)
    if sec and not sev and ctype in (ChangeType.BUGFIX, ChangeType.OTHER):
        raises.append(rule("r_security", word=sec.group(0).lower()))
    if facts.breaking_marker or BREAKING.search(title) or "breaking" in map(norm_tag, facts.tags):
        raises.append(rule("r_breaking"))
    else:
        breaking = [lb for lb in _pr_labels(facts) if _LABEL_BREAKING.match(lb.strip())]
        if breaking:
            raises.append(rule("r_label_breaking", label=breaking[0]))
    text = parse_title(title).text
    low_type = ctype in (ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD)
    if REMOVAL.search(text) and not DEAD_CODE.search(text) and not low_type:
        raises.append(rule("r_removal"))
    gone = list(dict.fromkeys(a.name for a in removed if a.change == "removed"))
    if len(gone) >= 3:
        raises.append(rule("r_api", n=len(gone), names=names(gone)))
    dropped = reach.dropped_parameter(removed)
    if dropped is not None:
        param, functions = dropped
        raises.append(
            rule("r_param_removed", param=param, n=len(functions), names=names(functions))
        )
    packages = reach.removed_packages(facts)
    if packages:
        raises.append(rule("r_package_removed", names=names(packages)))
    if facts.env_removed and ctype not in (ChangeType.DOCS, ChangeType.TESTS):
        raises.append(rule("r_env_removed", names=names(facts.env_removed)))
    for name, old, new in facts.env_redefaulted[:2]:
        if ctype not in (ChangeType.DOCS, ChangeType.TESTS):
            raises.append(rule("r_env_default", name=name, old=old, new=new))
    flags = [c for c in facts.flag_changes if not reach.is_peripheral(c.path)]
    gone_flags = [c.flag for c in flags if c.change != "default"]
    if gone_flags and ctype not in _QUIET_TYPES:
        raises.append(rule("r_flag_removed", names=names(gone_flags)))
    for c in [c for c in flags if c.change == "default"][:2]:
        if ctype not in _QUIET_TYPES:
            raises.append(rule("r_flag_default", name=c.flag, old=c.old, new=c.new))
    ops = reach.public_ops(facts)
    gone_ops = [o.name for o in ops if o.change == "removed"]
    if gone_ops and ctype not in (ChangeType.DOCS, ChangeType.TESTS):
        raises.append(rule("r_op_removed", names=names(gone_ops)))
    resigned = [o.name for o in ops if o.change == "signature"]
    if resigned and ctype not in (ChangeType.DOCS, ChangeType.TESTS):
        raises.append(rule("r_op_signature", names=names(resigned)))
    modules = reach.removed_modules(facts)
    if modules and not packages and not DEAD_CODE.search(title):
        raises.append(rule("r_module_removed", names=names(modules)))
    if DEFAULT_CHANGE.search(text) and ctype not in (ChangeType.DOCS, ChangeType.TESTS):
        raises.append(rule("r_default"))
    toggle = FLAG_TOGGLE.search(text)
    if toggle and ctype not in (ChangeType.DOCS, ChangeType.TESTS):
        raises.append(rule("r_toggle", flag=toggle.group("flag")))
    raises.extend(_size_signals(ctype, title, facts))
    return raises


def _new_family(ctype: ChangeType, facts: Facts) -> str | None:
    """The module of a model architecture added whole, for a change that is about code."""
    if ctype in (*_QUIET_TYPES, ChangeType.REFACTOR, ChangeType.DEPENDENCIES, ChangeType.REVERT):
        return None
    return reach.new_model_family(facts)


_QUIET_TYPES = (ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD)


_SENTENCE_END = re.compile(r"(?<![ei]\.[eg]\.)(?<!etc\.)(?<=[.!?。！？])\s+|\n\s*\n")
"""Where a sentence of a description ends (not after "e.g.", "i.e." or "etc.")."""


def _body_severity(body: str) -> list[Text]:
    """A fix whose description names a failure and how broadly it struck.

    "every MoE job raised TypeError", "a default serve OOMs": the failure
    word alone is too common in descriptions; with a breadth word in the
    same sentence it is what a reader would call severe. The same paragraph
    was too wide: "every" in one sentence and "error" three sentences later
    raised commits whose failure struck one path.
    """
    for sentence in _SENTENCE_END.split(body):
        failure = BODY_SEVERITY.search(sentence)
        breadth = BODY_BREADTH.search(sentence)
        if failure and breadth:
            return [rule("r_body_severity", word=failure.group(0), scope=breadth.group(0))]
    return []


def _size_signals(ctype: ChangeType, title: str, facts: Facts) -> list[Text]:
    """A new capability the title announces, backed by new importable code.

    Size alone never raises: thousands of lines of a new kernel or tool
    are judged by who runs them, not by their count.
    """
    new_source = [
        f for f in facts.files if _new_source(f.status, f.path) and not reach.is_peripheral(f.path)
    ]
    new_lines = sum(f.added for f in new_source)
    if ctype is ChangeType.FEATURE and NEW_CAPABILITY.search(title) and new_lines >= 200:
        return [rule("r_new_component", n=len(new_source), lines=new_lines)]
    return []


def _new_source(status: FileStatus, path: str) -> bool:
    return status is FileStatus.ADDED and file_kind(path) == "source"


def _source_lines(facts: Facts) -> int:
    return sum(f.added + f.deleted for f in facts.files if file_kind(f.path) in SOURCE_KINDS)


def _share(facts: Facts, kinds: tuple[str, ...]) -> float:
    """Fraction of the commit's changed lines (files, when no lines) in files of ``kinds``."""
    total = sum(f.added + f.deleted for f in facts.files)
    if total == 0:
        hits = sum(1 for f in facts.files if file_kind(f.path) in kinds)
        return hits / len(facts.files) if facts.files else 0.0
    part = sum(f.added + f.deleted for f in facts.files if file_kind(f.path) in kinds)
    return part / total


class RuleAnalyser:
    """Classifies commits from their facts and writes them up. Stateless.

    Its output is language-neutral, so one instance (and one cached
    analysis per commit) serves every report language.
    """

    name = f"rules/{RULES_VERSION}"

    def analyse(self, commit: Commit, facts: Facts) -> Analysis:
        """The full rule analysis of one commit."""
        verdict = decide(commit, facts)
        ctype = verdict.change_type
        risks = writeup.risks(ctype, facts)
        return Analysis(
            analyser=self.name,
            change_type=ctype,
            importance=verdict.importance,
            reasons=(rule("r_type", reason=verdict.type_reason), *verdict.reasons),
            summary=writeup.summary(commit, ctype, facts),
            impact=tuple(writeup.impact(facts)),
            insights=writeup.insights(ctype, commit, facts),
            risks=tuple(risks),
            recommendations=tuple(writeup.recommendations(facts)),
            description=writeup.describe(commit.body or _pr_body(facts), commit.title),
        )
