"""What the rules read in a commit: title tags, keywords and the patterns behind each verdict.

Data only, shared by the verdict (:mod:`repoherald.analysis.verdict.rules`), the
write-up (:mod:`repoherald.analysis.verdict.writeup`) and the LLM path, which caps
what a model may claim with the same file kinds.
"""

from __future__ import annotations

import re

from repoherald.models import ChangeType

SOURCE_KINDS = ("source", "build", "other")
"""File kinds whose lines count as code changes."""
LOW_KINDS = ("docs", "tests", "ci", "bench")
"""File kinds that cannot change what downstream code runs: such a commit stays low."""

# Tag (lower-case, spaces and dashes removed) -> change type.
TAG_TYPES: dict[str, ChangeType] = {}
for _type, _tags in {
    ChangeType.BUGFIX: "bugfix bug fix fixes hotfix bugfixes fixbug security",
    ChangeType.FEATURE: "feat feature features enhancement newfeature newmodel",
    ChangeType.PERFORMANCE: "perf performance optim optimization optimize speedup",
    ChangeType.REFACTOR: "refactor refactoring cleanup clean chore style deprecation lint",
    ChangeType.DOCS: "doc docs documentation readme typo typos spelling",
    ChangeType.TESTS: "test tests testing ut e2e unittest",
    ChangeType.CI_BUILD: "ci build ci/build cicd ci/cd release docker packaging infra",
    ChangeType.DEPENDENCIES: "deps dep dependencies dependency bump",
    ChangeType.REVERT: "revert",
}.items():
    for _tag in _tags.split():
        TAG_TYPES[_tag] = _type

PLATFORM_TAGS = {
    "rocm",
    "amd",
    "xpu",
    "tpu",
    "cpu",
    "hpu",
    "gaudi",
    "intel",
    "mac",
    "macos",
    "metal",
    "windows",
    "arm",
    "aarch64",
    "ppc",
    "s390x",
    "jetson",
    "neuron",
    "mlu",
    "musa",
    "npu",
    "ascend",
    "hardware",
}

KEYWORD_TYPES: list[tuple[re.Pattern[str], ChangeType]] = [
    (re.compile(r"^revert\b", re.I), ChangeType.REVERT),
    (
        re.compile(
            r"\b(fix(e[sd])?|bug|crash|segfault|hang|deadlock|leak|broken|workaround|"
            r"prevent|avoid|guard( against)?|guards|reject|correct(ly)?|restore[sd]?|"
            r"clamp(s|ed)?|tolerate[sd]?|missing|mismatch(es)?|(to )?work with|unbreak)\b",
            re.I,
        ),
        ChangeType.BUGFIX,
    ),
    (
        re.compile(
            r"\b(optimi[sz]e[sd]?|optimi[sz]ation|speed ?up|faster|perf(ormance)?|accelerat\w*|"
            r"reduce (latency|overhead|memory)|(re)?tun(e[sd]?|ing))\b",
            re.I,
        ),
        ChangeType.PERFORMANCE,
    ),
    (re.compile(r"\b(bump|upgrade|pin|unpin)\b", re.I), ChangeType.DEPENDENCIES),
    (
        re.compile(
            r"\b(refactor\w*|clean ?up|cleanups?|rename[sd]?|move[sd]?|simplif\w+|"
            r"restructure\w*|tidy|deprecat\w+|remove unused|dedup\w*)\b",
            re.I,
        ),
        ChangeType.REFACTOR,
    ),
    (re.compile(r"\b(docs?|documentation|readme|typo)\b", re.I), ChangeType.DOCS),
    (re.compile(r"\b(tests?|testcases?|unit ?tests?|ut)\b", re.I), ChangeType.TESTS),
    (re.compile(r"\b(ci|workflows?|dockerfile|build)\b", re.I), ChangeType.CI_BUILD),
    (
        re.compile(
            r"\b(add(s|ed)?|support(s|ed)?|introduce[sd]?|implement(s|ed)?|enable[sd]?|"
            r"new|allow(s|ed)?)\b",
            re.I,
        ),
        ChangeType.FEATURE,
    ),
]

