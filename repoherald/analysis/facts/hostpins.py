"""The host framework a plugin is built on, and the commits that move its pin.

A plugin names itself after what it plugs into (``vllm-gaudi``, ``vllm-spyre``,
``torch-npu``), and its users care about one dependency above all: which
version of that host it now works with. Moving that pin is how the plugin
follows the host, and the rubric rates it high whatever the commit's title
says ("chore: add support for vllm v0.19.0").

The pin lives in different places per project, so three kinds of evidence
count, all read from the diff:

- the host's version spec changes in a runtime dependency manifest
  (``pyproject.toml``, ``requirements.txt``, ``setup.py``), not in a test or
  dev extra, and not merely added or dropped;
- a version, tag, commit or ref assignment that names the host changes its
  value in a CI or build file (``VLLM_COMMIT=…`` in a Dockerfile,
  ``vllm_version: [v0.11.0]`` in a workflow matrix, ``pip install vllm==…``);
- a pin file dedicated to the host (``vllm_lkg.version``), which
  :func:`repoherald.analysis.verdict.reach.host_pin` recognises by name alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import PurePosixPath

from repoherald.models import DependencyChange, FileChange, HostBump

PIN_KINDS = ("ci", "build", "other")
"""File kinds that may pin the host: workflows, images, install scripts
(``install.sh``: ``VLLM_VERSION="0.27.1"``); not docs, tests or source. Manifests
are :func:`dependency_bumps`'s: it knows a sub-project's from the plugin's own."""
SCRIPT_SUFFIXES = (".sh", ".bash", ".ps1", ".bat", ".cmd")
"""Install and setup scripts, which the file kinds count as source."""
MAX_PIN_FILE_BYTES = 256_000
"""CI and build files larger than this are not read for pins."""
NOT_HOSTS = frozenset(
    {"python", "py", "the", "awesome", "docs", "my", "open", "llm", "flash",
     "tpu", "gpu", "cpu", "npu", "xpu", "hpu"}
)  # fmt: skip
"""Leading words of repository names that name no package a plugin could be built on
(``tpu-inference`` is built on vLLM and JAX, not on a package called tpu)."""
DEV_SECTION = re.compile(
    r"\((?:[^)]*\b(?:test|tests|dev|lint|docs?|ci|bench\w*|typing|fmt|style))", re.I
)
"""The section suffix of a dependency that users of the package do not install."""


VERSION_LIKE = re.compile(r"^(v?\d+\.\d+[\w.+-]*|[0-9a-f]{7,40})$")
"""A release (``v0.11.0``, ``0.18.1rc1``) or a commit hash: what a pin holds."""


def host_names_for(repo_name: str) -> frozenset[str]:
    """The host a repository's name says it plugs into: ``vllm-gaudi`` -> ``vllm``.

    Only names of two or more parts give a host, and only the first part;
    it counts as evidence only when a dependency or pin of that exact name
    changes, so a name like ``tpu-inference`` gives a host nothing pins.
    """
    base = repo_name.rsplit("/", 1)[-1].lower()
    parts = [p for p in re.split(r"[-_.]", base) if p]
    if len(parts) < 2 or len(parts[0]) < 3 or parts[0] in NOT_HOSTS:
        return frozenset()
    return frozenset({parts[0]})


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.split(" (", 1)[0].strip().lower())


def dependency_bumps(hosts: frozenset[str], changes: Iterable[DependencyChange]) -> list[HostBump]:
    """Hosts whose runtime version spec changed (not added, not removed) in a root manifest."""
    out = []
    for change in changes:
        if _normalise(change.name) not in hosts or DEV_SECTION.search(change.name):
            continue
        if "/" in change.manifest and not change.manifest.startswith("requirements/"):
            continue  # a sub-project's manifest (``plugin_next/pyproject.toml``), not the plugin's
        if change.old is not None and change.new is not None and change.old != change.new:
            out.append(HostBump(_normalise(change.name), change.manifest, change.old, change.new))
    return out


@lru_cache(maxsize=64)
def _pin_pattern(host: str) -> re.Pattern[str]:
    """Assignments of the host's version.

    ``VLLM_COMMIT=abc``, ``vllm_version: [v1]``, ``pip install vllm==1``, and the
    ``ref:`` of a GitHub Actions checkout of ``<owner>/vllm``.
    """
    h = _flexible(host)
    return re.compile(
        rf"(?i)(?<![\w-]){h}[\w.-]*?[_-]?(?:version|tag|commit|ref|sha|rev|branch|lkg|hash)s?"
        rf"[\"']?\s*[:=]\s*(?!\[)[\"']?(?P<a>[^\s\"'#,\]]+)"
        rf"|(?<![\w/.-]){h}\s*(?:==|~=|>=|@)\s*[\"']?(?P<b>[^\s\"',;#\]]+)"
        rf"|repository:\s*[\"']?[\w.-]+/{h}[\"']?[ \t]*\r?\n(?:[^\n]*\n){{0,3}}?"
        rf"[ \t]*ref:\s*[\"']?(?P<c>[^\s\"'#]+)"
    )


def _flexible(host: str) -> str:
    """``flash-attn`` as a pattern that also matches ``FLASH_ATTN`` and ``flash_attn``."""
    return "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", host))


def normalise_host(name: str) -> str:
    """A distribution name as the pins compare it: lower case, one kind of separator."""
    return _normalise(name)


