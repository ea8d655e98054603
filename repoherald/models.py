"""Plain data passed between the stages of the pipeline.

These are frozen dataclasses rather than pydantic models on purpose: a busy
month is tens of thousands of file changes, and building them must cost next
to nothing. Everything here round-trips through JSON so the store can
cache it and the renderer can emit a twin; that codec lives beside the
store, in :mod:`repoherald.store.codec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum


class ChangeType(StrEnum):
    """The closed set of change types a commit is classified into."""

    FEATURE = "feature"
    BUGFIX = "bugfix"
    PERFORMANCE = "performance"
    REFACTOR = "refactor"
    DOCS = "docs"
    TESTS = "tests"
    CI_BUILD = "ci/build"
    DEPENDENCIES = "dependencies"
    REVERT = "revert"
    OTHER = "other"


class Importance(StrEnum):
    """How much a downstream engineer should read this commit today."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """Sort key: high first."""
        return {"high": 0, "medium": 1, "low": 2}[self.value]


class FileStatus(StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"
    TYPE_CHANGED = "type_changed"


@dataclass(frozen=True, slots=True)
class Person:
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class Commit:
    """Metadata of one commit, decoded to text by its declared encoding."""

    sha: str
    parents: tuple[str, ...]
    author: Person
    author_time: int
    """Author date, seconds since the epoch."""
    author_offset: int
    """Author's UTC offset in minutes, as recorded in the commit."""
    committer: Person
    commit_time: int
    commit_offset: int
    message: str
    encoding: str | None = None
    """The ``encoding`` header of the commit object, if any."""
    decode_errors: bool = False
    """True when the message bytes did not decode cleanly and were replaced."""
    files_truncated: bool = False
    """True when the source listed only part of the commit's files (GitHub stops at 3,000)."""

    @property
    def title(self) -> str:
        """First line of the message (may be empty)."""
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip("\n") if len(parts) > 1 else ""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path touched by a commit, as diffed against its first parent."""

    path: str
    status: FileStatus
    old_path: str | None = None
    added: int = 0
    deleted: int = 0
    binary: bool = False
    old_mode: str = ""
    new_mode: str = ""
    old_blob: str = ""
    new_blob: str = ""
    size: int | None = None
    """Size in bytes of the new blob (old blob for deletions), when measured."""
    patch_withheld: bool = False
    """True when the source sent no patch for this text file (GitHub omits large ones);
    ``added``/``deleted`` are still exact."""

    @property
    def is_symlink(self) -> bool:
        return "120000" in (self.old_mode, self.new_mode)

    @property
    def is_submodule(self) -> bool:
        return "160000" in (self.old_mode, self.new_mode)

    @property
    def mode_changed(self) -> bool:
        return bool(self.old_mode and self.new_mode and self.old_mode != self.new_mode)


@dataclass(frozen=True, slots=True)
class FilePatch:
    """One file's part of a commit's diff, as a source returns it."""

    path: str
    old_path: str | None
    status: FileStatus
    binary: bool
    header: str
    """The ``diff --git`` line and extended headers, up to the first hunk;
    empty when the diff was cut before this file."""
    hunks: tuple[str, ...]
    """Each hunk's text, starting with its ``@@`` line and ending with a newline."""
    added: int
    """Lines added in the whole file (numstat), even when the hunks were cut."""
    deleted: int


@dataclass(frozen=True, slots=True)
class CommitPatch:
    """A commit's diff as data: per-file patches in the order of its file list.

    Sources build it from what they read (git's unified diff cut per file, or
    GitHub's per-file ``patch`` fields), so no stage has to split a text and
    guess which file each part belongs to.
    """

    files: tuple[FilePatch, ...]
    cut: bool = False
    """True when the source stopped reading the diff (too large, or a file list cut
    short): files past the cut have no hunks."""

    @property
    def text(self) -> str:
        """Everything the diff shows, as one text (what the fact-check searches)."""
        return "".join(f.header + "".join(f.hunks) for f in self.files)


@dataclass(frozen=True, slots=True)
class PullRequest:
    """The pull request behind a commit: untrusted text, like a commit message."""

    number: int
    title: str
    body: str
    labels: tuple[str, ...]
    """Label names as written on GitHub (``bug``, ``breaking``, ``performance``…)."""
    author: str
    """The login of whoever opened it."""
    merged_by: str | None
    """The login of whoever merged it; None when not merged (or not known)."""
    url: str
    """Its web page."""


