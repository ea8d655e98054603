"""One side of a changed file rebuilt from the other side and GitHub's per-file patch.

The Python API and dependency facts parse a file before and after a commit,
so the GitHub source needed two blob requests per changed Python file: on a
real day, ten a commit. The patch ``/commits/{sha}`` already sent holds
every line that differs, so the other side follows from one side:

* an added file is its patch's ``+`` lines (no request), a deleted file its
  ``-`` lines;
* a modified file's old blob is its new blob with the hunks undone (one
  request instead of two), or the new one the old with them applied when
  the old is already at hand (the previous commit's new blob).

A rebuilt blob is used only when its git object id is the one the tree
names, so a patch that does not fit (cut, re-encoded, a line with invalid
UTF-8 that GitHub replaced) costs the request it would have cost anyway,
never a wrong file.
"""

from __future__ import annotations

import hashlib
import re

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def git_blob_id(data: bytes) -> str:
    """The SHA-1 git gives ``data`` as a blob (what trees and ``files[].sha`` name)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _lines(data: bytes) -> list[bytes]:
    """Lines with their ``\\n`` (the last without one when ``data`` does not end in one)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def other_side(base: bytes, patch: str, *, reverse: bool) -> bytes | None:
    """The file on the patch's other side: new from old, or old from new with ``reverse``.

    None when the patch does not fit ``base`` (a hunk past its end, an
    unknown line). A fit is no proof: compare the result's
    :func:`git_blob_id` with the id the tree names before using it.
    """
    src = _lines(base)
    gone, kept = ("+", "-") if reverse else ("-", "+")
    out: list[bytes] = []
    pos = 0
    rows = patch.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    last: str | None = None
    for row in rows:
        head = _HUNK.match(row)
        if head is not None:
            start, count = (head.group(3), head.group(4)) if reverse else head.group(1, 2)
            first = int(start) - (0 if count == "0" else 1)
            if first < pos or first > len(src):
                return None
            out.extend(src[pos:first])
            pos, last = first, None
            continue
        kind = row[:1]
        if kind == " ":
            if pos >= len(src):
                return None
            out.append(src[pos])
            pos += 1
        elif kind == gone:
            if pos >= len(src):
                return None
            pos += 1
        elif kind == kept:
            out.append(row[1:].encode("utf-8", "surrogateescape") + b"\n")
        elif kind == "\\":
            # "\ No newline at end of file": the line before has none, on its side.
            if last == kept and out and out[-1].endswith(b"\n"):
                out[-1] = out[-1][:-1]
        else:
            return None
        last = kind
    out.extend(src[pos:])
    return b"".join(out)


def rebuilt(base: bytes, patch: str | None, want: str, *, reverse: bool) -> bytes | None:
    """:func:`other_side`, kept only when its git id is ``want``."""
    if not patch or len(want) != 40:
        return None
    data = other_side(base, patch, reverse=reverse)
    return data if data is not None and git_blob_id(data) == want else None
