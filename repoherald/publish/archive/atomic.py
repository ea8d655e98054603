"""Atomic writes of report files: a reader (or a git commit of the archive) never sees half a file.

Each file is written to a hidden temporary sibling, flushed to disk, then
renamed over the target in one step. Three things matter besides atomicity:

- **Permissions follow the umask**, like any other writer: the temporary file
  is created with mode 0666 and the kernel applies the umask (0644 under 022).
  ``mkstemp`` would force 0600, making the archive unreadable for a web
  server or a teammate and turning an existing 0644 report into 0600.
- **A group of files lands in a fixed order.** :func:`write_files` writes
  every temporary file first, then renames them in the order given, so a
  kill leaves each target either old or new, and the targets renamed first
  are never behind the ones renamed later.
- **Synced before the rename**, so a crash never leaves an empty file behind a
  new name. The directory is not synced: a power cut may lose the newest
  rename (the old file stays), which the next run redoes.
- **Temporary files are recognisable** — ``.<name>.repoherald-tmp-<pid>-<random>`` —
  so a later run removes those of a writer that was killed
  (:func:`sweep_stale`) instead of leaving them for ``git add -A``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from collections.abc import Sequence
from pathlib import Path

from repoherald.errors import PublishError

TEMP_MARK = ".repoherald-tmp-"
_TEMP_NAME = re.compile(r"^\..+\.repoherald-tmp-(\d+)-[0-9a-f]+$")
STALE_AFTER = 15 * 60
"""Seconds after which a temporary file is stale even if a process with its pid is alive
(the pid may have been reused): a write takes far less."""


def temp_path(path: Path) -> Path:
    """The hidden sibling ``path`` is first written to."""
    return path.with_name(f".{path.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def is_temp_name(name: str) -> bool:
    """True for the name of a temporary file made by :func:`temp_path`."""
    return _TEMP_NAME.match(name) is not None


def _cannot_write(path: Path, exc: OSError) -> PublishError:
    reason = exc.strerror or type(exc).__name__
    return PublishError(
        f"cannot write {path}: {reason}: make sure the archive directory is writable"
    )


def _write_temp(path: Path, text: str | bytes, sync: bool) -> Path:
    """Write ``text`` (UTF-8) to a new temporary sibling of ``path`` (synced if asked)."""
    tmp = temp_path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o666)  # the umask applies, as for any other writer
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_files(files: Sequence[tuple[Path, str | bytes]], *, sync: bool = True) -> None:
    """Write every ``(path, text)`` (text, or bytes already UTF-8) atomically, renaming them
    in the order given.

    All temporary files are written before the first rename, so a failure
    while writing (full disk, read-only directory) changes no target. If a
    rename fails, the targets already renamed that did not exist before are
    removed again, and no temporary file is left behind. ``sync=False`` skips
    the fsync for files that are cheap to rebuild (the index): the rename is
    still atomic for readers and after a kill.
    """
    temps: list[tuple[Path, Path]] = []
    renamed: list[tuple[Path, bool]] = []
    current = files[0][0] if files else Path()
    try:
        for path, text in files:
            current = path
            path.parent.mkdir(parents=True, exist_ok=True)
            temps.append((_write_temp(path, text, sync), path))
        for tmp, path in temps:
            current = path
            existed = os.path.lexists(path)
            os.replace(tmp, path)
            renamed.append((path, existed))
    except OSError as exc:
        _undo(temps, renamed)
        raise _cannot_write(current, exc) from None
    except BaseException:
        _undo(temps, renamed)
        raise


def _undo(temps: list[tuple[Path, Path]], renamed: list[tuple[Path, bool]]) -> None:
    for tmp, _ in temps:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    for path, existed in renamed:
        if not existed:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` so the file is either old or new, never partial."""
    write_files([(path, text)])


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    except (OSError, OverflowError):
        return False
    return True


def sweep_stale(directory: Path, *, now: float | None = None) -> list[Path]:
    """Remove temporary files in ``directory`` left by writers that were killed; return them.

    A temporary file is stale when no process with its pid is alive on this
    host, or when it is older than :data:`STALE_AFTER`. A concurrent writer's
    file is therefore left alone while it works.
    """
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = _TEMP_NAME.match(entry.name)
        if m is None or not entry.is_file(follow_symlinks=False):
            continue
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if age > STALE_AFTER or not _alive(int(m.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed
