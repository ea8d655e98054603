"""The rules' write-up of a commit: summary, impact, insights, risks, recommendations.

Every sentence is assembled from facts, so nothing here can be invented, and
every sentence is a language-neutral :class:`~repoherald.models.Text` (a
``rule.*`` key of the catalogues and its arguments): the report localises it.
Arguments are data (paths, names, counts) or other Texts, never words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from repoherald.analysis.facts.commit import file_kind, parse_title
from repoherald.analysis.verdict import reach
from repoherald.analysis.verdict.signals import SECURITY
from repoherald.emails import hide_emails
from repoherald.i18n import type_text
from repoherald.models import (
    Arg,
    ChangeType,
    Commit,
    DependencyChange,
    Facts,
    FileStatus,
    Message,
    OpChange,
    Risk,
    Text,
)


def rule(code: str, **args: Arg) -> Text:
    """The catalogue message ``rule.<code>`` with its arguments."""
    return Text("rule." + code, args)


def sentences(*parts: Text) -> Text:
    """``parts`` joined by the language's sentence separator (``；`` / ``; ``)."""
    return Text("join.sentences", {"items": parts})


def kinds_text(kinds: Iterable[str]) -> tuple[Text, ...]:
    """File kinds as a list argument (``源代码、测试`` / ``source, test``)."""
    return tuple(Text("kind." + k) for k in kinds)


def names(items: Iterable[str], limit: int = 5, code: bool = True) -> str:
    """Up to ``limit`` distinct names, in backticks, then ``(+n)`` for the rest."""
    seen = list(dict.fromkeys(items))
    shown = [f"`{s}`" if code else s for s in seen[:limit]]
    extra = len(seen) - limit
    return ", ".join(shown) + (f" (+{extra})" if extra > 0 else "")


def dep_list(changes: Iterable[DependencyChange]) -> str:
    """Version changes as data (names in backticks, ``old → new``, ``+`` added, ``−`` removed)."""
    out = []
    for c in changes:
        if c.old is None:
            out.append(f"`{c.name}` + {c.new or '*'}")
        elif c.new is None:
            out.append(f"`{c.name}` − {c.old or '*'}")
        else:
            out.append(f"`{c.name}` {c.old or '*'} → {c.new or '*'}")
    return ", ".join(out)


# -- summary and impact --------------------------------------------------------


def summary(commit: Commit, ctype: ChangeType, facts: Facts) -> Text:
    """The type and the title's own words, then what the title does not say.

    Which public names it removes or moves, and which dependencies it
    changes. Where it lands is left to the impact lines just below, which
    count each area's files: a summary sentence "in tests" said again under
    every other commit of the day would be filler.
    """
    text = hide_emails(parse_title(commit.title).text)
    parts = [rule("s_head", type=type_text(ctype), text=text or rule("s_untitled"))]
    if not facts.files_changed:
        parts.append(rule("s_empty"))
    removed, moved = reach.public_removals(facts)
    if removed:
        parts.append(rule("s_removes", names=names(a.name for a in removed)))
    if moved:
        parts.append(rule("s_moves", names=names(moved)))
    added = [a.name for a in facts.api_changes if a.change == "added" and a.name not in moved]
    if added and not removed:
        parts.append(rule("s_adds", names=names(added, limit=3)))
    if facts.dependency_changes:
        parts.append(rule("s_deps", deps=dep_list(facts.dependency_changes[:3])))
    return sentences(*parts)


_API_CHANGES = ("added", "removed", "signature")


def impact(facts: Facts) -> list[Text]:
    """Where the change lands: per area, then API, dependencies, file status, unreadable files."""
    out = _area_impact(facts)
    removed, moved = reach.public_removals(facts)
    if removed:
        out.append(rule("i_api_removed", names=names(a.name for a in removed)))
    if moved:
        out.append(rule("i_api_moved", names=names(moved)))
    for change, code in (("signature", "i_api_changed"), ("added", "i_api_added")):
        items = [a for a in facts.api_changes if a.change == change and a.name not in moved]
        if items:
            out.append(rule(code, names=names(a.name for a in items)))
    if facts.dependency_changes:
        out.append(rule("i_deps", deps=dep_list(facts.dependency_changes[:6])))
    status_counts = {s: 0 for s in FileStatus}
    for f in facts.files:
        status_counts[f.status] += 1
    bits = tuple(
        rule("st_" + s.value, n=n)
        for s, n in status_counts.items()
        if n and s not in (FileStatus.MODIFIED, FileStatus.ADDED)
    )
    if bits:
        out.append(rule("i_status", list=bits))
    special = [f for f in facts.files if f.binary or f.is_submodule or f.is_symlink]
    if special:
        out.append(rule("i_special", n=len(special)))
    if facts.unparsed:
        out.append(rule("i_unparsed", names=names(facts.unparsed, limit=3)))
    return out