@lru_cache(maxsize=64)
def _list_pattern(host: str) -> re.Pattern[str]:
    """``vllm_version: [abc123, v0.11.0]``: a matrix of versions, read whole."""
    h = _flexible(host)
    return re.compile(
        rf"(?i)(?<![\w-]){h}[\w.-]*?[_-]?(?:version|tag|commit|ref|sha|rev|branch)s?"
        rf"[\"']?\s*:\s*\[(?P<items>[^\]\n]*)\]"
    )


def pin_values(host: str, text: str) -> Counter[str]:
    """Every value the text assigns to the host's version, with its count."""
    if re.split(r"[-_.]", host)[0] not in text.lower():
        return Counter()
    found: Counter[str] = Counter()
    for m in _list_pattern(host).finditer(text):  # a workflow matrix: every entry counts
        for item in m.group("items").split(","):
            value = item.strip().strip("\"'")
            if VERSION_LIKE.match(value):
                found[value] += 1
    for m in _pin_pattern(host).finditer(text):
        value = m.group("a") or m.group("b") or m.group("c")
        if value and VERSION_LIKE.match(value):  # not a variable, a device name or a path
            found[value] += 1
    return found


def file_bumps(
    hosts: frozenset[str],
    files: Iterable[FileChange],
    kind_of: Callable[[str], str],
    read_text: Callable[[str], str | None],
) -> list[HostBump]:
    """Hosts whose pinned version a CI, build or install file of the commit changes."""
    out = []
    for f in files:
        pin_file = kind_of(f.path) in PIN_KINDS or f.path.lower().endswith(SCRIPT_SUFFIXES)
        if not pin_file or not (f.old_blob and f.new_blob):
            continue
        if f.binary or (f.size or 0) > MAX_PIN_FILE_BYTES:
            continue
        old, new = read_text(f.old_blob), read_text(f.new_blob)
        if old is None or new is None:
            continue
        for host in sorted(hosts):
            before, after = pin_values(host, old), pin_values(host, new)
            # Sets, not counts: a new job that pins the same version moves nothing.
            if after and before and set(before) != set(after):
                old_values = ", ".join(sorted(set(before) - set(after)) or sorted(before))
                new_values = ", ".join(sorted(set(after) - set(before)) or sorted(after))
                out.append(HostBump(host, f.path, old_values, new_values))
    return out


FRAMEWORKS = frozenset(
    {"torch", "torch-npu", "torch-xla", "jax", "jaxlib", "mindspore", "paddlepaddle", "tensorflow"}
)
"""Deep-learning frameworks a library is compiled or tested against, whatever its name."""
PIN_FILE = re.compile(
    r"^(?P<name>[a-z][\w-]*?)[._-]?(lkg|commit|pin|ref)?"
    r"(\.version|[._-]version\.txt|[._-]commit\.txt|[._-](lkg|commit|pin)(\.txt)?)$",
    re.I,
)
"""A file that pins one package by name (``vllm_lkg.version``, ``torch-commit.txt``)."""
_TOOLCHAINS = frozenset({"python", "node", "ruby", "go", "golang", "rust", "java", "nvm", "tool"})
_PIN_VALUE = re.compile(r"^[\w.+\-/:@]{1,64}$")
"""What a pin file may hold to be quoted: a commit, a tag or a version, nothing else."""
PIN_FILE_BYTES = 4096


def pin_file_package(path: str) -> str | None:
    """The package a dedicated pin file names; toolchain pins (``.python-version``) are not."""
    name = PurePosixPath(path).name
    hit = PIN_FILE.match(name)
    if not hit or name.startswith("."):
        return None
    package = hit.group("name").strip("_-.")
    return package if package and package.lower() not in _TOOLCHAINS else None


def pin_file_moves(
    files: Iterable[FileChange], text: Callable[[str], str | None]
) -> tuple[tuple[str, str, str], ...]:
    """``(path, old, new)`` of each pin file the commit changes, its first line on each side.

    A value is kept only when it looks like a commit, tag or version: the
    file is written by strangers, and what it says reaches the report and
    the model's facts.
    """
    out = []
    for f in files:
        if pin_file_package(f.path) is None or f.binary:
            continue
        sides = []
        for oid in (f.old_blob, f.new_blob):
            body = text(oid) if oid else None
            first = next(
                (ln.strip() for ln in (body or "")[:PIN_FILE_BYTES].splitlines() if ln.strip()), ""
            )
            sides.append(first if _PIN_VALUE.match(first) else "")
        out.append((f.path, sides[0], sides[1]))
    return tuple(out)


_EXACT = re.compile(r"^(?:\[[^\]]*\])?\s*===?\s*(?P<version>[^,;\s]+)\s*$")


def framework_pins(changes: Iterable[DependencyChange]) -> list[DependencyChange]:
    """Exact pins (``==``) of a deep-learning framework that move to another version.

    A range (``torch>=2.4``) lets users keep their framework; an exact pin
    (``torch==2.13.0+xpu``) makes every install move with it, like a plugin's
    host bump. Test and dev manifests and sections are not what users install.
    """
    out = []
    for c in changes:
        name, _, section = c.name.partition(" (")
        if re.sub(r"[_.]+", "-", name.lower()) not in FRAMEWORKS or DEV_SECTION.search(c.name):
            continue
        if section and "build-system" in section:
            continue  # the build pin moves with the runtime one; the runtime one is named
        if re.search(r"(test|dev|lint|doc|ci|bench)", c.manifest, re.I):
            continue
        old, new = _EXACT.match(c.old or ""), _EXACT.match(c.new or "")
        if old and new and old.group("version") != new.group("version"):
            out.append(c)
    return out
