"""Deterministic facts about a commit, read from its message and diff.

Facts are what every later stage stands on: the rules classify from them,
the report shows them, and an LLM's claims are checked against them. So
they come only from git data, never from guesses, and they are cheap: the
Python API of a blob is parsed once per blob SHA however many commits touch
it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from repoherald.analysis.facts import deps, hostpins, opschema
from repoherald.analysis.facts.linediff import diff_lines
from repoherald.analysis.pyapi import api as pyapi
from repoherald.analysis.pyapi.blobs import BlobApis, BlobReader
from repoherald.analysis.surface import envvars
from repoherald.analysis.surface.flags import FlagReader
from repoherald.models import (
    ApiChange,
    Commit,
    DependencyChange,
    Facts,
    FileChange,
    FileStatus,
    HostBump,
)

# -- title conventions -------------------------------------------------------

_BRACKETS = re.compile(r"^\s*((?:(?:\[[^\[\]]{1,60}\]|【[^【】]{1,60}】)\s*)+)")
_BRACKET_ONE = re.compile(r"\[([^\[\]]{1,60})\]|【([^【】]{1,60})】")
_GITEE_MR = re.compile(r"^\s*!\d{1,9}\s+")
"""``!1349 support internlm``: Gitee puts the merge request's number first."""
_GITEE_MERGE = re.compile(r"\s+Merge pull request !\d{1,9} from \S.*$")
"""``… Merge pull request !1420 from user/branch`` run into the title of a Gitee merge."""
_CONVENTIONAL = re.compile(
    r"^\s*(?P<type>[A-Za-z]+)(?:\((?P<scope>[^()]{0,60})\))?(?P<bang>!)?:\s+\S"
)
_CONVENTIONAL_TYPES = {
    "feat",
    "feature",
    "fix",
    "bugfix",
    "hotfix",
    "perf",
    "refactor",
    "docs",
    "doc",
    "test",
    "tests",
    "ci",
    "build",
    "chore",
    "style",
    "revert",
    "deps",
    "security",
}
_PR_SUFFIX = re.compile(r"\(#(\d{1,9})\)\s*$")
_PR_ANY = re.compile(r"\(#(\d{1,9})\)")
_PR_MERGE = re.compile(r"^Merge pull request #(\d{1,9})\b")
_REVERT_TITLE = re.compile(r'^\s*Revert\s*[:"“]', re.IGNORECASE)
_REVERT_BODY = re.compile(r"This reverts commit ([0-9a-f]{7,64})", re.IGNORECASE)
_CO_AUTHOR = re.compile(r"^\s*Co-authored-by:\s*(.+?)\s*(?:<[^>]*>)?\s*$", re.IGNORECASE | re.M)
_BREAKING_FOOTER = re.compile(r"^BREAKING[ -]CHANGE:", re.M)


@dataclass(frozen=True, slots=True)
class TitleInfo:
    tags: tuple[str, ...]
    conventional_type: str | None
    conventional_scope: str | None
    breaking: bool
    pr_number: int | None
    text: str
    """The title with its tags, conventional prefix and PR suffix removed."""


def parse_title(title: str) -> TitleInfo:
    """Read the conventions real repositories put in a title.

    vLLM style ``[Bugfix][Kernel] Fix … (#123)``, Conventional Commits
    ``fix(scope)!: …``, Gitee's ``!123 【BugFix】…`` and plain messages all
    end up as lower-cased tags.
    """
    rest = _GITEE_MERGE.sub("", _GITEE_MR.sub("", title, count=1), count=1)
    tags: list[str] = []
    m = _BRACKETS.match(rest)
    if m:
        found = (a or b for a, b in _BRACKET_ONE.findall(m.group(1)))
        tags = [t.strip().lower() for t in found if t.strip()]
        rest = rest[m.end() :]
    ctype = scope = None
    breaking = False
    cm = _CONVENTIONAL.match(rest)
    if cm and cm.group("type").lower() in _CONVENTIONAL_TYPES:
        ctype = cm.group("type").lower()
        scope = (cm.group("scope") or "").strip().lower() or None
        breaking = bool(cm.group("bang"))
        rest = rest[rest.index(":") + 1 :]
        tags.append(ctype)
    pr = None
    pm = _PR_SUFFIX.search(rest) or _PR_MERGE.match(title)
    if pm:
        pr = int(pm.group(1))
        if pm.re is _PR_SUFFIX:
            rest = rest[: pm.start()]
    else:
        anywhere = _PR_ANY.findall(rest)
        if anywhere:
            pr = int(anywhere[-1])
    return TitleInfo(
        tags=tuple(dict.fromkeys(tags)),
        conventional_type=ctype,
        conventional_scope=scope,
        breaking=breaking,
        pr_number=pr,
        text=rest.strip() or title.strip(),
    )


