"""A git-style unified diff cut into per-file patches (:class:`~repoherald.models.FilePatch`).

The git source reads one commit's diff as one text (``git diff-tree -p``)
and cuts it here, pairing each part with the commit's file list, so what it
returns is the same data the GitHub source builds from GitHub's per-file
patches. A third-party source that has a unified diff can use it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from repoherald.models import FileChange, FilePatch, FileStatus

_DIFF_START = re.compile(r"^diff --git ", re.M)
_HUNK_START = re.compile(r"^@@", re.M)
_BINARY = re.compile(r"^(?:Binary files .* differ|GIT binary patch)$", re.M)


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _split_chunk(chunk: str) -> tuple[str, tuple[str, ...], bool]:
    """(header, hunks, binary) of one ``diff --git`` chunk."""
    first = _HUNK_START.search(chunk)
    header = chunk[: first.start()] if first else chunk
    binary = _BINARY.search(header)
    if binary:
        # A ``GIT binary patch`` is followed by base85 data: not a header.
        return _with_newline(header[: binary.end()]), (), True
    if first is None:
        return _with_newline(header), (), False
    body = chunk[first.start() :]
    starts = [m.start() for m in _HUNK_START.finditer(body)]
    ends = [*starts[1:], len(body)]
    return header, tuple(_with_newline(body[s:e]) for s, e in zip(starts, ends, strict=True)), False


_C_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of a path (``"a/tab\\there"``), if quoted."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    raw = bytearray()
    body = name[1:-1]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            digits = body[i + 1 : i + 4]
            if len(digits) == 3 and all(d in "01234567" for d in digits):
                raw.append(int(digits, 8) & 0xFF)
                i += 4
                continue
            raw += _C_ESCAPES.get(nxt, nxt).encode("utf-8")
            i += 2
            continue
        raw += ch.encode("utf-8", "surrogateescape")
        i += 1
    return raw.decode("utf-8", "replace")


def _symmetric_name(names: str) -> str:
    """``a/P b/P`` (quoted or not) -> ``P``; anything else is returned as is.

    With no ``---``/``+++`` lines (binary files, mode changes) the
    ``diff --git`` line is all there is, and it is ambiguous when a name has
    spaces, except when both names are the same: then both halves have the
    same length.
    """
    mid = len(names) // 2
    if len(names) % 2 == 1 and names[mid] == " ":
        left, right = _unquote(names[:mid]), _unquote(names[mid + 1 :])
        if left.startswith("a/") and right.startswith("b/") and left[2:] == right[2:]:
            return left[2:]
    return names


def _describe_chunk(header: str, hunks: tuple[str, ...], binary: bool) -> FilePatch:
    """A FilePatch for a chunk that has no FileChange, read from its header alone.

    Only reached when the text has more files than the list it is paired
    with (a different commit or different options): better to show such a
    file under the name git gives it than to drop it silently.
    """
    fields: dict[str, str] = {}
    for line in header.split("\n"):
        for key in ("rename from ", "rename to ", "copy from ", "copy to ", "--- ", "+++ "):
            if line.startswith(key) and key not in fields:
                fields[key] = _unquote(line[len(key) :].rstrip("\t"))
    new = fields.get("+++ ", "/dev/null")
    old = fields.get("--- ", "/dev/null")
    path = (
        fields.get("rename to ")
        or fields.get("copy to ")
        or (new[2:] if new != "/dev/null" else "")
        or (old[2:] if old != "/dev/null" else "")
        or _symmetric_name(header.split("\n", 1)[0][len("diff --git ") :])
    )
    old_path = fields.get("rename from ") or fields.get("copy from ")
    if "\nnew file mode " in header:
        status = FileStatus.ADDED
    elif "\ndeleted file mode " in header:
        status = FileStatus.DELETED
    elif "rename from " in fields:
        status = FileStatus.RENAMED
    elif "copy from " in fields:
        status = FileStatus.COPIED
    else:
        status = FileStatus.MODIFIED
    added = sum(h.count("\n+") for h in hunks)
    deleted = sum(h.count("\n-") for h in hunks)
    return FilePatch(path, old_path, status, binary, header, hunks, added, deleted)


def split_patch(patch: str, files: Sequence[FileChange]) -> list[FilePatch]:
    """Cut a unified diff into per-file patches, paired with ``files`` in order.

    ``files`` must come from ``diff_first_parent`` of the same commit (same
    ``-r -M`` options), which lists files in the order the patch shows them,
    so pairing is by position: paths in ``diff --git`` lines are ambiguous
    (spaces, quoting) and cannot be trusted to match. Only lines starting
    with ``diff --git `` start a file: inside a hunk every line starts with
    a space, ``+``, ``-`` or ``\\``.

    One file can take two chunks: git shows a type change (file to symlink,
    file to submodule) as a deletion then a creation of the same path, where
    the file list has one entry. Such a second chunk is merged into the first.

    When the patch was cut (``max_bytes``), files past the cut get an empty
    header and no hunks; their ``added``/``deleted`` still say how much
    changed. Chunks beyond the list are described from their own headers.
    """
    starts = [m.start() for m in _DIFF_START.finditer(patch)]
    ends = [*starts[1:], len(patch)] if starts else []
    chunks = [patch[s:e] for s, e in zip(starts, ends, strict=True)]
    out: list[FilePatch] = []
    prev_first_line = ""
    merged_last = False
    fi = 0
    for chunk in chunks:
        first_line = chunk.split("\n", 1)[0]
        header, hunks, binary = _split_chunk(chunk)
        if (
            out
            and not merged_last
            and fi <= len(files)
            and files[fi - 1].status is FileStatus.TYPE_CHANGED
            and first_line == prev_first_line
        ):
            last = out[-1]
            out[-1] = FilePatch(
                last.path,
                last.old_path,
                last.status,
                last.binary or binary,
                last.header + header,
                () if (last.binary or binary) else last.hunks + hunks,
                last.added,
                last.deleted,
            )
            merged_last = True
            continue
        merged_last = False
        prev_first_line = first_line
        if fi < len(files):
            f = files[fi]
            fi += 1
            is_binary = f.binary or binary
            out.append(
                FilePatch(
                    path=f.path,
                    old_path=f.old_path,
                    status=f.status,
                    binary=is_binary,
                    header=header,
                    hunks=() if is_binary else hunks,
                    added=f.added,
                    deleted=f.deleted,
                )
            )
        else:
            fi += 1
            out.append(_describe_chunk(header, hunks, binary))
    for f in files[fi:]:
        out.append(FilePatch(f.path, f.old_path, f.status, f.binary, "", (), f.added, f.deleted))
    return out
