"""The rule analyser: change type, importance and a factual write-up.

It always runs first, offline, and must be good enough on its own: the
rubric is ``shared/IMPORTANCE.md`` (what a downstream maintainer should read
today). Every decision records the reason that produced it, and every
sentence is assembled from facts, so nothing here can be invented.

Bump ``RULES_VERSION`` whenever the output for the same input changes: the
store keys cached analyses by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from repoherald.analysis.facts import file_kind, parse_title
from repoherald.i18n import type_label
from repoherald.models import Analysis, ChangeType, Commit, Facts, FileStatus, Importance, Risk

RULES_VERSION = "1"

# Tag (lower-case, spaces and dashes removed) -> change type.
_TAG_TYPES: dict[str, ChangeType] = {}
for _type, _tags in {
    ChangeType.BUGFIX: "bugfix bug fix fixes hotfix bugfixes fixbug security",
    ChangeType.FEATURE: "feat feature features enhancement newfeature newmodel",
    ChangeType.PERFORMANCE: "perf performance optim optimization optimize speedup",
    ChangeType.REFACTOR: "refactor refactoring cleanup clean chore style deprecation lint",
    ChangeType.DOCS: "doc docs documentation readme",
    ChangeType.TESTS: "test tests testing ut e2e unittest",
    ChangeType.CI_BUILD: "ci build ci/build cicd ci/cd release docker packaging infra",
    ChangeType.DEPENDENCIES: "deps dep dependencies dependency bump",
    ChangeType.REVERT: "revert",
}.items():
    for _tag in _tags.split():
        _TAG_TYPES[_tag] = _type

_PLATFORM_TAGS = {
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

_KEYWORD_TYPES: list[tuple[re.Pattern[str], ChangeType]] = [
    (re.compile(r"^revert\b", re.I), ChangeType.REVERT),
    (
        re.compile(
            r"\b(fix(e[sd])?|bug|crash|segfault|hang|deadlock|leak|broken|workaround|"
            r"prevent|avoid|guard against|reject|correct(ly)?)\b",
            re.I,
        ),
        ChangeType.BUGFIX,
    ),
    (
        re.compile(
            r"\b(optimi[sz]e[sd]?|optimi[sz]ation|speed ?up|faster|perf(ormance)?|accelerat\w*|"
            r"reduce (latency|overhead|memory))\b",
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

_KEYWORD_NEEDS: dict[ChangeType, tuple[str, ...]] = {
    ChangeType.DOCS: ("docs",),
    ChangeType.TESTS: ("tests", "bench"),
    ChangeType.CI_BUILD: ("ci", "build"),
    ChangeType.DEPENDENCIES: ("deps",),
}

_SEVERITY = re.compile(
    r"\b(crash(es|ed|ing)?|segfaults?|segmentation fault|core dump(ed)?|hangs?|hanging|deadlocks?|"
    r"(memory )?leaks?|data loss|los(e|es|ing) data|corrupt(s|ed|ion)?|security|vulnerab\w*|"
    r"cve-\d{4}-\d+|regressions?|race conditions?|wrong (results?|outputs?|answers?)|"
    r"incorrect (results?|outputs?)|accuracy|nan|oom|out of memory|illegal memory access|"
    r"use-after-free|overflow)\b",
    re.I,
)
_SECURITY = re.compile(
    r"\b(security|vulnerab\w*|cve-\d{4}-\d+|injection|xss|csrf|ssrf|"
    r"privilege|sandbox escape|rce)\b",
    re.I,
)
_CVE = re.compile(r"\bCVE-\d{4}-\d{4,}\b", re.I)
_BREAKING = re.compile(r"\b(breaking|backward[- ]incompatible|incompatible change)\b", re.I)
_REMOVAL = re.compile(
    r"^\s*(remove[sd]?|drop(s|ped)?|delete[sd]?|deprecate[sd]?)\b.*\b(deprecated|support|feature|"
    r"flags?|options?|env(ironment)? var\w*|arguments?|args?|api|apis|parameters?|"
    r"backend|models?)\b",
    re.I,
)
_DEFAULT = re.compile(
    r"\b(by default|default (to|value|behaviou?r)|change (the )?default|"
    r"defaults? to|(enable|disable|turn on|turn off)\w* .*default)\b",
    re.I,
)
_NEW_CAPABILITY = re.compile(
    r"\b(new model|add(s|ed)? (support for|new)|introduce[sd]?|"
    r"new (backend|kernel|model|subsystem|architecture))\b",
    re.I,
)
_PERF_HINT = re.compile(
    r"\b(perf|performance|latency|throughput|speed|faster|optimi\w+|"
    r"memory|cache|kernel|overhead)\b",
    re.I,
)
_TEST_DEP_MANIFEST = re.compile(r"(test|dev|lint|doc|ci|bench)", re.I)

_SOURCE_KINDS = ("source", "build", "other")
_LOW_KINDS = ("docs", "tests", "ci", "bench")


def _norm_tag(tag: str) -> str:
    return re.sub(r"[\s_-]+", "", tag.lower())


@dataclass
class _Decision:
    change_type: ChangeType
    type_reason: str
    importance: Importance
    reasons: list[str]


class RuleAnalyser:
    """Classifies commits from their facts. Stateless apart from the language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.name = f"rules/{RULES_VERSION}/{lang}"
        self._m = _MESSAGES[lang]

    # -- classification ---------------------------------------------------

    def classify_type(self, title: str, facts: Facts) -> tuple[ChangeType, str]:
        """The change type and the reason, in priority order of the evidence."""
        m = self._m
        if facts.is_revert:
            return ChangeType.REVERT, m["t_revert"]
        for kinds, ctype in (
            (("docs",), ChangeType.DOCS),
            (("tests",), ChangeType.TESTS),
            (("tests", "bench"), ChangeType.TESTS),
            (("ci",), ChangeType.CI_BUILD),
            (("ci", "build"), ChangeType.CI_BUILD),
            (("deps",), ChangeType.DEPENDENCIES),
        ):
            if facts.only(*kinds):
                return ctype, m["t_only"].format(kinds=self._kinds_text(kinds))
        for tag in facts.tags:
            tagged = _TAG_TYPES.get(_norm_tag(tag)) or _TAG_TYPES.get(tag)
            if tagged is not None:
                return tagged, m["t_tag"].format(tag=tag)
        text = parse_title(title).text
        if facts.dependency_changes and re.search(r"\b(bump|upgrade|update|pin)\b", text, re.I):
            return ChangeType.DEPENDENCIES, m["t_deps"]
        for pattern, ctype in _KEYWORD_TYPES:
            hit = pattern.search(text)
            if not hit:
                continue
            # A word like "test" or "build" in the title only counts when the
            # commit touches files of that kind; otherwise it is just a word.
            # A dependency bump is real whenever a manifest changed; for the
            # other kinds, most of the change must be in such files.
            needs = _KEYWORD_NEEDS.get(ctype)
            if needs and ctype is ChangeType.DEPENDENCIES:
                if not any(facts.kinds.get(k) for k in needs):
                    continue
            elif needs and _share(facts, needs) < 0.5:
                continue
            return ctype, m["t_keyword"].format(word=hit.group(0).lower())
        if facts.only("docs", "tests", "ci", "bench"):
            return ChangeType.TESTS if facts.kinds.get("tests") else ChangeType.CI_BUILD, m[
                "t_only"
            ].format(kinds=self._kinds_text(tuple(facts.kinds)))
        new_source = sum(
            1 for f in facts.files if f.status is FileStatus.ADDED and file_kind(f.path) == "source"
        )
        if new_source:
            return ChangeType.FEATURE, m["t_new_files"].format(n=new_source)
        return ChangeType.OTHER, m["t_none"]

    def _kinds_text(self, kinds: Iterable[str]) -> str:
        return self._m["sep"].join(self._m["kind_" + k] for k in kinds)

    def decide(self, commit: Commit, facts: Facts) -> _Decision:
        """Type and importance, each step recording why."""
        m = self._m
        ctype, type_reason = self.classify_type(commit.title, facts)
        reasons: list[str] = []
        title = commit.title
        source_lines = sum(
            f.added + f.deleted for f in facts.files if file_kind(f.path) in _SOURCE_KINDS
        )
        low_only = facts.only(*_LOW_KINDS)

        # Base level from the type.
        if ctype in (ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD):
            imp = Importance.LOW
            reasons.append(m["r_low_type"].format(type=type_label(self.lang, ctype)))
            if ctype is ChangeType.CI_BUILD and facts.kinds.get("build"):
                imp = Importance.MEDIUM
                reasons.append(m["r_build"])
        elif ctype is ChangeType.DEPENDENCIES:
            runtime = [
                d for d in facts.dependency_changes if not _TEST_DEP_MANIFEST.search(d.manifest)
            ]
            runtime_manifests = [
                f.path
                for f in facts.files
                if file_kind(f.path) == "deps" and not _TEST_DEP_MANIFEST.search(f.path)
            ]
            if runtime:
                imp = Importance.MEDIUM
                reasons.append(m["r_runtime_deps"].format(names=_names(d.name for d in runtime)))
            elif runtime_manifests and not facts.dependency_changes:
                # Versions could not be itemised (unknown format, lock file):
                # judge by which manifest changed.
                imp = Importance.MEDIUM
                reasons.append(m["r_runtime_manifest"].format(names=_names(runtime_manifests)))
            else:
                imp = Importance.LOW
                reasons.append(m["r_dev_deps"])
        elif ctype is ChangeType.REVERT:
            inner = re.sub(r'^\s*Revert\s*:?\s*["“]?|["”]\s*$', "", title).strip()
            imp = Importance.MEDIUM
            reasons.append(m["r_revert"])
            inner_facts_title = parse_title(inner)
            if (
                any(
                    _TAG_TYPES.get(_norm_tag(t)) is ChangeType.FEATURE
                    for t in inner_facts_title.tags
                )
                or _SEVERITY.search(inner)
                or _NEW_CAPABILITY.search(inner)
            ):
                imp = Importance.HIGH
                reasons.append(m["r_revert_feature"])
        elif ctype is ChangeType.REFACTOR or ctype is ChangeType.OTHER:
            if source_lines >= 200 or facts.files_changed >= 10:
                imp = Importance.MEDIUM
                reasons.append(m["r_large_refactor"].format(lines=source_lines))
            else:
                imp = Importance.LOW
                reasons.append(m["r_small"].format(type=type_label(self.lang, ctype)))
        else:
            imp = Importance.MEDIUM
            reasons.append(m["r_code_change"].format(type=type_label(self.lang, ctype)))

        # Signals that raise importance to high.
        raises: list[str] = []
        sev = _SEVERITY.search(title)
        if sev and ctype not in (ChangeType.FEATURE, ChangeType.PERFORMANCE):
            raises.append(m["r_severity"].format(word=sev.group(0).lower()))
        # Security raises from the title, or from a CVE id anywhere: prose in a
        # long description mentions "security" far too casually to count.
        sec = _SECURITY.search(title) or _CVE.search(commit.message)
        if sec and not sev:
            raises.append(m["r_security"].format(word=sec.group(0).lower()))
        if facts.breaking_marker or _BREAKING.search(title):
            raises.append(m["r_breaking"])
        removal = _REMOVAL.search(parse_title(title).text)
        if removal:
            raises.append(m["r_removal"])
        removed_api = [a for a in facts.api_changes if a.change in ("removed", "signature")]
        if len(removed_api) >= 3:
            raises.append(
                m["r_api"].format(n=len(removed_api), names=_names(a.name for a in removed_api))
            )
        elif removed_api and imp is Importance.LOW and not low_only:
            imp = Importance.MEDIUM
            reasons.append(m["r_api_medium"].format(names=_names(a.name for a in removed_api)))
        if _DEFAULT.search(title) and ctype not in (ChangeType.DOCS, ChangeType.TESTS):
            raises.append(m["r_default"])
        new_source = [
            f for f in facts.files if f.status is FileStatus.ADDED and file_kind(f.path) == "source"
        ]
        new_lines = sum(f.added for f in new_source)
        if ctype is ChangeType.FEATURE and (
            (_NEW_CAPABILITY.search(title) and new_lines >= 200) or new_lines >= 800
        ):
            raises.append(m["r_new_component"].format(n=len(new_source), lines=new_lines))
        if source_lines >= 1500 and ctype in (ChangeType.FEATURE, ChangeType.REFACTOR):
            raises.append(m["r_huge"].format(lines=source_lines))

        if raises:
            if low_only:
                reasons.append(m["r_low_only_wins"].format(kinds=self._kinds_text(facts.kinds)))
                imp = Importance.LOW
            else:
                imp = Importance.HIGH
                reasons.extend(raises)
                platform = [t for t in facts.tags if _norm_tag(t) in _PLATFORM_TAGS]
                if platform:
                    imp = Importance.MEDIUM
                    reasons.append(m["r_platform"].format(tags=", ".join(platform)))
        elif low_only and imp is not Importance.LOW:
            imp = Importance.LOW
            reasons.append(m["r_low_only"].format(kinds=self._kinds_text(facts.kinds)))

        return _Decision(ctype, type_reason, imp, reasons)

    # -- write-up ---------------------------------------------------------

    def analyse(self, commit: Commit, facts: Facts) -> Analysis:
        """The full rule analysis of one commit."""
        d = self.decide(commit, facts)
        m = self._m
        info = parse_title(commit.title)
        summary = self._summary(_EMAIL.sub("<email>", info.text), d.change_type, facts)
        impact = self._impact(facts)
        risks = self._risks(d, facts)
        recs = self._recommendations(d, facts, risks)
        insights = self._insights(d, commit, facts)
        return Analysis(
            analyser=self.name,
            change_type=d.change_type,
            importance=d.importance,
            reasons=(m["r_type"].format(reason=d.type_reason), *d.reasons),
            summary=summary,
            impact=tuple(impact),
            insights=insights,
            risks=tuple(risks),
            recommendations=tuple(recs),
            description=describe(commit.body),
        )

    def _summary(self, text: str, ctype: ChangeType, facts: Facts) -> str:
        m = self._m
        parts = [
            m["s_head"].format(type=type_label(self.lang, ctype), text=text or m["s_untitled"])
        ]
        parts.append(
            m["s_files"].format(
                files=facts.files_changed,
                added=facts.added,
                deleted=facts.deleted,
                areas=_names(facts.areas, limit=3, code=False) if facts.areas else m["none"],
            )
            if facts.files_changed
            else m["s_empty"]
        )
        api_added = [a for a in facts.api_changes if a.change == "added"]
        api_removed = [a for a in facts.api_changes if a.change == "removed"]
        api_changed = [a for a in facts.api_changes if a.change == "signature"]
        if api_added or api_removed or api_changed:
            parts.append(
                m["s_api"].format(
                    added=len(api_added), removed=len(api_removed), changed=len(api_changed)
                )
            )
        if facts.dependency_changes:
            parts.append(m["s_deps"].format(deps=_dep_list(facts.dependency_changes[:3])))
        return m["sent_join"].join(parts)

    def _impact(self, facts: Facts) -> list[str]:
        m = self._m
        out: list[str] = []
        per_area: dict[str, list[int]] = {}
        for f in facts.files:
            from_area = _area_for(facts, f.path)
            stats = per_area.setdefault(from_area, [0, 0, 0])
            stats[0] += 1
            stats[1] += f.added
            stats[2] += f.deleted
        for area in facts.areas[:6]:
            n, a, dl = per_area.get(area, [0, 0, 0])
            out.append(m["i_area"].format(area=area, n=n, added=a, deleted=dl))
        if len(facts.areas) > 6:
            out.append(m["i_more_areas"].format(n=len(facts.areas) - 6))
        for change, key in (
            ("removed", "i_api_removed"),
            ("signature", "i_api_changed"),
            ("added", "i_api_added"),
        ):
            items = [a for a in facts.api_changes if a.change == change]
            if items:
                out.append(m[key].format(names=_names(f"{a.name}" for a in items)))
        if facts.dependency_changes:
            out.append(m["i_deps"].format(deps=_dep_list(facts.dependency_changes[:6])))
        status_counts = {s: 0 for s in FileStatus}
        for f in facts.files:
            status_counts[f.status] += 1
        bits = [
            m["st_" + s.value].format(n=n)
            for s, n in status_counts.items()
            if n and s is not FileStatus.MODIFIED
        ]
        if bits:
            out.append(m["i_status"].format(list=m["sep"].join(bits)))
        special = [f for f in facts.files if f.binary or f.is_submodule or f.is_symlink]
        if special:
            out.append(m["i_special"].format(n=len(special)))
        if facts.unparsed:
            out.append(m["i_unparsed"].format(names=_names(facts.unparsed, limit=3)))
        return out

    def _insights(self, d: _Decision, commit: Commit, facts: Facts) -> dict[str, str]:
        m = self._m
        added_src = [
            f.path
            for f in facts.files
            if f.status is FileStatus.ADDED and file_kind(f.path) == "source"
        ]
        deleted_src = [
            f.path
            for f in facts.files
            if f.status is FileStatus.DELETED and file_kind(f.path) == "source"
        ]
        if added_src or deleted_src:
            arch = m["in_arch_files"].format(
                added=len(added_src),
                deleted=len(deleted_src),
                list=_names(added_src + deleted_src, limit=4),
            )
        else:
            arch = m["in_arch_none"]
        if len(facts.areas) > 1:
            arch += m["sent_join"] + m["in_arch_areas"].format(n=len(facts.areas))
        perf_hit = _PERF_HINT.search(commit.title)
        if d.change_type is ChangeType.PERFORMANCE or perf_hit:
            perf = m["in_perf_signal"].format(word=(perf_hit.group(0) if perf_hit else "perf"))
        else:
            perf = m["in_perf_none"]
        sec_hit = _SECURITY.search(commit.message)
        if sec_hit:
            sec = m["in_sec_signal"].format(word=sec_hit.group(0))
        elif facts.dependency_changes:
            sec = m["in_sec_deps"]
        else:
            sec = m["in_sec_none"]
        tests = facts.kinds.get("tests", 0)
        src = facts.kinds.get("source", 0)
        if src and tests:
            maint = m["in_maint_tests"].format(tests=tests, src=src)
        elif src:
            maint = m["in_maint_no_tests"].format(src=src)
        else:
            maint = m["in_maint_nosrc"]
        if facts.kinds.get("docs"):
            maint += m["sent_join"] + m["in_maint_docs"].format(n=facts.kinds["docs"])
        broken = [a for a in facts.api_changes if a.change in ("removed", "signature")]
        if broken or facts.breaking_marker:
            compat = m["in_compat_api"].format(names=_names(a.name for a in broken) or m["none"])
            if facts.breaking_marker:
                compat += m["sent_join"] + m["in_compat_marker"]
        elif facts.dependency_changes:
            compat = m["in_compat_deps"].format(deps=_dep_list(facts.dependency_changes[:3]))
        else:
            compat = m["in_compat_none"]
        return {
            "architecture": arch,
            "performance": perf,
            "security": sec,
            "maintainability": maint,
            "compatibility": compat,
        }

    def _risks(self, d: _Decision, facts: Facts) -> list[Risk]:
        m = self._m
        risks: list[Risk] = []
        broken = [a for a in facts.api_changes if a.change in ("removed", "signature")]
        if broken:
            risks.append(
                Risk(
                    m["rk_api"],
                    m["rk_api_d"].format(names=_names(a.name for a in broken)),
                    m["rk_api_m"],
                )
            )
        if facts.breaking_marker:
            risks.append(Risk(m["rk_breaking"], m["rk_breaking_d"], m["rk_breaking_m"]))
        if facts.dependency_changes:
            risks.append(
                Risk(
                    m["rk_deps"],
                    m["rk_deps_d"].format(deps=_dep_list(facts.dependency_changes[:4])),
                    m["rk_deps_m"],
                )
            )
        if d.change_type is ChangeType.REVERT:
            risks.append(Risk(m["rk_revert"], m["rk_revert_d"], m["rk_revert_m"]))
        src = facts.kinds.get("source", 0)
        if (
            src
            and not facts.kinds.get("tests")
            and d.change_type not in (ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD)
        ):
            risks.append(
                Risk(m["rk_untested"], m["rk_untested_d"].format(src=src), m["rk_untested_m"])
            )
        lines = facts.added + facts.deleted
        if lines >= 500:
            risks.append(
                Risk(
                    m["rk_large"],
                    m["rk_large_d"].format(
                        added=facts.added, deleted=facts.deleted, areas=len(facts.areas)
                    ),
                    m["rk_large_m"],
                )
            )
        if d.change_type is ChangeType.BUGFIX:
            risks.append(Risk(m["rk_fix"], m["rk_fix_d"], m["rk_fix_m"]))
        return risks

    def _recommendations(self, d: _Decision, facts: Facts, risks: list[Risk]) -> list[str]:
        m = self._m
        recs = [r.mitigation for r in risks]
        if facts.pr_number is not None:
            recs.append(m["rec_pr"].format(n=facts.pr_number))
        if facts.areas:
            recs.append(m["rec_areas"].format(areas=_names(facts.areas, limit=3, code=False)))
        return list(dict.fromkeys(recs))[:5]


