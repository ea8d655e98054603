"""A git-style unified diff assembled from GitHub's per-file ``patch`` fields.

GitHub sends each file's hunks without git's ``diff --git`` header. The LLM
stage splits a commit's patch into files by those headers and pairs them with
the file list by position (:func:`repoherald.llm.diffpack.split_patch`), so
every file of the list gets exactly one chunk here, in list order, with the
header git would have written: mode lines, rename lines, ``index`` line,
``---``/``+++`` when there are hunks, ``Binary files … differ`` for binaries.
A file whose patch GitHub withheld gets its header and no hunks; the packer
then sees fewer lines than the counts and says the rest was not read.
"""

from __future__ import annotations

from collections.abc import Sequence

from repoherald.models import FileChange, FileStatus


def _abbrev(oid: str) -> str:
    return oid[:7] if oid else "0000000"


def file_chunk(f: FileChange, hunks: str | None) -> str:
    """One file's ``diff --git`` chunk (header, then ``hunks`` when there are any)."""
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
    a = "/dev/null" if f.status is FileStatus.ADDED else f"a/{old}"
    b = "/dev/null" if f.status is FileStatus.DELETED else f"b/{f.path}"
    if f.binary:
        lines.append(f"Binary files {a} and {b} differ")
    elif hunks:
        lines += [f"--- {a}", f"+++ {b}", hunks.rstrip("\n")]
    return "\n".join(lines) + "\n"


def assemble(files: Sequence[FileChange], hunks: Sequence[str | None]) -> str:
    """The whole commit's diff, one chunk per file in ``files`` order."""
    return "".join(file_chunk(f, h) for f, h in zip(files, hunks, strict=True))
