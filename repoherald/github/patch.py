"""GitHub's per-file ``patch`` fields as per-file patches (:class:`~repoherald.models.FilePatch`).

GitHub sends each file's hunks without git's ``diff --git`` header, already
paired with its file. Each becomes one :class:`~repoherald.models.FilePatch`
directly, in file-list order, so nothing has to cut a text back into files
(a path holding a newline and ``diff --git`` cannot shift the pairing). The
header written for it is the one git would have written (mode lines, rename
lines, ``index`` line, ``---``/``+++`` when there are hunks, ``Binary files …
differ`` for binaries): it is what the fact-check searches and where the
packer reads a mode change, the same for either source. A file whose patch
GitHub withheld gets its header and no hunks; the packer then sees fewer lines
than the counts and says the rest was not read.
"""

from __future__ import annotations

import re

from repoherald.models import FileChange, FilePatch, FileStatus

_HUNK_START = re.compile(r"^@@", re.M)


def _abbrev(oid: str) -> str:
    return oid[:7] if oid else "0000000"


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _header_lines(f: FileChange) -> list[str]:
    old = f.old_path or f.path
    lines = [f"diff --git a/{old} b/{f.path}"]
    if f.status is FileStatus.ADDED:
        lines.append(f"new file mode {f.new_mode or '100644'}")
    elif f.status is FileStatus.DELETED:
        lines.append(f"deleted file mode {f.old_mode or '100644'}")
    elif f.mode_changed:
        lines += [f"old mode {f.old_mode}", f"new mode {f.new_mode}"]
    if f.status in (FileStatus.RENAMED, FileStatus.COPIED) and f.old_path:
        verb = "rename" if f.status is FileStatus.RENAMED else "copy"
        lines += [f"{verb} from {f.old_path}", f"{verb} to {f.path}"]
    if f.old_blob != f.new_blob:
        same_mode = f.old_mode == f.new_mode and f.status is FileStatus.MODIFIED
        mode = f" {f.new_mode}" if same_mode and f.new_mode else ""
        lines.append(f"index {_abbrev(f.old_blob)}..{_abbrev(f.new_blob)}{mode}")
    return lines


def file_patch(f: FileChange, hunks: str | None) -> FilePatch:
    """One file's patch from its change and GitHub's ``patch`` text (None: withheld)."""
    old = f.old_path or f.path
    a = "/dev/null" if f.status is FileStatus.ADDED else f"a/{old}"
    b = "/dev/null" if f.status is FileStatus.DELETED else f"b/{f.path}"
    lines = _header_lines(f)
    if f.binary:
        lines.append(f"Binary files {a} and {b} differ")
        return _patch(f, "\n".join(lines) + "\n", ())
    if not hunks:
        return _patch(f, "\n".join(lines) + "\n", ())
    header = "\n".join([*lines, f"--- {a}", f"+++ {b}"]) + "\n"
    body = hunks.rstrip("\n") + "\n"
    starts = [m.start() for m in _HUNK_START.finditer(body)]
    if not starts:
        return _patch(f, header + body, ())
    ends = [*starts[1:], len(body)]
    parts = tuple(_with_newline(body[s:e]) for s, e in zip(starts, ends, strict=True))
    return _patch(f, header + body[: starts[0]], parts)


def _patch(f: FileChange, header: str, hunks: tuple[str, ...]) -> FilePatch:
    return FilePatch(f.path, f.old_path, f.status, f.binary, header, hunks, f.added, f.deleted)
