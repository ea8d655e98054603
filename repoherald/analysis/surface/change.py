"""The changed surface of one upstream commit: what code built on top of it can trip over.

A downstream project breaks on a handful of kinds of upstream change: a name
it imports is removed, renamed or moved; a module it imports is renamed; a
function it calls or a method it overrides changes its parameters; an
environment variable it sets stops being read; a command-line flag or a
config field it passes disappears or changes its default. This module
computes exactly those, as :class:`SurfaceChange` records, from the before and
after text of the commit's changed Python files. It is pure: the caller
supplies the blobs (:class:`FileVersions`), nothing here reads git.

Precision comes first: a change is only reported when both versions parse
(otherwise the file is reported once as ``unparsed``), and a removal that
might not be one (a method a base class outside the commit may still provide,
a name a module-level ``__getattr__`` may still serve, an environment read that
may survive in an unchanged file) is marked ``certain=False``, so the matcher
can say "changes" instead of "breaks".

The work is split: :mod:`surface_extract` reads one module,
:mod:`surface_compare` compares names, signatures, classes and fields,
:mod:`surface_settings` environment variables and flags.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial

from repoherald.analysis.pyapi.parse import PARSE_ERRORS, parse_quietly
from repoherald.analysis.surface import extract as sx
from repoherald.analysis.surface.compare import (
    ENV_DEFAULT,
    ENV_REMOVED,
    FIELD_DEFAULT,
    FIELD_REMOVED,
    FIELD_RENAMED,
    FLAG_DEFAULT,
    FLAG_REMOVED,
    FLAG_RENAMED,
    KINDS,
    METHOD_REMOVED,
    MODULE_REMOVED,
    MODULE_RENAMED,
    MOVED,
    REMOVED,
    RENAMED,
    SIGNATURE,
    UNPARSED,
    CommitFiles,
    FileVersions,
    Interest,
    SurfaceChange,
    is_python,
)
from repoherald.analysis.surface.extract import is_public_module, module_name
from repoherald.analysis.surface.settings import env_changes, flag_changes
from repoherald.models import FileChange, FileStatus

__all__ = [
    "ENV_DEFAULT",
    "ENV_REMOVED",
    "FIELD_DEFAULT",
    "FIELD_REMOVED",
    "FIELD_RENAMED",
    "FLAG_DEFAULT",
    "FLAG_REMOVED",
    "FLAG_RENAMED",
    "KINDS",
    "MAX_BYTES",
    "METHOD_REMOVED",
    "MODULE_REMOVED",
    "MODULE_RENAMED",
    "MOVED",
    "REMOVED",
    "RENAMED",
    "SIGNATURE",
    "UNPARSED",
    "FileVersions",
    "Interest",
    "SurfaceChange",
    "SurfaceDiffer",
    "is_public_module",
    "module_name",
    "reexports",
    "spellings",
    "surface_changes",
    "versions_from_changes",
]

MAX_BYTES = 2_000_000
"""Larger blobs are generated code; they are reported as ``unparsed``."""


def surface_changes(
    files: Sequence[FileVersions], interest: Interest | None = None
) -> list[SurfaceChange]:
    """The changed surface of one commit (see :meth:`SurfaceDiffer.changes`)."""
    return SurfaceDiffer().changes(files, interest)


class SurfaceDiffer:
    """Computes :class:`SurfaceChange` lists, caching module extracts by blob id and path.

    Use one instance per upstream repository and run: the file one commit
    modifies is the next commit's "before", so its extract is reused.
    """

    def __init__(self, cache_size: int = 512) -> None:
        self._cache: OrderedDict[tuple[str, str], sx.ModuleSurface | None] = OrderedDict()
        self._cache_size = cache_size

    def changes(
        self, files: Sequence[FileVersions], interest: Interest | None = None
    ) -> list[SurfaceChange]:
        """Every surface change of one commit, in a stable order.

        With ``interest`` only the modules a downstream refers to are compared
        (and the files that read the environment or define flags, when it
        mentions any); other files are parsed only to find where a name went.
        Without it, every public module of the commit is compared.
        """
        commit = CommitFiles(self.extract, [f for f in files if is_python(f)])
        out: list[SurfaceChange] = []
        for fv in commit.files:
            if fv.old_path is not None and commit.wanted(fv, interest):
                out.extend(commit.compare_module(fv))
        out.extend(env_changes(commit, interest))
        out.extend(flag_changes(commit, interest))
        return sorted(
            set(out), key=lambda c: (c.module, c.name, c.kind, c.path, c.line, c.old, c.new)
        )

    def extract(
        self, load: Callable[[], bytes | str | None], path: str, blob_id: str
    ) -> sx.ModuleSurface | None:
        """The surface of one blob at ``path``; None when unreadable, too large or unparsable.

        ``load`` is only called when the extract is not cached by ``blob_id``.
        """
        key = (blob_id, path)
        if blob_id and key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        data = load()
        result = _extract(data, path) if data is not None else None
        if blob_id:
            self._cache[key] = result
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return result


def versions_from_changes(
    changes: Iterable[FileChange], read_blob: Callable[[str], bytes | None]
) -> list[FileVersions]:
    """:class:`FileVersions` for the Python files of a commit, read lazily through ``read_blob``.

    Symlinks and submodules are not Python source and are left out. A copy
    leaves its source in place, so only its new side counts. A blob
    ``read_blob`` cannot return (missing, oversized) keeps its path with
    ``None`` data, which reports the file as ``unparsed`` instead of empty.
    """
    out: list[FileVersions] = []
    for ch in changes:
        if ch.is_symlink or ch.is_submodule:
            continue
        old_path = ch.old_path or ch.path
        if not (old_path.endswith(".py") or ch.path.endswith(".py")):
            continue
        has_old = ch.status not in (FileStatus.ADDED, FileStatus.COPIED) and _oid(ch.old_blob)
        has_new = ch.status != FileStatus.DELETED and _oid(ch.new_blob)
        out.append(
            FileVersions(
                old_path if has_old else None,
                ch.path if has_new else None,
                partial(read_blob, ch.old_blob) if has_old else None,
                partial(read_blob, ch.new_blob) if has_new else None,
                ch.old_blob if has_old else "",
                ch.new_blob if has_new else "",
            )
        )
    return out


def reexports(modules: Iterable[tuple[str, bytes | str]]) -> dict[str, str]:
    """Re-exported name -> where it is defined, from ``(path, source)`` of upstream modules.

    ``vllm/__init__.py`` doing ``from vllm.entrypoints.llm import LLM`` gives
    ``{"vllm.LLM": "vllm.entrypoints.llm.LLM"}``. Feed it the package
    ``__init__.py`` files of the upstream tree (that is where re-exports live)
    and pass the result to :func:`repoherald.analysis.downstream.impact.match`, so a
    downstream that imports the short path meets changes reported where the
    name is defined.
    """
    out: dict[str, str] = {}
    for path, data in modules:
        surf = _extract(data, path) if is_public_module(path) else None
        if surf is None:
            continue
        for name, entry in surf.names.items():
            if entry.kind == sx.IMPORT and not name.startswith("_"):
                out[f"{surf.module}.{name}"] = entry.target
    return dict(sorted(out.items()))


def spellings(target: str, aliases: Mapping[str, str], hops: int = 3) -> list[str]:
    """``target`` as written, then as defined, following re-export ``aliases``.

    ``vllm.LLM.generate`` with ``{"vllm.LLM": "vllm.entrypoints.llm.LLM"}``
    gives ``["vllm.LLM.generate", "vllm.entrypoints.llm.LLM.generate"]``: the
    longest aliased prefix is replaced, up to ``hops`` times.
    """
    out = [target]
    for _ in range(hops):
        parts = out[-1].split(".")
        nxt = out[-1]
        for i in range(len(parts), 0, -1):
            hit = aliases.get(".".join(parts[:i]))
            if hit is not None:
                nxt = ".".join([hit, *parts[i:]])
                break
        if nxt in out:
            break
        out.append(nxt)
    return out


def _oid(oid: str) -> bool:
    return bool(oid.strip("0"))


def _extract(data: bytes | str, path: str) -> sx.ModuleSurface | None:
    module = module_name(path)
    if module is None or len(data) > MAX_BYTES:
        return None
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    env = any(m in raw for m in sx.ENV_MARKERS)
    flags = any(m in raw for m in sx.FLAG_MARKERS)
    try:
        tree = parse_quietly(data)
        return sx.extract(tree, module, path, path.endswith("__init__.py"), env=env, flags=flags)
    except PARSE_ERRORS:
        return None