def _area_impact(facts: Facts) -> list[Text]:
    per_area: dict[str, list[int]] = {}
    for f, area in zip(facts.files, _file_areas(facts), strict=True):
        stats = per_area.setdefault(area, [0, 0, 0])
        stats[0] += 1
        stats[1] += f.added
        stats[2] += f.deleted
    out = []
    for area in facts.areas[:6]:
        n, added, deleted = per_area.get(area, [0, 0, 0])
        out.append(rule("i_area", area=area, n=n, added=added, deleted=deleted))
    if len(facts.areas) > 6:
        out.append(rule("i_more_areas", n=len(facts.areas) - 6))
    return out


def _file_areas(facts: Facts) -> tuple[str, ...]:
    """The area of each changed file, as the extractor computed it.

    Facts cached before ``file_areas`` existed get a prefix guess, which is
    wrong for areas configured by glob.
    """
    if len(facts.file_areas) == len(facts.files):
        return facts.file_areas
    return tuple(_area_for(facts, f.path) for f in facts.files)


def _area_for(facts: Facts, path: str) -> str:
    for area in facts.areas:
        if area == "(root)" and "/" not in path:
            return area
        if path == area or path.startswith(area.rstrip("/") + "/"):
            return area
    return facts.areas[0] if facts.areas else "(root)"


# -- insights ------------------------------------------------------------------


def insights(ctype: ChangeType, commit: Commit, facts: Facts) -> dict[str, Message]:
    """One observation per dimension that has one; a dimension with nothing to say is left out.

    A sentence such as "no security signal found" would be true of almost
    every commit and tells the reader nothing. Performance is left to the
    model: the rules cannot measure a speed-up, and "the title mentions
    performance" only repeats the title.
    """
    found = {
        "architecture": _architecture(facts),
        "security": _security(commit, facts),
        "maintainability": _maintainability(facts),
        "compatibility": _compatibility(facts),
    }
    return {key: text for key, text in found.items() if text is not None}


def _architecture(facts: Facts) -> Text | None:
    """Source modules added or removed; the areas a change spans are the impact lines' job."""
    added = [f.path for f in facts.files if f.status is FileStatus.ADDED and _is_source(f.path)]
    deleted = [f.path for f in facts.files if f.status is FileStatus.DELETED and _is_source(f.path)]
    if not (added or deleted):
        return None
    return rule(
        "in_arch_files",
        added=len(added),
        deleted=len(deleted),
        list=names(added + deleted, limit=4),
    )


_SCRIPT_SUFFIXES = (".sh", ".bash", ".ps1", ".bat")


def _is_tested_code(path: str) -> bool:
    """Product code a test would cover: not a shell script, not opt-in or internal tooling."""
    return (
        _is_source(path) and not path.endswith(_SCRIPT_SUFFIXES) and not reach.is_peripheral(path)
    )


def _is_source(path: str) -> bool:
    return file_kind(path) == "source"


def _security(commit: Commit, facts: Facts) -> Text | None:
    """A security word in the title or the author's own first paragraph.

    Not the whole body: PR templates carry "security" checkboxes and
    headings, which made the same sentence appear under most of a day.
    """
    hit = SECURITY.search(commit.title) or SECURITY.search(describe(commit.body))
    if hit:
        return rule("in_sec_signal", word=hit.group(0))
    if facts.dependency_changes:
        return rule("in_sec_deps")
    return None


def _maintainability(facts: Facts) -> Text | None:
    """Which tests and docs moved with the source, by name.

    Source without tests is the "untested" risk's to say, not said twice.
    """
    if not facts.kinds.get("source"):
        return None
    tests = [f.path for f in facts.files if file_kind(f.path) == "tests"]
    docs = [f.path for f in facts.files if file_kind(f.path) == "docs"]
    parts = []
    if tests:
        parts.append(rule("in_maint_tests", names=names(tests, limit=3)))
    if docs:
        parts.append(rule("in_maint_docs", names=names(docs, limit=3)))
    return sentences(*parts) if parts else None