def _share(facts: Facts, kinds: tuple[str, ...]) -> float:
    """Fraction of the commit's changed lines (files, when no lines) in files of ``kinds``."""
    total = sum(f.added + f.deleted for f in facts.files)
    if total == 0:
        hits = sum(1 for f in facts.files if file_kind(f.path) in kinds)
        return hits / len(facts.files) if facts.files else 0.0
    part = sum(f.added + f.deleted for f in facts.files if file_kind(f.path) in kinds)
    return part / total


def _area_for(facts: Facts, path: str) -> str:
    # Areas are computed by the extractor; recompute cheaply by prefix here.
    for area in facts.areas:
        if area == "(root)" and "/" not in path:
            return area
        if path == area or path.startswith(area.rstrip("/") + "/"):
            return area
    return facts.areas[0] if facts.areas else "(root)"


def _names(items: Iterable[str], limit: int = 5, code: bool = True) -> str:
    seen = list(dict.fromkeys(items))
    shown = [f"`{s}`" if code else s for s in seen[:limit]]
    extra = len(seen) - limit
    return ", ".join(shown) + (f" (+{extra})" if extra > 0 else "")


def _dep_list(changes: Iterable[object]) -> str:
    out = []
    for c in changes:
        old = getattr(c, "old", None)
        new = getattr(c, "new", None)
        name = getattr(c, "name", "?")
        if old is None:
            out.append(f"`{name}` + {new or '*'}")
        elif new is None:
            out.append(f"`{name}` − {old or '*'}")
        else:
            out.append(f"`{name}` {old or '*'} → {new or '*'}")
    return ", ".join(out)