# The leading verb of a plain imperative title ("Split X into Y", "Contain
# errors per commit") -> change type. Read before the keywords anywhere in the
# title, so "Move the bug tracker link" is a refactor, not a fix.
TITLE_VERBS: dict[str, ChangeType] = {}
for _type, _verbs in {
    ChangeType.BUGFIX: "fix fixes fixed correct corrects repair repairs resolve resolves prevent "
    "prevents guard guards restore restores contain contains unbreak handle handles tolerate "
    "preserve preserves stabilize stabilise stabilizes stabilises don't dont stop stops "
    "validate validates ensure ensures",
    ChangeType.FEATURE: "add adds introduce introduces support supports implement implements "
    "enable enables allow allows expose exposes provide provides print prints show shows "
    "display displays emit emits accept accepts offer offers",
    ChangeType.REFACTOR: "refactor refactors split splits move moves extract extracts rename "
    "renames inline inlines consolidate consolidates unify unifies simplify simplifies "
    "reorganize reorganise reorganizes restructure restructures tidy dedupe deduplicate "
    "remove removes delete deletes drop drops "
    "rewrite rewrites deprecate deprecates share shares trim trims",
    ChangeType.PERFORMANCE: "optimize optimise optimizes optimises speed accelerate accelerates "
    "tune tunes retune retunes "
    "parallelize parallelise vectorize vectorise fuse fuses memoize memoise precompute "
    "batch batches defer defers reduce reduces",
    ChangeType.DOCS: "document documents explain explains clarify clarifies docstring docstrings",
    ChangeType.TESTS: "test tests",
}.items():
    for _verb in _verbs.split():
        TITLE_VERBS[_verb] = _type

SCOPE_PREFIX = re.compile(r"^(?![a-z][a-z0-9+.-]*://)[\w./-]{1,40}:\s+")
"""An ``Area: `` prefix on a plain title (``Store: one transaction ...``): not the subject."""
DOCSTRING_WORDS = re.compile(r"\b(docstrings?|comments?)\b", re.I)
TYPO_WORDS = re.compile(
    r"\b(typos?|spelling|misspell\w*|docstrings?|comments?|duplicated words?|grammar)\b", re.I
)
"""A title about wording: docs, even when the words live in source files and it says "fix"."""
GENERIC_TAGS = frozenset({"chore", "misc", "build"})
"""Tags that say nothing of the change: a dependency change under them is a dependency change."""
VERSION_FILES = frozenset({"version.py", "_version.py", "version", "version.txt", "__version__.py"})
"""Files that hold only the project's own version."""
SUPPORT_MATRIX = re.compile(r"\b(support|compatibility|feature) (matri(x|ces)|tables?)\b", re.I)
"""Pages that tell users what works where: docs, whatever format they are kept in."""
DATA_SUFFIXES = (".json", ".csv", ".yaml", ".yml", ".toml", ".ini", ".cfg")
"""Config data shipped with code: tuned kernel configs count as code for performance."""
TEST_SCOPE = re.compile(r"\b(ut|uts|unit ?tests?|tests?|testcases?|ci)\b", re.I)
"""A title that places its failure in the tests or CI: "fix moe ut oom" broke no user."""
VALIDATION_ONLY = re.compile(
    r"(validate[sd]?|raise[sd]? (a |an )?(clear|clearer|better|helpful) error|"
    r"(improve|clarify) (the )?error messages?)\b",
    re.I,
)
"""A title whose subject is checking input: only input that failed anyway behaves differently."""
VALIDATION_LINES = 60
"""Source lines above which a "validate" commit is more than a check."""
RELEASE_TITLE = re.compile(
    r"\b(release|bump (the )?(package )?version|version bump|prepare v?\d)",
    re.I,
)
"""A release commit: the project's own version moves, no dependency does."""

KEYWORD_NEEDS: dict[ChangeType, tuple[str, ...]] = {
    ChangeType.DOCS: ("docs",),
    ChangeType.TESTS: ("tests", "bench"),
    ChangeType.CI_BUILD: ("ci", "build"),
    ChangeType.DEPENDENCIES: ("deps",),
}