# -- file kinds --------------------------------------------------------------

_SOURCE_EXT = {
    ".py",
    ".pyx",
    ".pxd",
    ".pyi",
    ".c",
    ".cc",
    ".cpp",
    ".cxx",
    ".h",
    ".hh",
    ".hpp",
    ".cu",
    ".cuh",
    ".rs",
    ".go",
    ".java",
    ".kt",
    ".scala",
    ".js",
    ".jsx",
    ".ts",
    ".tsx",
    ".mjs",
    ".rb",
    ".php",
    ".swift",
    ".m",
    ".mm",
    ".cs",
    ".lua",
    ".jl",
    ".sh",
    ".bash",
    ".zig",
    ".proto",
    ".sql",
    ".metal",
    ".triton",
    ".s",
    ".asm",
    ".f90",
    ".r",
}
_DOC_EXT = {".md", ".rst", ".adoc", ".txt", ".ipynb", ".tex", ".html", ".css"}
_DOC_DIRS = {"docs", "doc", "documentation", "examples", "example", "tutorials", "website"}
_DOC_NAMES = {
    "readme",
    "changelog",
    "changes",
    "license",
    "notice",
    "authors",
    "contributing",
    "code_of_conduct",
    "security",
    "mkdocs.yml",
    ".readthedocs.yaml",
    ".readthedocs.yml",
}
_TEST_DIRS = {
    "tests", "test", "testing", "unittests", "unit_tests", "e2e", "__tests__", "spec", "autotest",
    "autotests",
}  # fmt: skip
_BENCH_DIRS = {"benchmarks", "benchmark", "bench", "benches"}
_CI_DIRS = {".github", ".buildkite", ".circleci", ".gitlab", ".ci", ".azure-pipelines", ".jenkins"}
_CI_NAMES = {
    ".gitlab-ci.yml",
    "jenkinsfile",
    ".travis.yml",
    "azure-pipelines.yml",
    ".pre-commit-config.yaml",
    "codecov.yml",
    ".codecov.yml",
    "tox.ini",
    "noxfile.py",
    ".mergify.yml",
    "renovate.json",
    ".coveragerc",
    "format.sh",
}
_BUILD_NAMES = {
    "cmakelists.txt",
    "makefile",
    "setup.py",
    "setup.cfg",
    "manifest.in",
    "build.sh",
    "meson.build",
    "bazel",
    "build",
    "build.bazel",
    "workspace",
    "justfile",
    "build.rs",
    ".dockerignore",
}
_BUILD_DIRS = {"cmake", "docker", "build_tools", "packaging"}

KINDS = ("source", "tests", "docs", "ci", "build", "deps", "bench", "other")


@lru_cache(maxsize=65536)
def file_kind(path: str) -> str:
    """One of :data:`KINDS`, from the path alone.

    Order matters: a manifest under ``tests/`` is still a manifest, a
    workflow is CI wherever it lives, a Python file under ``tests/`` is a test.
    """
    p = PurePosixPath(path)
    name = p.name.lower()
    parts = [s.lower() for s in p.parts[:-1]]
    suffix = p.suffix.lower()
    if deps.is_manifest(path):
        return "deps"
    if (parts and parts[0] in _CI_DIRS) or name in _CI_NAMES:
        return "ci"
    if (
        any(s in _TEST_DIRS for s in parts)
        or name.startswith("test_")
        or name == "conftest.py"
        or re.search(r"(_test|_tests|\.test|\.spec)\.[a-z]+$", name)
    ):
        return "tests"
    if any(s in _BENCH_DIRS for s in parts) or name.startswith("bench_"):
        return "bench"
    stem = name.split(".")[0]
    if (
        (parts and parts[0] in _DOC_DIRS)
        or name in _DOC_NAMES
        or stem in _DOC_NAMES
        or suffix in (".md", ".rst", ".adoc")
        or (suffix in _DOC_EXT and suffix != ".txt")
    ):
        return "docs"
    if (
        name in _BUILD_NAMES
        or name.startswith("dockerfile")
        or name.endswith((".dockerfile", ".cmake"))
        or (parts and parts[0] in _BUILD_DIRS)
    ):
        return "build"
    if suffix in _SOURCE_EXT:
        return "source"
    return "other"


# -- areas -------------------------------------------------------------------

_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """Compile a path glob: ``**`` spans directories, ``*`` and ``?`` do not."""
    cached = _GLOB_CACHE.get(glob)
    if cached is not None:
        return cached
    out: list[str] = []
    i = 0
    g = glob.strip().lstrip("/")
    while i < len(g):
        ch = g[i]
        if g.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif g.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(ch))
            i += 1
    pattern = "".join(out)
    if g.endswith("/"):
        pattern += ".*"
    compiled = re.compile(pattern + r"(?:/.*)?\Z")
    _GLOB_CACHE[glob] = compiled
    return compiled


