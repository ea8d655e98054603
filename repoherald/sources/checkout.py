"""Read a downstream checkout (the reader's own code) into a :class:`DownstreamIndex`.

This is the I/O half of the downstream index: it walks the directory, reads
the Python files and hands each one to the pure
:func:`~repoherald.analysis.downstream.visit.index_source`. It also computes
:func:`index_key`, the cache key the store keeps the index under, so a run
re-indexes only when the checkout changed.

The walk is defensive because the directory is whatever the reader points
at: ``os.scandir`` without following directory symlinks (no loops, no
escaping the tree), virtualenvs and dot-directories left out and listed,
files over :data:`MAX_BYTES` counted as not checked instead of parsed, and
a name that is not UTF-8 counted as not checked instead of taking the
index down. Files that never name the upstream are kept in memory up to
:data:`PENDING_BYTES` in all; beyond that they are let go once read and
read again only if a later pass needs them, so 1,500 generated files of
2 MB cost that budget, not 3 GB.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from repoherald.analysis.downstream import index as ds
from repoherald.analysis.downstream.visit import MAX_BYTES, env_prefixes, index_source
from repoherald.errors import SourceError
from repoherald.sources.git.naming import identity_from_url

PENDING_BYTES = 32 << 20
"""Bytes of not-yet-parsed files kept for the subclass passes; the rest are read again."""
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
_SKIP_TOP = frozenset({"build", "dist"})
_GIT_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.quotePath=false")


@dataclass(slots=True)
class _Walk:
    root: Path
    files: list[tuple[str, os.DirEntry[str]]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    not_checked: list[ds.NotChecked] = field(default_factory=list)


def index_checkout(root: str | Path, packages: Sequence[str]) -> ds.DownstreamIndex:
    """Index every Python file under ``root`` for its uses of ``packages``.

    Raises :class:`~repoherald.errors.SourceError` when ``root`` is not a
    directory; everything else that goes wrong is a not-checked entry.
    """
    walk = _walk(_directory(root))
    pkgs = tuple(packages)
    parts: list[ds.FileIndex] = []
    pending: list[tuple[str, os.DirEntry[str], bytes | None]] = []
    held = 0
    triggers = [p.encode() for p in pkgs] + [e.encode() for e in env_prefixes(pkgs)]
    for rel, entry in walk.files:
        data = _read(rel, entry, parts)
        if data is None:
            continue
        if any(t in data for t in triggers) or len(data) > MAX_BYTES:
            parts.append(index_source(rel, data, pkgs))
        elif held + len(data) <= PENDING_BYTES:
            held += len(data)
            pending.append((rel, entry, data))
        else:
            pending.append((rel, entry, None))  # over the budget: read again if needed
    # Files that never name the upstream may still subclass a downstream class
    # that does; parse those too, until no new such class appears.
    seen: set[str] = set()
    while pending:
        names = ds.descendant_names((c for p in parts for c in p.classes), pkgs) - seen
        if not names:
            break
        seen |= names
        wanted = [n.encode() for n in names]
        still: list[tuple[str, os.DirEntry[str], bytes | None]] = []
        for rel, entry, kept in pending:
            data = kept if kept is not None else _read(rel, entry, parts)
            if data is not None and any(n in data for n in wanted):
                parts.append(index_source(rel, data, pkgs))
            elif data is not None:
                still.append((rel, entry, kept))
        pending = still
    return ds.build_index(
        str(walk.root), pkgs, parts, walk.excluded, walk.not_checked, prefiltered=len(pending)
    )


def _read(rel: str, entry: os.DirEntry[str], parts: list[ds.FileIndex]) -> bytes | None:
    """A file's bytes (at most one past the size limit); an unreadable one is recorded."""
    try:
        with open(entry.path, "rb") as fh:
            return fh.read(MAX_BYTES + 1)
    except OSError as exc:
        part = ds.FileIndex(rel)
        part.not_checked.append(ds.NotChecked(rel, 0, ds.UNREADABLE, type(exc).__name__))
        parts.append(part)
        return None


def index_key(root: str | Path, packages: Sequence[str]) -> str:
    """A cache key that changes whenever the indexed content may have changed.

    In a git work tree: the HEAD commit plus a hash of ``git status`` and of the
    size and modification time of every path it lists (the status line of a
    file edited twice is the same, its mtime is not). Elsewhere: a hash of the
    relative path, size and mtime of every Python file the index would read.
    The index version, the upstream package names and the directory itself are
    part of the key.
    """
    path = _directory(root)
    digest = hashlib.sha256(f"{ds.INDEX_VERSION}\0{','.join(packages)}\0".encode())
    # The checkout's own location: two directories of one clean work tree (the
    # repository and a subdirectory of it) share HEAD and status, not an index.
    digest.update(os.fsencode(path) + b"\0")
    head = _git(path, "rev-parse", "--verify", "HEAD")
    status = _git(path, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    top = _git(path, "rev-parse", "--show-toplevel")
    if head is not None and status is not None and top is not None:
        digest.update(status)
        base = Path(os.fsdecode(top.strip()))
        for line in status.split(b"\0"):
            if len(line) > 3:
                digest.update(_stamp(base / os.fsdecode(line[3:])))
        return f"git:{head.decode().strip()}:{digest.hexdigest()[:24]}"
    walk = _walk(path)
    for rel, item in walk.files:
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + _stamp(Path(item.path)))
    digest.update("\0".join(walk.excluded).encode("utf-8", "surrogateescape"))
    return f"tree:{digest.hexdigest()[:40]}"