def _compatibility(facts: Facts) -> Text | None:
    removed, moved = reach.public_removals(facts)
    parts = []
    if removed:
        parts.append(rule("in_compat_api", names=names(a.name for a in removed)))
    if moved:
        parts.append(rule("in_compat_moved", names=names(moved)))
    if facts.breaking_marker:
        parts.append(rule("in_compat_marker"))
    for bump in facts.host_bumps[:2]:
        parts.append(rule("in_compat_host", name=bump.name, old=bump.old, new=bump.new))
    if facts.env_removed:
        parts.append(rule("in_compat_env_removed", names=names(facts.env_removed)))
    for name, old, new in facts.env_redefaulted[:2]:
        parts.append(rule("in_compat_env_default", name=name, old=old, new=new))
    modules = reach.removed_modules(facts)
    if modules:
        parts.append(rule("in_compat_modules", names=names(modules)))
    ops = reach.public_ops(facts)
    if ops:
        parts.append(rule("in_compat_ops", names=names(_op_changes(ops), code=False)))
    flags = _flag_changes(facts)
    if flags:
        parts.append(rule("in_compat_flags", names=names(flags, code=False)))
    if not parts and facts.dependency_changes:
        parts.append(rule("in_compat_deps", deps=dep_list(facts.dependency_changes[:3])))
    return sentences(*parts) if parts else None


def _flag_changes(facts: Facts) -> list[str]:
    """Each changed flag with what happened to it: gone, its new name, its new default."""
    out = []
    for c in facts.flag_changes:
        if reach.is_peripheral(c.path):
            continue
        if c.change == "default":
            out.append(f"`{c.flag}` `{c.old}` → `{c.new}`")
        elif c.change == "renamed":
            out.append(f"`{c.flag}` → `{c.new}`")
        else:
            out.append(f"`{c.flag}` −")
    return out


def _op_changes(ops: list[OpChange]) -> list[str]:
    """The name of a removed operator; the old and the new schema of a re-declared one."""
    return [f"`{o.name}`" if o.change == "removed" else f"`{o.old}` → `{o.new}`" for o in ops]


# -- risks and recommendations ---------------------------------------------------


def _risk(code: str, **detail_args: Arg) -> Risk:
    """The risk ``rk_<code>``: its name, its detail (with arguments) and its mitigation."""
    return Risk(
        rule("rk_" + code), rule(f"rk_{code}_d", **detail_args), rule(f"rk_{code}_m", **detail_args)
    )


def risks(ctype: ChangeType, facts: Facts) -> list[Risk]:
    """What could break downstream, each only when a fact shows it."""
    out: list[Risk] = []
    broken, _moved = reach.public_removals(facts)
    if broken:
        out.append(_risk("api", names=names(a.name for a in broken)))
    if facts.breaking_marker:
        out.append(_risk("breaking"))
    ops = reach.public_ops(facts)
    if ops:
        out.append(_risk("ops", names=names(o.name for o in ops)))
    flags = [c.flag for c in facts.flag_changes if not reach.is_peripheral(c.path)]
    if flags:
        out.append(_risk("flags", names=names(flags)))
    if facts.host_bumps:
        bump = facts.host_bumps[0]
        out.append(_risk("host", name=bump.name, new=bump.new))
    if facts.env_removed or facts.env_redefaulted:
        changed = [*facts.env_removed, *(name for name, _, _ in facts.env_redefaulted)]
        out.append(_risk("env", names=names(changed)))
    if facts.dependency_changes:
        out.append(_risk("deps", deps=dep_list(facts.dependency_changes[:4])))
    if ctype is ChangeType.REVERT:
        out.append(_risk("revert"))
    src = [f.path for f in facts.files if _is_tested_code(f.path)]
    quiet_types = (ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD)
    if src and not facts.kinds.get("tests") and ctype not in quiet_types:
        out.append(_risk("untested", names=names(src, limit=3)))
    if facts.added + facts.deleted >= 500:
        out.append(
            _risk(
                "large",
                added=facts.added,
                deleted=facts.deleted,
                areas=names(facts.areas, limit=3, code=False),
            )
        )
    return out


def recommendations(facts: Facts) -> list[Message]:
    """Concrete steps this change calls for, or none.

    Each names a thing of this commit: the old default of an environment
    variable or a flag to keep the old behaviour, the new home of a moved
    name. The risks carry their own mitigations; a recommendation never
    repeats one, and "read the PR" or "watch this area" would be true of any
    commit, so they are not said.
    """
    recs: list[Message] = []
    for name, old, _new in facts.env_redefaulted[:3]:
        if old:
            recs.append(rule("rec_env_keep", name=name, old=old))
    for c in facts.flag_changes:
        if c.change == "default" and c.old and not reach.is_peripheral(c.path):
            recs.append(rule("rec_flag_keep", flag=c.flag, old=c.old))
    _removed, moved = reach.public_removals(facts)
    if moved:
        recs.append(rule("rec_moved", names=names(moved)))
    return list(dict.fromkeys(recs))[:5]