# -- the author's own description -------------------------------------------

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]{1,40}:\s+\S.*$")
_EMAIL = re.compile(r"<?[\w.+-]+@[\w-]+(\.[\w-]+)+>?")
_TEMPLATE_LINE = re.compile(
    r"^\s*(#{1,6}\s|<!--|-->|-{3,}\s*$|={3,}\s*$|\*\*.*\*\*\s*$|- \[[ xX]\]|"
    r"(what this pr does|why we need it|does this pr introduce|how was this patch tested|"
    r"purpose|test plan|test result|essential elements)\b)",
    re.I,
)
DESCRIPTION_LIMIT = 280


def describe(body: str) -> str:
    """The first prose paragraph of the author's description, clipped at a word.

    Trailers, e-mail addresses, PR-template headings, code blocks and HTML
    comments are dropped; what is left is the author's own explanation, which
    a reader of the report wants more than any paraphrase.
    """
    lines: list[str] = []
    in_fence = in_comment = False
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if "<!--" in line and "-->" not in line:
            in_comment = True
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if not line:
            if lines:
                break
            continue
        if _TRAILER.match(line) and (
            "@" in line
            or line.lower().startswith(
                ("signed-off-by", "co-authored-by", "reviewed-by", "change-id", "cc:")
            )
        ):
            continue
        if _TEMPLATE_LINE.match(line) or line.lower().startswith(("- vllm version", "- vllm main")):
            if lines:
                break
            continue
        if line.startswith(("http://", "https://")) and " " not in line:
            continue
        lines.append(line)
    text = _EMAIL.sub("<email>", " ".join(lines)).strip()
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    cut = text[:DESCRIPTION_LIMIT]
    space = cut.rfind(" ")
    if space > DESCRIPTION_LIMIT // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