@dataclass(frozen=True, slots=True)
class ApiChange:
    """A module-level public name added, removed or re-signed in a Python file."""

    path: str
    name: str
    kind: str
    """``function``, ``class`` or ``async function``."""
    change: str
    """``added``, ``removed`` or ``signature``."""
    old_signature: str | None = None
    new_signature: str | None = None


@dataclass(frozen=True, slots=True)
class DependencyChange:
    """A dependency whose declared version changed in a manifest."""

    manifest: str
    name: str
    old: str | None
    """Old version spec; None when the dependency was added."""
    new: str | None
    """New version spec; None when the dependency was removed."""


@dataclass(frozen=True, slots=True)
class HostBump:
    """A moved pin of the framework a plugin is built on.

    See :mod:`repoherald.analysis.facts.hostpins`."""

    name: str
    path: str
    """The manifest, CI or build file that pins it."""
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class OpChange:
    """A native operator removed, or re-declared so that a caller can break
    (:mod:`repoherald.analysis.facts.opschema`)."""

    name: str
    path: str
    """The registration file (the old one for a removal)."""
    change: str
    """``removed`` or ``signature``."""
    old: str
    """The old schema; empty for a name bound without one."""
    new: str = ""


@dataclass(frozen=True, slots=True)
class FlagChange:
    """A command-line flag the commit removes, renames or re-defaults
    (:mod:`repoherald.analysis.surface.flags`)."""

    flag: str
    change: str
    """``removed``, ``renamed`` or ``default``."""
    old: str
    """The old default (the old name for a rename); may be empty."""
    new: str
    """The new default (the new name for a rename); empty for a removal."""
    path: str


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything the rules know about a commit, read from git alone."""

    files: tuple[FileChange, ...]
    added: int
    deleted: int
    areas: tuple[str, ...]
    pr_number: int | None
    tags: tuple[str, ...]
    """Title tags, lower-cased: ``bugfix``, ``ci/build``, ``fix`` (Conventional)…"""
    conventional_type: str | None
    conventional_scope: str | None
    breaking_marker: bool
    """``feat!:`` or a ``BREAKING CHANGE:`` footer."""
    is_revert: bool
    reverted_sha: str | None
    co_authors: tuple[str, ...]
    """Co-author names (never their addresses)."""
    kinds: dict[str, int]
    """File counts per kind: source, tests, docs, ci, build, deps, other."""
    api_changes: tuple[ApiChange, ...]
    dependency_changes: tuple[DependencyChange, ...]
    is_merge: bool = False
    unparsed: tuple[str, ...] = ()
    """Python files too large, binary or not parseable: measured, not parsed."""
    pull_request: PullRequest | None = None
    """The pull request behind the commit, when the source could tell (untrusted text)."""
    host_bumps: tuple[HostBump, ...] = ()
    """Host frameworks whose pinned version the commit moves
    (:mod:`repoherald.analysis.facts.hostpins`)."""
    env_removed: tuple[str, ...] = ()
    """Environment variables the project stops reading.

    See :mod:`repoherald.analysis.surface.envvars`."""
    env_redefaulted: tuple[tuple[str, str, str], ...] = ()
    """(variable, old default, new default) of reads whose default changed."""
    home_words: tuple[str, ...] = ()
    """Words of the repository's own name (``vllm-xpu-kernels``: vllm, xpu, kernels):
    a platform the whole project is for narrows none of its changes."""
    op_changes: tuple[OpChange, ...] = ()
    """Native operators removed or re-declared incompatibly."""
    flag_changes: tuple[FlagChange, ...] = ()
    """Command-line flags removed, renamed or re-defaulted."""
    version_only: bool = False
    """Every changed line outside docs is a version string: a release or dev-version bump."""
    pin_moves: tuple[tuple[str, str, str], ...] = ()
    """(path, old, new) of each dedicated pin file changed (``vllm_lkg.version``); a value
    that does not look like a commit, tag or version is empty."""
    file_areas: tuple[str, ...] = ()
    """The area of each of ``files``, in the same order (empty in facts cached before it)."""

    @property
    def files_changed(self) -> int:
        return len(self.files)

    def only(self, *kinds: str) -> bool:
        """True when every touched file is of one of ``kinds`` (and there is one)."""
        present = {k for k, n in self.kinds.items() if n}
        return bool(present) and present <= set(kinds)


@dataclass(frozen=True, slots=True)
class Text:
    """A user-facing message kept language-neutral: a catalogue key and its arguments.

    Rule analyses store these instead of prose, so one analysis serves every
    report language and the store keys it without one;
    :func:`repoherald.i18n.localise` turns a Text into words at render time.
    An argument is data (``str``, ``int``: paths, names, counts), a nested
    Text (localised first), or a tuple of Texts (localised, then joined by
    the language's list separator). Keys starting with ``join.`` name a
    separator: such a Text joins its ``items`` with it.
    """

    code: str
    args: dict[str, Arg] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.code, tuple(self.args.items())))


Arg = str | int | Text | tuple[Text, ...]
"""One argument of a :class:`Text`."""

Message = str | Text
"""Report text: prose in one language (a model's answer, an error) or a neutral :class:`Text`."""


@dataclass(frozen=True, slots=True)
class Risk:
    risk: Message
    detail: Message
    mitigation: Message


@dataclass(frozen=True, slots=True)
class Analysis:
    """The verdict on one commit from one analyser, rendered as-is."""

    analyser: str
    """``rules/<version>`` or ``llm/<model>/<prompt version>/<language>``."""
    change_type: ChangeType
    importance: Importance
    reasons: tuple[Message, ...]
    """Why this type and importance: :class:`Text` from the rules, prose from a model."""
    summary: Message
    impact: tuple[Message, ...] = ()
    insights: dict[str, Message] = field(default_factory=dict)
    """Keys: architecture, performance, security, maintainability, compatibility."""
    risks: tuple[Risk, ...] = ()
    recommendations: tuple[Message, ...] = ()
    description: str = ""
    """An excerpt of the commit's own description (the author's words)."""
    error: Message = ""
    """Set when this commit could not be analysed; the report says so."""
    llm_error: Message = ""
    """Set when the LLM analysis failed and this is the rule analysis kept instead."""
    usage: tuple[int, int] = (0, 0)
    """LLM prompt and completion tokens spent on this commit (all attempts)."""
    unverified: tuple[str, ...] = ()
    """Claims of the model that the change does not support (marked or removed)."""
    unseen_files: tuple[str, ...] = ()
    """Files (with the reason) the model did not see, fully or in part."""
    rule_verdict: str = ""
    """The rules' type/importance when the model changed them (shown with its reason)."""


@dataclass(frozen=True, slots=True)
class DownstreamImpact:
    """One line of the reader's own code that a commit breaks or changes (this report only).

    The fields of :class:`repoherald.analysis.downstream.impact.Impact`, plus the
    downstream ``project`` (its label as configured). ``kind`` is ``breaks``
    or ``changes``; ``code`` a stable reason the renderer words; ``detail``
    the matcher's specifics (signatures, defaults) as a neutral :class:`Text`,
    worded in the report's language by the renderer like every other message.
    """

    project: str
    kind: str
    code: str
    upstream: str
    path: str
    line: int
    detail: Message = ""
    replacement: str = ""
    upstream_path: str = ""
    upstream_line: int = 0


@dataclass(frozen=True, slots=True)
class WatchHit:
    """A changed path of the commit that one of the reader's ``watch`` globs matches."""

    glob: str
    path: str


@dataclass(frozen=True, slots=True)
class Mention:
    """A reference one commit's message makes to another commit, not yet resolved.

    ``kind`` is what this commit does to the other: ``reverts``, ``relands``,
    ``fixes`` or ``follows_up``. ``ref`` says how the other is named: ``sha``
    (a lower-case prefix of at least 7 digits), ``pr`` (a pull request number)
    or ``title`` (:func:`repoherald.analysis.facts.related.title_key` of its title).
    """

    kind: str
    ref: str
    target: str


@dataclass(frozen=True, slots=True)
class Related:
    """Another commit of the same repository linked to this one, possibly days apart.

    ``kind`` is said from this commit's side: ``reverts``, ``relands``,
    ``fixes``, ``follows_up``, or the other way round ``reverted_by``,
    ``relanded_by``, ``fixed_by``, ``followed_up_by``. ``title`` is the other
    commit's (untrusted) title; ``day`` its report day (YYYY-MM-DD).
    """

    kind: str
    sha: str
    title: str
    day: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One commit as it appears in a report."""

    commit: Commit
    facts: Facts
    analysis: Analysis
    impacts: tuple[DownstreamImpact, ...] = ()
    """What this commit breaks or changes in the reader's downstream checkouts."""
    watched: tuple[WatchHit, ...] = ()
    """Its changed paths that the reader's watch globs match."""
    correction: Correction | None = None
    """A reader's correction of the verdict (``repoherald mark``), shown beside it."""
    related: tuple[Related, ...] = ()
    """Commits of the same repository this one reverts, re-lands, fixes or follows up, and
    those that did so to it (found in the store, across days)."""


@dataclass(frozen=True, slots=True)
class Correction:
    """A team's own verdict on a commit, recorded with ``repoherald mark``.

    It is kept apart from :class:`Analysis` on purpose: the report shows it
    beside the tool's verdict, the benchmarks read it as a label, and no
    analysis (nor its cache key) ever sees it.
    """

    importance: Importance
    change_type: ChangeType | None
    """None when the reader corrected only the importance."""
    reason: str
    marked_at: str
    """When it was recorded (UTC, ISO 8601)."""


@dataclass(frozen=True, slots=True)
class DownstreamProject:
    """One downstream checkout as checked for a report: what was read and what was not."""

    label: str
    """The path as configured (never the absolute path: reports are shared)."""
    name: str
    files: int = 0
    """Python files read."""
    lines: int = 0
    """Lines of the files parsed (those that name the upstream)."""
    not_checked: tuple[tuple[str, int], ...] = ()
    """(reason, count): code the index could not see into, most frequent first."""
    excluded: tuple[str, ...] = ()
    """Directories left out by policy (virtualenvs, dot-directories, build output)."""
    file_url: str | None = None
    """Prefix of ``file:line`` links (``https://github.com/me/p/blob/<sha>``), if known."""
    note: Message = ""
    """Why nothing (or little) could be checked: a missing path, no Python files."""


@dataclass(frozen=True, slots=True)
class DownstreamCheck:
    """A repository's "Affects your code" settings and what could be checked, for one report."""

    projects: tuple[DownstreamProject, ...]
    watch: tuple[str, ...]
    packages: tuple[str, ...]
    """The upstream's import packages the downstream code was searched for."""
    upstream_unparsed: int = 0
    """Changed upstream files the downstream uses whose old or new version did not parse."""


@dataclass(frozen=True, slots=True)
class RepoSection:
    """One repository's part of a day's report."""

    name: str
    branch: str
    web_url: str | None
    entries: tuple[Entry, ...]
    """First-parent order, newest first."""
    error: str | None = None
    notes: tuple[Message, ...] = ()
    """Remarks on how the repository was read (e.g. a stale local clone)."""
    identity: str = ""
    """What was read (a clone URL without credentials, or a resolved path): the archive
    uses it to tell two repositories with the same name apart."""
    downstream: DownstreamCheck | None = None
    """Set when the repository has ``downstream`` or ``watch`` configured."""


@dataclass(frozen=True, slots=True)
class DayReport:
    """Everything a day's report shows; the renderers only format it."""

    day: date
    tz_name: str
    start: datetime
    end: datetime
    lang: str
    sections: tuple[RepoSection, ...]
    analysers: tuple[str, ...]
    generated_at: datetime
    version: str
    as_of: datetime | None = None
    """Set when the day is still running (today): the report covers commits up to this time."""

    @property
    def entries(self) -> list[Entry]:
        return [e for s in self.sections for e in s.entries]


FIRST_TIME = -62_135_510_400
"""0001-01-02T00:00:00Z: a day inside what ``datetime`` can hold, in any time zone."""
LAST_TIME = 253_402_214_400
"""9999-12-31T00:00:00Z, likewise."""


def representable(ts: int) -> int:
    """``ts`` moved into the range a ``datetime`` can show in any zone.

    A commit can carry any date (``git commit --date "@253402300799 +1400"``
    is year 10000 in its own zone); showing it must not raise OverflowError
    and lose the report. Real dates are never changed.
    """
    return min(max(ts, FIRST_TIME), LAST_TIME)