_CONTAINER_DIRS = {"src", "lib", "pkg", "packages", "crates", "python", "libs", "modules"}


@dataclass(frozen=True)
class AreaRules:
    """How paths map to areas (subsystems) for one repository.

    With explicit globs the first matching area wins. Otherwise the default
    is the top-level directory, one level deeper inside the project's own
    package directory (``vllm/v1``) or a container such as ``src/``, because
    "vllm" alone would tell a vLLM reader nothing.
    """

    globs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    package_names: frozenset[str] = field(default_factory=frozenset)

    def area_of(self, path: str) -> str:
        for name, patterns in self.globs:
            for pat in patterns:
                if glob_to_regex(pat).match(path):
                    return name
        parts = path.split("/")
        if len(parts) == 1:
            return "(root)"
        top = parts[0]
        if (top.lower() in _CONTAINER_DIRS or top.lower() in self.package_names) and len(parts) > 2:
            return f"{top}/{parts[1]}"
        return top


def package_names_for(repo_name: str) -> frozenset[str]:
    """Likely package directory names for ``owner/name`` (``vllm-ascend`` -> ``vllm_ascend``)."""
    base = repo_name.rsplit("/", 1)[-1].lower()
    return frozenset({base, base.replace("-", "_"), base.replace("-", ""), base.split("-")[0]})


# -- the facts ---------------------------------------------------------------