_MESSAGES: dict[str, dict[str, str]] = {
    "zh": {
        "sep": "、",
        "sent_join": "；",
        "none": "无",
        "kind_source": "源代码",
        "kind_tests": "测试",
        "kind_docs": "文档",
        "kind_ci": "CI",
        "kind_build": "构建",
        "kind_deps": "依赖清单",
        "kind_bench": "基准测试",
        "kind_other": "其他文件",
        "r_type": "类型：{reason}",
        "t_revert": "标题或说明表明这是一次回退",
        "t_only": "只改动了{kinds}文件",
        "t_tag": "标题标签 [{tag}]",
        "t_deps": "依赖清单中的版本发生变化且标题提到升级",
        "t_keyword": "标题关键词“{word}”",
        "t_new_files": "新增 {n} 个源文件",
        "t_none": "标题与改动中没有可归类的信号",
        "r_low_type": "{type}类变更默认为低重要度",
        "r_build": "改动构建文件，影响从源码构建的用户",
        "r_runtime_deps": "运行时依赖版本变化：{names}",
        "r_dev_deps": "只涉及测试/开发依赖",
        "r_runtime_manifest": "改动了运行时依赖清单 {names}",
        "r_revert": "回退会撤销此前已合入的行为",
        "r_revert_feature": "被回退的是功能或严重问题修复",
        "r_large_refactor": "较大的代码改动（源代码 {lines} 行）",
        "r_small": "规模较小的{type}改动",
        "r_code_change": "{type}改动了代码行为",
        "r_severity": "标题提到严重问题（“{word}”）",
        "r_security": "提交说明涉及安全（“{word}”）",
        "r_breaking": "标注为破坏性变更",
        "r_removal": "移除或弃用了面向用户的功能、参数或接口",
        "r_api": "删除或修改了 {n} 个公共 API：{names}",
        "r_api_medium": "修改了公共 API：{names}",
        "r_default": "改变了默认值或默认行为",
        "r_new_component": "新增组件（{n} 个新源文件，+{lines} 行）",
        "r_huge": "大规模核心代码改动（{lines} 行）",
        "r_low_only_wins": "虽有严重性信号，但只改动了{kinds}文件，不影响运行时",
        "r_low_only": "只改动了{kinds}文件",
        "r_platform": "限定于特定平台（{tags}），降为中",
        "s_head": "{type}：{text}",
        "s_untitled": "（无标题）",
        "s_files": "改动 {files} 个文件（+{added}/−{deleted}），涉及 {areas}",
        "s_empty": "没有文件改动",
        "s_api": "公共 API 新增 {added}、删除 {removed}、签名变化 {changed}",
        "s_deps": "依赖变化：{deps}",
        "i_area": "`{area}`：{n} 个文件（+{added}/−{deleted}）",
        "i_more_areas": "另有 {n} 个领域",
        "i_api_removed": "删除的公共 API：{names}",
        "i_api_changed": "签名变化的公共 API：{names}",
        "i_api_added": "新增的公共 API：{names}",
        "i_deps": "依赖版本：{deps}",
        "i_status": "文件变动：{list}",
        "i_special": "{n} 个二进制/符号链接/子模块文件（只统计，不解析）",
        "i_unparsed": "过大或无法解析的 Python 文件（只统计行数，未分析 API）：{names}",
        "st_added": "新增 {n}",
        "st_deleted": "删除 {n}",
        "st_renamed": "重命名 {n}",
        "st_copied": "复制 {n}",
        "st_type_changed": "类型变化 {n}",
        "st_modified": "修改 {n}",
        "in_arch_files": "新增 {added} 个、删除 {deleted} 个源文件（{list}）",
        "in_arch_none": "没有新增或删除源文件，改动在现有模块内",
        "in_arch_areas": "跨 {n} 个领域",
        "in_perf_signal": "标题提到性能相关内容（“{word}”）；规则分析不量化收益，"
        "请以 PR 中的实测数据为准",
        "in_perf_none": "标题与路径中没有性能相关信号",
        "in_sec_signal": "提交说明涉及安全（“{word}”），建议尽快评估",
        "in_sec_deps": "依赖版本变化，需复核供应链与已知漏洞",
        "in_sec_none": "没有发现安全相关信号",
        "in_maint_tests": "同时修改了 {tests} 个测试文件（源文件 {src} 个）",
        "in_maint_no_tests": "改动了 {src} 个源文件，但没有修改测试文件",
        "in_maint_nosrc": "没有改动源代码",
        "in_maint_docs": "同步更新了 {n} 个文档文件",
        "in_compat_api": "公共 API 删除或签名变化：{names}",
        "in_compat_marker": "提交标注了破坏性变更",
        "in_compat_deps": "依赖版本变化：{deps}",
        "in_compat_none": "没有发现公共 API 删除或签名变化",
        "rk_api": "下游调用失效",
        "rk_api_d": "这些公共名字被删除或签名改变：{names}",
        "rk_api_m": "在下游代码中搜索这些名字的调用并按新签名适配",
        "rk_breaking": "破坏性变更",
        "rk_breaking_d": "提交自己标注为破坏性变更",
        "rk_breaking_m": "阅读提交说明中的迁移方式，升级前在下游验证",
        "rk_deps": "依赖不兼容",
        "rk_deps_d": "依赖版本变化：{deps}",
        "rk_deps_m": "在下游环境中对齐依赖版本并运行测试",
        "rk_revert": "功能被撤销",
        "rk_revert_d": "此前合入的改动被回退，依赖它的下游代码会受影响",
        "rk_revert_m": "检查下游是否已经依赖被回退的改动",
        "rk_untested": "缺少测试",
        "rk_untested_d": "改动了 {src} 个源文件，没有同时修改测试",
        "rk_untested_m": "在下游对相关路径做回归验证",
        "rk_large": "回归范围大",
        "rk_large_d": "+{added}/−{deleted} 行，涉及 {areas} 个领域",
        "rk_large_m": "重点回归涉及的领域，分阶段升级",
        "rk_fix": "修复可能改变行为",
        "rk_fix_d": "修复会改变原有（错误的）行为，下游可能依赖了旧行为",
        "rk_fix_m": "确认下游是否受原问题影响，并在升级后验证相关功能",
        "rec_pr": "阅读 PR #{n} 的讨论与测试说明",
        "rec_areas": "关注 {areas} 的后续提交",
    },
    "en": {
        "sep": ", ",
        "sent_join": "; ",
        "none": "none",
        "kind_source": "source",
        "kind_tests": "test",
        "kind_docs": "docs",
        "kind_ci": "CI",
        "kind_build": "build",
        "kind_deps": "dependency manifest",
        "kind_bench": "benchmark",
        "kind_other": "other",
        "r_type": "Type: {reason}",
        "t_revert": "the title or message says it is a revert",
        "t_only": "only {kinds} files changed",
        "t_tag": "title tag [{tag}]",
        "t_deps": "versions changed in a dependency manifest and the title says so",
        "t_keyword": "title keyword \u201c{word}\u201d",
        "t_new_files": "{n} new source files",
        "t_none": "no classifiable signal in the title or the changes",
        "r_low_type": "{type} changes default to low importance",
        "r_build": "build files changed: affects users building from source",
        "r_runtime_deps": "runtime dependency versions changed: {names}",
        "r_dev_deps": "only test/dev dependencies changed",
        "r_runtime_manifest": "runtime dependency manifest changed: {names}",
        "r_revert": "a revert undoes behaviour that had landed",
        "r_revert_feature": "the reverted change is a feature or a severe fix",
        "r_large_refactor": "a sizeable code change ({lines} source lines)",
        "r_small": "a small {type} change",
        "r_code_change": "{type} changes code behaviour",
        "r_severity": "the title names a severe problem (\u201c{word}\u201d)",
        "r_security": "the message concerns security (\u201c{word}\u201d)",
        "r_breaking": "marked as a breaking change",
        "r_removal": "removes or deprecates a user-facing feature, flag or API",
        "r_api": "{n} public APIs removed or re-signed: {names}",
        "r_api_medium": "public API changed: {names}",
        "r_default": "changes a default value or behaviour",
        "r_new_component": "adds a new component ({n} new source files, +{lines} lines)",
        "r_huge": "a very large core change ({lines} lines)",
        "r_low_only_wins": "severity words, but only {kinds} files changed: no runtime effect",
        "r_low_only": "only {kinds} files changed",
        "r_platform": "limited to a platform ({tags}): medium",
        "s_head": "{type}: {text}",
        "s_untitled": "(untitled)",
        "s_files": "{files} files changed (+{added}/−{deleted}) in {areas}",
        "s_empty": "no files changed",
        "s_api": "public API: {added} added, {removed} removed, {changed} re-signed",
        "s_deps": "dependencies: {deps}",
        "i_area": "`{area}`: {n} files (+{added}/−{deleted})",
        "i_more_areas": "{n} more areas",
        "i_api_removed": "Public API removed: {names}",
        "i_api_changed": "Public API re-signed: {names}",
        "i_api_added": "Public API added: {names}",
        "i_deps": "Dependency versions: {deps}",
        "i_status": "Files: {list}",
        "i_special": "{n} binary/symlink/submodule entries (measured, not parsed)",
        "i_unparsed": "Python files too large or unparsable (lines counted, API not read): {names}",
        "st_added": "{n} added",
        "st_deleted": "{n} deleted",
        "st_renamed": "{n} renamed",
        "st_copied": "{n} copied",
        "st_type_changed": "{n} changed type",
        "st_modified": "{n} modified",
        "in_arch_files": "{added} source files added and {deleted} deleted ({list})",
        "in_arch_none": "no source files added or removed; changes stay inside existing modules",
        "in_arch_areas": "spans {n} areas",
        "in_perf_signal": "the title concerns performance (\u201c{word}\u201d); rules do not"
        " quantify"
        " gains: rely on measurements in the PR",
        "in_perf_none": "no performance signal in the title or paths",
        "in_sec_signal": "the message concerns security (\u201c{word}\u201d): assess promptly",
        "in_sec_deps": "dependency versions changed: review supply chain and known advisories",
        "in_sec_none": "no security signal found",
        "in_maint_tests": "{tests} test files changed alongside {src} source files",
        "in_maint_no_tests": "{src} source files changed with no test changes",
        "in_maint_nosrc": "no source code changed",
        "in_maint_docs": "{n} documentation files updated too",
        "in_compat_api": "public API removed or re-signed: {names}",
        "in_compat_marker": "the commit marks itself as breaking",
        "in_compat_deps": "dependency versions changed: {deps}",
        "in_compat_none": "no public API removed or re-signed",
        "rk_api": "Downstream calls break",
        "rk_api_d": "public names removed or re-signed: {names}",
        "rk_api_m": "search downstream code for these names and adapt to the new signatures",
        "rk_breaking": "Breaking change",
        "rk_breaking_d": "the commit marks itself as breaking",
        "rk_breaking_m": "read the migration notes in the message and verify downstream first",
        "rk_deps": "Dependency incompatibility",
        "rk_deps_d": "versions changed: {deps}",
        "rk_deps_m": "align dependency versions downstream and run the tests",
        "rk_revert": "Change withdrawn",
        "rk_revert_d": "a landed change is reverted; downstream code relying on it is affected",
        "rk_revert_m": "check whether downstream already relies on the reverted change",
        "rk_untested": "No tests",
        "rk_untested_d": "{src} source files changed with no test changes",
        "rk_untested_m": "regression-test the affected paths downstream",
        "rk_large": "Wide regression surface",
        "rk_large_d": "+{added}/−{deleted} lines across {areas} areas",
        "rk_large_m": "focus regression tests on the affected areas; upgrade in steps",
        "rk_fix": "Fix changes behaviour",
        "rk_fix_d": "a fix changes old (wrong) behaviour that downstream may rely on",
        "rk_fix_m": "check whether downstream hit the original problem, and verify after upgrading",
        "rec_pr": "Read the discussion and test notes of PR #{n}",
        "rec_areas": "Watch follow-up commits in {areas}",
    },
}
