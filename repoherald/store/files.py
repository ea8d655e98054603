"""The store's files on disk: private permissions, a header sanity check, moving aside.

The store holds what other people's repositories said and what the model
answered about them; the home directory holds mirrors that may have needed
credentials. Neither is anybody else's business, so both are created
private (0700 directories, 0600 files) whatever the umask says.
"""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

from repoherald.errors import StoreError

SIDE_FILES = ("-wal", "-shm", "-journal")
"""SQLite's companions of a database file; they move and are protected with it."""


def is_memory(path: Path) -> bool:
    """True for SQLite's in-memory database name (tests and throwaway runs)."""
    return str(path) == ":memory:"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) as 0700 directories; return it.

    Directories that already exist are left as they are: the user may have
    chosen to share them. Safe when several processes create it at once.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
    return path


def create_private_file(path: Path) -> None:
    """Create ``path`` as an empty 0600 file unless it exists; tighten it if it does.

    SQLite gives its -wal and -shm files the mode of the database file, so
    making this one private makes all three private. An existing file is
    never opened here: closing any descriptor of a database file drops every
    POSIX lock this process holds on it, including SQLite's own.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        os.fchmod(fd, 0o600)  # the umask may have taken bits away; never adds them
        os.close(fd)
    for name in (str(path), *(f"{path}{suffix}" for suffix in SIDE_FILES)):
        try:
            mode = stat.S_IMODE(os.stat(name).st_mode)
            if mode & 0o077:
                os.chmod(name, mode & ~0o077)
        except FileNotFoundError:
            continue


def truncation(path: Path, pages: int, page_size: int) -> str | None:
    """Why the file is shorter than SQLite's page count says, or None when it is not.

    SQLite opens a truncated file and only fails later, on whichever query
    first reaches a missing page; checking up front turns that into one
    clear message. The caller reads ``pages`` (``PRAGMA page_count``, the
    header's count) inside a read transaction. Nothing is said while a
    write-ahead log holds frames: then the file may legitimately be shorter.
    The file is only stat()ed, never opened (see :func:`create_private_file`).
    """
    try:
        if os.stat(f"{path}-wal").st_size:
            return None
    except FileNotFoundError:
        pass
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return None
    expected = pages * page_size
    if size >= expected:
        return None
    return f"truncated: {size} of {expected} bytes"


def damaged_message(path: Path, reason: str) -> str:
    """The one line a user reads when the store cannot be trusted.

    It names no flag (see :mod:`repoherald.errors`); the CLI adds its
    ``--rebuild`` hint to a :class:`~repoherald.errors.StoreDamagedError`.
    """
    return (
        f"the store {path} is damaged ({reason}); the store is only a cache:"
        f" move {path} aside and re-run, or rebuild it"
    )


def move_aside(path: Path, now: datetime | None = None) -> Path | None:
    """Rename the store (and its side files) to ``<name>.broken-<timestamp>``.

    Nothing is deleted: a damaged store may still hold analyses someone paid
    for. Returns the new path, or None when there was nothing to move.
    """
    if not path.exists():
        return None
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    try:
        path.rename(target)
        # The side files must follow: SQLite would replay a stale -wal into
        # the fresh database created at the old name.
        for suffix in SIDE_FILES:
            side = Path(f"{path}{suffix}")
            if side.exists():
                side.rename(f"{target}{suffix}")
    except OSError as exc:
        raise StoreError(
            f"cannot move the store {path} aside: {exc.strerror}; move it by hand and re-run"
        ) from None
    return target