class FactsExtractor:
    """Computes :class:`Facts` for commits of one repository.

    ``hosts`` are the frameworks the repository plugs into
    (:func:`repoherald.analysis.facts.hostpins.host_names_for`), whose pin moves
    are looked for in manifests, CI and build files.

    Holds the parsed Python APIs of the blobs it has seen
    (:class:`~repoherald.analysis.pyapi.blobs.BlobApis`), so the file a commit
    modifies is not parsed again as the next commit's "before", and a new
    version is parsed only where its edit could change the public surface.
    ``incremental=False`` parses every blob whole, the reference the tests
    compare against.
    """

    def __init__(
        self,
        areas: AreaRules,
        read_blob: BlobReader,
        *,
        incremental: bool = True,
        hosts: frozenset[str] = frozenset(),
    ) -> None:
        self._areas = areas
        self._hosts = hosts
        self._home_words = tuple(
            sorted({w for name in areas.package_names for w in re.split(r"[-_.]+", name) if w})
        )
        self._read_blob = read_blob
        self.apis = BlobApis(read_blob, incremental=incremental)
        self._flags = FlagReader(self.apis.source)

    def _text(self, oid: str) -> str | None:
        data = self._read_blob(oid) if oid else None
        if data is None or b"\0" in data:
            return None
        return data.decode("utf-8", "replace")

    def _apis(self, f: FileChange) -> tuple[pyapi.PublicApi | None, pyapi.PublicApi | None]:
        if f.old_blob and f.new_blob:
            return self.apis.pair(f.old_blob, f.new_blob)
        old = self.apis.api(f.old_blob) if f.old_blob else None
        new = self.apis.api(f.new_blob) if f.new_blob else None
        return old, new

    def _version_only(self, files: Sequence[FileChange]) -> bool:
        """Every changed line outside docs sets a version string (``__version__ = "0.6.4"``).

        "Release 0.50.1" and "Bump dev version" change a version in
        ``__init__.py`` and ``setup.py``, which are code and a manifest by
        their paths; their lines say that nothing else moved. Only small
        commits are read: a release that also changes code is no bump.
        """
        code = [f for f in files if file_kind(f.path) != "docs"]
        if not code or len(code) > _VERSION_FILES:
            return False
        if any(f.added != f.deleted or f.added > _VERSION_LINES for f in code):
            return False  # a version line is replaced, not added or dropped
        for f in code:
            if f.binary or not (f.old_blob and f.new_blob) or f.status is not FileStatus.MODIFIED:
                return False
            if deps.is_lockfile(f.path):
                return False  # ``version = "1.1"`` there is a dependency's version
            old, new = self.apis.source(f.old_blob), self.apis.source(f.new_blob)
            if old is None or new is None:
                return False
            before, after = old.splitlines(), new.splitlines()
            for a0, a1, b0, b1 in diff_lines(before, after):
                changed = [*before[a0:a1], *after[b0:b1]]
                if not all(_VERSION_LINE.match(line) or not line.strip() for line in changed):
                    return False
        return True

    def _env_changes(self, files: Sequence[FileChange]) -> envvars.EnvChanges:
        """Environment variables removed or re-defaulted in the commit's Python sources."""
        old: dict[str, str] = {}
        new: dict[str, str] = {}
        for f in files:
            if not (f.old_blob and f.new_blob) or not f.path.endswith(".py"):
                continue
            if file_kind(f.path) != "source" or f.binary:
                continue
            before = self.apis.source(f.old_blob)
            if before is None or not (b"environ" in before or b"getenv" in before):
                continue
            after = self.apis.source(f.new_blob)
            if after is not None:
                old[f.path] = before.decode("utf-8", "replace")
                new[f.path] = after.decode("utf-8", "replace")
        return envvars.changes(old, new) if old else envvars.EnvChanges()

    def extract(self, commit: Commit, files: Sequence[FileChange]) -> Facts:
        """Facts for one commit from its metadata and first-parent file changes."""
        info = parse_title(commit.title)
        kinds = Counter(file_kind(f.path) for f in files)
        file_areas = tuple(self._areas.area_of(f.path) for f in files)
        areas = Counter(file_areas)
        api: list[ApiChange] = []
        dep_changes: list[DependencyChange] = []
        unparsed: list[str] = []
        for f in files:
            kind = file_kind(f.path)
            if f.path.endswith((".py", ".pyi")) and kind == "source" and not f.is_submodule:
                if f.binary or f.is_symlink:
                    self.apis.written(f.path, None, f.old_path)
                    unparsed.append(f.path)
                    continue
                old, new = self._apis(f)
                self.apis.written(f.path, f.new_blob or None, f.old_path)
                if (f.old_blob and old is None) or (f.new_blob and new is None):
                    unparsed.append(f.path)
                    continue
                if f.status is FileStatus.RENAMED and f.old_path:
                    old_mod = f.old_path
                    if old is not None and new is not None and old_mod != f.path:
                        api.extend(pyapi.diff_api(old_mod, old, None))
                        api.extend(pyapi.diff_api(f.path, None, new))
                        continue
                api.extend(pyapi.diff_api(f.path, old, new))
            elif kind == "deps" and not f.binary:
                old_t = self._text(f.old_blob) if f.old_blob else None
                new_t = self._text(f.new_blob) if f.new_blob else None
                dep_changes.extend(deps.dependency_changes(f.path, old_t, new_t))
        env = self._env_changes(files)
        ops = opschema.op_changes(files, self._read_blob, _ships)
        flags = self._flags.changes(files, _ships)
        version_only = self._version_only(files)
        host_bumps: list[HostBump] = []
        if self._hosts:
            host_bumps = hostpins.dependency_bumps(self._hosts, dep_changes)
            host_bumps += hostpins.file_bumps(self._hosts, files, file_kind, self._text)
        body = commit.body
        revert_m = _REVERT_BODY.search(body)
        is_revert = bool(_REVERT_TITLE.match(commit.title)) or "revert" in info.tags
        ordered_areas = tuple(a for a, _ in sorted(areas.items(), key=lambda kv: (-kv[1], kv[0])))
        return Facts(
            files=tuple(files),
            added=sum(f.added for f in files),
            deleted=sum(f.deleted for f in files),
            areas=ordered_areas,
            file_areas=file_areas,
            pin_moves=hostpins.pin_file_moves(files, self._text),
            pr_number=info.pr_number,
            tags=info.tags,
            conventional_type=info.conventional_type,
            conventional_scope=info.conventional_scope,
            breaking_marker=info.breaking or bool(_BREAKING_FOOTER.search(body)),
            is_revert=is_revert,
            reverted_sha=revert_m.group(1) if revert_m else None,
            co_authors=tuple(
                dict.fromkeys(n.strip() for n in _CO_AUTHOR.findall(body) if n.strip())
            ),
            kinds={k: kinds[k] for k in KINDS if kinds[k]},
            api_changes=tuple(api),
            dependency_changes=tuple(dep_changes),
            is_merge=len(commit.parents) > 1,
            unparsed=tuple(unparsed),
            host_bumps=tuple(host_bumps),
            env_removed=env.removed,
            env_redefaulted=env.redefaulted,
            home_words=self._home_words,
            op_changes=tuple(ops),
            flag_changes=tuple(flags),
            version_only=version_only,
        )


_VERSION_FILES = 6
_VERSION_LINES = 3
"""Lines replaced per file above which a commit is more than a version bump."""
_VERSION_LINE = re.compile(
    rb"""^\s*(?:(?:__version__|_?version(?:_str)?|VERSION|release|"version")\s*[:=]\s*)?"""
    rb"""['"]?v?\d+(?:\.\d+)+[\w.+-]*['"]?\s*,?\s*(?:#.*)?$"""
)
"""A line that only sets a version: ``__version__ = "0.6.4"``, ``version="2.0",``, ``0.50.1``."""


def _ships(path: str) -> bool:
    """A source file outside hidden and ``_``-prefixed directories: what users build."""
    parts = PurePosixPath(path).parts[:-1]
    return file_kind(path) == "source" and not any(p.startswith(("_", ".")) for p in parts)