def file_url_base(root: str | Path, web_url: str | None) -> str | None:
    """Where ``file:line`` links into the checkout point: ``<web>/blob/<HEAD>/<subdir>``.

    ``web_url`` is the project's page; without it, the checkout's origin gives
    one when it is on a known host. Links name the HEAD commit, not a branch,
    so an archived report keeps pointing at the lines it talks about (a HEAD
    that was never pushed gives dead links; a non-git directory links to
    ``HEAD``). None when no web page is known.
    """
    path = _directory(root)
    if web_url is None:
        origin = _git(path, "config", "--get", "remote.origin.url")
        text = origin.decode("utf-8", "replace").strip() if origin else ""
        web_url = identity_from_url(text).web_url if text else None
    if web_url is None:
        return None
    head = _git(path, "rev-parse", "--verify", "HEAD")
    top = _git(path, "rev-parse", "--show-toplevel")
    ref = head.decode().strip() if head else "HEAD"
    sub = ""
    if top is not None:
        rel = os.path.relpath(path, Path(os.fsdecode(top.strip())).resolve())
        sub = "" if rel == "." else "/" + quote(rel.replace(os.sep, "/"))
    return f"{web_url.rstrip('/')}/blob/{ref}{sub}"


def _directory(root: str | Path) -> Path:
    path = Path(root).expanduser()
    problem = not_a_directory(path)
    if problem:
        raise SourceError(f"downstream path {root} {problem}")
    return path.resolve()


def not_a_directory(path: Path) -> str:
    """Why ``path`` cannot be indexed, as the end of a sentence with what to do ("" when it can).

    A symbolic link loop and a directory that cannot be listed are said as
    such: not "does not exist", and never "no Python files" with success.
    """
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop: point it at the checkout itself"
        if os.path.lexists(path) and exc.errno != errno.ENOENT:
            return f"cannot be read ({exc.strerror}): check its permissions"
        if os.path.lexists(path):
            return "is a dangling symbolic link: point it at the checkout itself"
        return "does not exist: fix `downstream` in the config"
    if not path.is_dir():
        return "is not a directory: point it at a checkout"
    try:
        with os.scandir(path):
            pass
    except OSError as exc:
        return f"cannot be read ({exc.strerror}): check its permissions"
    return ""


def _stamp(path: Path) -> bytes:
    try:
        st = path.lstat()
    except OSError:
        return b"-\0"
    return f"{st.st_size}:{st.st_mtime_ns}\0".encode()


def _git(cwd: Path, *args: str) -> bytes | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.run(
            ["git", *_GIT_CONFIG, "-C", str(cwd), *args],
            capture_output=True,
            env=env,
            check=False,
        )
    except OSError:
        return None  # no git on this machine: fall back to file stamps
    return proc.stdout if proc.returncode == 0 else None


def _walk(root: Path) -> _Walk:
    """Python files under ``root`` in a stable order, plus what was left out and why."""
    walk = _Walk(root)
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        directory, rel = stack.pop()
        for entry in _entries(directory, rel, walk):
            child = f"{rel}/{entry.name}" if rel else entry.name
            kind = _kind(entry)
            if not _utf8(entry.name):
                # Its name could not be stored or shown; it is named with U+FFFD instead.
                if kind == "dir" or (kind == "file" and entry.name.endswith(".py")):
                    shown = child.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                    walk.not_checked.append(ds.NotChecked(shown, 0, ds.BAD_NAME, "not UTF-8"))
                continue
            if kind == "dir":
                if _excluded(entry, rel):
                    walk.excluded.append(child)
                else:
                    stack.append((Path(entry.path), child))
            elif kind == "link" and entry.name.endswith(".py"):
                walk.not_checked.append(ds.NotChecked(child, 0, ds.SYMLINK, "symbolic link"))
            elif kind == "link":
                if _points_to_dir(entry):
                    walk.excluded.append(child)
            elif kind == "file" and entry.name.endswith(".py"):
                walk.files.append((child, entry))
    walk.files.sort(key=lambda item: item[0])
    return walk


def _utf8(name: str) -> bool:
    """Whether a name ``os.scandir`` decoded is really UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _entries(directory: Path, rel: str, walk: _Walk) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name, reverse=True)
    except OSError as exc:
        walk.not_checked.append(ds.NotChecked(rel or ".", 0, ds.UNREADABLE, type(exc).__name__))
        return iter(())
    return iter(entries)


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        return "other"
    return "other"


def _points_to_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return stat.S_ISDIR(os.stat(entry.path).st_mode)
    except OSError:
        return True  # a dangling or looping link: listed, never entered


def _excluded(entry: os.DirEntry[str], parent: str) -> bool:
    """Directories that are not the project's code: dot-dirs, caches, virtualenvs, build output."""
    name = entry.name
    if name.startswith(".") or name in _SKIP_DIRS or (not parent and name in _SKIP_TOP):
        return True
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))