SEVERITY = re.compile(
    r"\b(crash(es|ed|ing)?|segfaults?|segmentation fault|core dump(ed)?|hangs?|hanging|deadlocks?|"
    r"(memory )?leaks?|data loss|los(e|es|ing) data|corrupt(s|ed|ion)?|security|vulnerab\w*|"
    r"cve-\d{4}-\d+|race conditions?|wrong (results?|outputs?|answers?)|"
    r"incorrect (results?|outputs?)|accuracy(?!\s+(?:[A-Za-z]\w*\s+)?\d)|nan|oom|"
    r"out of memory|illegal memory access|"
    r"use-after-free|overflow|wrong (grad\w*|values?|logits|shapes?|dtypes?)|"
    r"invalid (launch|memory|argument)|illegal (address|instruction)|(lost|loss of) precision|"
    r"precision (loss|issue|bug)|fails? to (compile|launch|start|load)|"
    r"compil(e|ation) (error|failure)|"
    r"garbage|silent(ly)? (wrong|incorrect|corrupt\w*)|precision|correctness|numerical\w*|"
    r"non-?finite|inf/nan|nan/inf)\b",
    re.I,
)
SECURITY = re.compile(
    r"\b(security|vulnerab\w*|cve-\d{4}-\d+|(sql|command|code|shell|prompt|header|template|"
    r"path|xml|ldap|log) injection|xss|csrf|ssrf|pickle|unpickl\w*|"
    r"privilege|sandbox escape|rce)\b",
    re.I,
)
CVE = re.compile(r"\bCVE-\d{4}-\d{4,}\b", re.I)
BREAKING = re.compile(
    r"\b(breaking[- ]changes?|bc[- ]breaking|backwards?[- ]incompatible|incompatible change)\b"
    r"|^\s*\[?breaking\b",
    re.I,
)
"""A title that announces a break; the bare word ("fix a breaking test") does not."""
REMOVAL = re.compile(
    r"(^\s*|\band )(remove[sd]?|drop(s|ped)?|delete[sd]?|deprecate[sd]?)\b.*"
    r"\b(deprecated|support|feature|flags?|options?|env(ironment)? var\w*|arguments?|args?|"
    r"api|apis|parameters?|backend|models?)\b",
    re.I,
)
DEFAULT_CHANGE = re.compile(
    r"\b(by default|default (to|value|behaviou?r)|change (the )?default|"
    r"defaults? to|(enable|disable|turn on|turn off)\w* .*default|stop(s|ped)? defaulting|"
    r"default (on|off))\b|^default\b|"
    # "set X default", "restore Y as the default"
    r"\bset\w*\b[^.;]{0,40}\bdefault\b|\bas (the )?default\b",
    re.I,
)
FLAG_TOGGLE = re.compile(
    r"^\s*(enable[sd]?|disable[sd]?|turn(s|ed)? (on|off))\s+"
    r"`?(?P<flag>[A-Za-z0-9]+(_[A-Za-z0-9]+)+)`?",
    re.I,
)
"""A title that switches a named config field or flag: the behaviour users get changes."""
NEW_CAPABILITY = re.compile(
    r"\b(new model|add(s|ed)? (support for|new)|introduce[sd]?|"
    r"new (backend|kernel|model|subsystem|architecture))\b",
    re.I,
)
PERF_HINT = re.compile(
    r"\b(perf|performance|latency|throughput|speed|faster|optimi\w+|"
    r"memory|cache|kernel|overhead)\b",
    re.I,
)
DEAD_CODE = re.compile(
    r"\b(unused|dead|stale|orphan\w*|unreachable|redundant|duplicated?|shadowed|broken|obsolete)\b",
    re.I,
)
"""Removing code the title calls dead breaks nobody: no removal signal."""
DELETE_VERB = re.compile(r"^\s*(remove[sd]?|delete[sd]?|drop(s|ped)?)\b", re.I)
BODY_SEVERITY = re.compile(
    r"\b(crash(es|ed)?|segfaults?|OOMs?|out of memory|hangs?|deadlocks?|NaNs?|"
    r"wrong (results?|outputs?)|corrupt(s|ed|ion)?|illegal memory access|"
    r"rais(e|es|ed|ing)\s+`?\w*Error|\w+Error:|fails?\s+(at|to)\s+load)\b"
)
"""A failure a fix's description names; it counts only with a breadth word nearby."""
BODY_BREADTH = re.compile(
    r"\b(every|all (models|requests|users|jobs|runs)|any model|by default|a default|"
    r"default (path|run|config\w*|setting\w*)|across (the|all)|at (model )?load)\b",
    re.I,
)
TEST_DEP_MANIFEST = re.compile(r"(test|dev|lint|doc|ci|bench)", re.I)


def norm_tag(tag: str) -> str:
    """A title tag as :data:`TAG_TYPES` spells it: lower case, no spaces, dashes or underscores."""
    return re.sub(r"[\s_-]+", "", tag.lower())