# -- the author's own description -------------------------------------------

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]{1,40}:\s+\S.*$")
_TEMPLATE_LINE = re.compile(
    r"^\s*(#{1,6}\s|<!--|-->|-{3,}\s*$|={3,}\s*$|\*\*.*\*\*\s*$|- \[[ xX]\]|"
    r"(what this pr does|why we need it|does this pr introduce|how was this patch tested|"
    r"purpose|test plan|test result|essential elements|thank(s| you) for (your )?contribut\w*|"
    r"please (make sure|read|fill|provide|describe)|merge pull request !?\d+ from|"
    r"see merge request|stack from \[ghstack\])\b)",
    re.I,
)
_LABEL = re.compile(
    r"^(summary|description|motivation|overview|details|changes|context|background|"
    r"this (pr|change|commit) (is|does)|what does this pr do\??)\s*:?\s*",
    re.I,
)
"""A heading the author's text starts with (``SUMMARY:``): dropped, its text kept."""
_REFERENCE = re.compile(
    r"(?i)\b(fix(es|ed)?|close[sd]?|resolve[sd]?|related to|follow[- ]up (to|of)|see|part of|"
    r"differential revision)\s*:?\s*|#\d+|\bD\d{6,}\b|https?://\S+|@[\w-]+|[(),.;:*\-]"
)
"""Words that only point elsewhere (``Fixes #12``, a URL, an @handle) and carry no account."""
_MENTIONS_ONLY = re.compile(r"^(from|cc|reviewed-by|approved-by)?\s*:?\s*(@[\w-]*\s*)+$", re.I)
_SQUASHED = re.compile(r"^[*-]\s+(\S+\s*){1,3}$")
"""A squash-merge's one-to-three-word bullet (``* Update``, ``* WIP``)."""
DESCRIPTION_LIMIT = 280
MIN_DESCRIPTION_WORDS = 4


def describe(body: str, title: str = "") -> str:
    """The first prose paragraph of the author's description, clipped at a word.

    Trailers, e-mail addresses, PR-template headings and sentences, code
    blocks, tables, HTML comments, bare @handles and a squash-merge's
    one-word bullets are dropped; what is left is the author's own
    explanation, which a reader of the report wants more than any
    paraphrase. A description that only points elsewhere (``Fixes #12``),
    is a fragment of fewer than four words, or repeats the title is not
    shown: it would be noise under the title.
    """
    text = hide_emails(" ".join(_prose_lines(body))).strip()
    text = _LABEL.sub("", text, count=1).strip()
    account = _REFERENCE.sub(" ", text).split()
    if len(account) < MIN_DESCRIPTION_WORDS or _same_words(text, title):
        return ""
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    cut = text[:DESCRIPTION_LIMIT]
    space = cut.rfind(" ")
    if space > DESCRIPTION_LIMIT // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _same_words(text: str, title: str) -> bool:
    """True when ``text`` says no more than the title (case, punctuation and PR number aside)."""

    def words(s: str) -> list[str]:
        return re.findall(r"[a-z0-9_]+", re.sub(r"\(#\d+\)", "", s.lower()))

    said = words(text)
    return bool(said) and " ".join(said) in " ".join(words(title))


def _prose_lines(body: str) -> list[str]:
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
            in_comment = "-->" not in line
            continue
        if not line:
            if lines:
                break
            continue
        if line.startswith("|"):  # a Markdown table: rows would read as a run of pipes
            if lines:
                break
            continue
        if _is_trailer(line) or _MENTIONS_ONLY.match(line) or _SQUASHED.match(line):
            continue
        if _TEMPLATE_LINE.match(line) or line.lower().startswith(("- vllm version", "- vllm main")):
            if lines:
                break
            continue
        if _LABEL.fullmatch(line):
            continue
        if line.lstrip("*- ").startswith(("http://", "https://")) and " " not in line.lstrip("*- "):
            continue
        lines.append(line)
    return lines


def _is_trailer(line: str) -> bool:
    return bool(_TRAILER.match(line)) and (
        "@" in line
        or line.lower().startswith(
            ("signed-off-by", "co-authored-by", "reviewed-by", "change-id", "cc:")
        )
    )
