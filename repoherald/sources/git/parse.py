"""Parse what git prints and what commit objects hold, byte for byte.

Separate from the plumbing in :mod:`repoherald.sources.git.repo` because this
is where history written by strangers meets our models: odd encodings,
malformed identity lines, paths that are not UTF-8. Everything here is pure
(bytes in, models out), so it is tested without a repository.
"""

from __future__ import annotations

import codecs
import re

from repoherald.errors import SourceError
from repoherald.models import Commit, FileChange, FileStatus, Person

_STATUS = {
    "A": FileStatus.ADDED,
    "M": FileStatus.MODIFIED,
    "D": FileStatus.DELETED,
    "R": FileStatus.RENAMED,
    "C": FileStatus.COPIED,
    "T": FileStatus.TYPE_CHANGED,
}

ZERO = re.compile(r"^0+$")
"""An all-zero object id or mode: "nothing on this side" (added or deleted files)."""


def parse_diff_tree(out: bytes, order: list[str]) -> dict[str, list[FileChange]]:
    """Parse ``diff-tree --stdin -z --raw --numstat`` output.

    The stream is NUL-separated and paths may contain anything (even a
    40-hex name), so it is read strictly by structure: a commit header, its
    raw entries (each followed by one or two paths), then exactly as many
    numstat entries.
    """
    tokens = out.split(b"\0")
    pos = 0
    result: dict[str, list[FileChange]] = {}
    for sha in order:
        while pos < len(tokens) and tokens[pos].strip() == b"":
            pos += 1
        head = tokens[pos].strip().decode("ascii", "replace") if pos < len(tokens) else ""
        if head.split(" ")[0] != sha:
            raise SourceError(f"unexpected git diff-tree output near commit {sha}")
        pos += 1
        raws: list[tuple[str, str, str, str, str, str, str | None]] = []
        while pos < len(tokens) and tokens[pos].startswith(b":"):
            meta = tokens[pos][1:].decode("ascii").split(" ")
            old_mode, new_mode, old_blob, new_blob, status = meta[:5]
            letter = status[:1]
            pos += 1
            if letter in ("R", "C"):
                src = tokens[pos].decode("utf-8", "surrogateescape")
                dst = tokens[pos + 1].decode("utf-8", "surrogateescape")
                pos += 2
                raws.append((old_mode, new_mode, old_blob, new_blob, letter, dst, src))
            else:
                path = tokens[pos].decode("utf-8", "surrogateescape")
                pos += 1
                raws.append((old_mode, new_mode, old_blob, new_blob, letter, path, None))
        files: list[FileChange] = []
        for old_mode, new_mode, old_blob, new_blob, letter, dest, origin in raws:
            stat = tokens[pos].decode("ascii", "replace").split("\t")
            pos += 1
            if len(stat) == 3 and stat[2] == "":
                pos += 2
            added_s, deleted_s = stat[0], stat[1]
            binary = added_s == "-"
            files.append(
                FileChange(
                    path=_clean_path(dest),
                    status=_STATUS.get(letter, FileStatus.MODIFIED),
                    old_path=_clean_path(origin) if origin is not None else None,
                    added=0 if binary else int(added_s),
                    deleted=0 if binary else int(deleted_s),
                    binary=binary,
                    old_mode="" if ZERO.match(old_mode) else old_mode,
                    new_mode="" if ZERO.match(new_mode) else new_mode,
                    old_blob="" if ZERO.match(old_blob) else old_blob,
                    new_blob="" if ZERO.match(new_blob) else new_blob,
                )
            )
        result[sha] = files
    return result


def _clean_path(path: str) -> str:
    """Make undecodable path bytes visible instead of crashing on them later."""
    if any("\udc80" <= ch <= "\udcff" for ch in path):
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return path


_IDENT = re.compile(rb"^(.*?) <(.*?)> (-?\d+) ([+-])(\d\d)(\d\d)$")


def _decode(data: bytes, encoding: str | None) -> tuple[str, bool]:
    """Decode by the declared encoding, falling back to UTF-8 with replacement."""
    if encoding:
        try:
            codecs.lookup(encoding)
            return data.decode(encoding), False
        except (LookupError, ValueError):
            # Unknown names, undecodable bytes, and Python-only codecs that
            # fail with a bare UnicodeError ("undefined", "punycode", ...).
            pass
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


def _ident(line: bytes, encoding: str | None) -> tuple[Person, int, int, bool]:
    m = _IDENT.match(line)
    if not m:
        name, bad = _decode(line, encoding)
        return Person(name=name.strip() or "?", email=""), 0, 0, bad
    name, bad1 = _decode(m.group(1), encoding)
    email, bad2 = _decode(m.group(2), encoding)
    offset = int(m.group(5)) * 60 + int(m.group(6))
    if m.group(4) == b"-":
        offset = -offset
    return Person(name=name.strip() or "?", email=email), int(m.group(3)), offset, bad1 or bad2


def parse_commit(sha: str, raw: bytes) -> Commit:
    """Parse a raw commit object (headers, blank line, message)."""
    head, _, message = raw.partition(b"\n\n")
    parents: list[str] = []
    author_line = committer_line = b""
    encoding: str | None = None
    for line in head.split(b"\n"):
        if line.startswith(b" "):
            continue
        key, _, value = line.partition(b" ")
        if key == b"parent":
            parents.append(value.decode("ascii"))
        elif key == b"author":
            author_line = value
        elif key == b"committer":
            committer_line = value
        elif key == b"encoding":
            encoding = value.decode("ascii", "replace").strip() or None
    author, a_time, a_off, bad_a = _ident(author_line, encoding)
    committer, c_time, c_off, bad_c = _ident(committer_line, encoding)
    text, bad_m = _decode(message, encoding)
    return Commit(
        sha=sha,
        parents=tuple(parents),
        author=author,
        author_time=a_time,
        author_offset=a_off,
        committer=committer,
        commit_time=c_time,
        commit_offset=c_off,
        message=text.replace("\r\n", "\n"),
        encoding=encoding,
        decode_errors=bad_a or bad_c or bad_m,
    )
