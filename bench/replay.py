"""Replay recorded commit *shapes* into a fresh git repository.

The shapes file (one JSON object per line, newest first) records the
first-parent history of a real repository without file contents: paths,
statuses (A/M/D/R), per-file added/deleted line counts, binary flags,
authors, committers, dates and messages.  :func:`build_repo` turns a slice of
it into a linear git history on ``main`` whose ``git log --numstat`` looks
like the original: same paths, same statuses (renames included), same line
counts for text files, same names, dates (with their UTC offsets) and
messages.  File contents are synthesised deterministically from ``seed``.

Files that the replay modifies, deletes or renames without having seen them
created (the slice starts in the middle of the history) are created first in
a single *baseline* commit, dated one second before the first replayed
commit, with enough lines for every later deletion.  The baseline commit is
not part of the list returned by :func:`build_repo`.

Everything is written through one ``git fast-import`` process, so a month of
history (~460 commits) replays in a few seconds.

Usage::

    python -m bench.replay --since 2026-07-01 --until 2026-08-01 DEST
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

__all__ = [
    "BASELINE_TITLE",
    "DEFAULT_SHAPES",
    "build_repo",
    "email_for",
    "load_shapes",
    "main",
    "verify_repo",
]

DEFAULT_SHAPES = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "vllm-ascend-main-shapes.jsonl"
)
BASELINE_TITLE = "Replay baseline: files that existed before the first replayed commit"
BASELINE_NAME = "repoherald replay"

MODE_FILE = "100644"
MODE_EXEC = "100755"

# Margin applied to the minimum size that keeps a renamed baseline file above
# git's 50% rename-similarity threshold.
_RENAME_MARGIN = 1.3
# Share of a renamed file's lines that must survive the rename (see _Builder._modify).
_RENAME_TARGET = 0.6

_WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "kernel",
    "tensor",
    "cache",
    "block",
    "graph",
    "model",
    "layer",
    "token",
    "weight",
    "scale",
    "shard",
    "expert",
    "rank",
    "device",
    "stream",
    "queue",
    "batch",
    "prefill",
    "decode",
    "attention",
    "rotary",
    "quant",
    "sparse",
    "offload",
    "buffer",
    "config",
    "worker",
    "runner",
    "sampler",
)


# --------------------------------------------------------------------------- loading


def _parse_iso(value: str) -> datetime:
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        raise ValueError(f"date without UTC offset: {value!r}")
    return dt


def load_shapes(
    path: Path,
    since: date | None,
    until: date | None,
    tz: str = "Asia/Shanghai",
) -> list[dict[str, Any]]:
    """Load commit shapes whose committer date falls in ``[since, until)``.

    Dates are calendar days in ``tz``.  ``None`` leaves that side open.  The
    file is newest first; the result is oldest first (file order reversed, so
    the first-parent order is kept even if committer dates are not monotonic).
    """
    zone = ZoneInfo(tz)
    out: list[dict[str, Any]] = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            shape = json.loads(line)
            day = _parse_iso(shape["committer_date"]).astimezone(zone).date()
            if since is not None and day < since:
                continue
            if until is not None and day >= until:
                continue
            out.append(shape)
    out.reverse()
    return out


# --------------------------------------------------------------------------- identities


def _sanitize_name(name: str) -> str:
    cleaned = re.sub(r"[<>\n\r\x00]", "", name).strip()
    return cleaned or "unknown"


def email_for(name: str) -> str:
    """Synthetic e-mail address for ``name``: ``<name-slug>@example.invalid``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")
    if not slug:
        slug = "user-" + format(zlib.crc32(name.encode("utf-8")), "08x")
    return f"{slug}@example.invalid"


def _ident(name: str, when: datetime) -> bytes:
    offset = when.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    hh, mm = divmod(abs(minutes), 60)
    stamp = int(when.timestamp())
    clean = _sanitize_name(name)
    return f"{clean} <{email_for(clean)}> {stamp} {sign}{hh:02d}{mm:02d}".encode()


# --------------------------------------------------------------------------- fast-import


def _quote_path(path: str) -> bytes:
    """Quote ``path`` C-style when fast-import requires or benefits from it."""
    raw = path.encode("utf-8")
    if not (
        raw.startswith(b'"')
        or any(b in raw for b in b' "\\\n\t')
        or any(b < 0x20 or b == 0x7F for b in raw)
    ):
        return raw
    out = bytearray(b'"')
    for b in raw:
        if b == 0x22:
            out += b'\\"'
        elif b == 0x5C:
            out += b"\\\\"
        elif b == 0x0A:
            out += b"\\n"
        elif b == 0x09:
            out += b"\\t"
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


# --------------------------------------------------------------------------- content


class _Synth:
    """Deterministic line and blob generator."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.counter = 0

    def _kind(self, path: str, n: int) -> int:
        return zlib.crc32(f"{self.seed}:{path}:{n}".encode()) % 100

    def lines(self, path: str, count: int) -> list[str]:
        """``count`` new lines for ``path``; every line is unique in the run."""
        start = self.counter
        self.counter += count
        style = _style(path)
        return [style(self._kind(path, n), n) for n in range(start, start + count)]

    def blob(self, path: str, tag: str) -> bytes:
        rng = random.Random(f"{self.seed}\0{path}\0{tag}\0blob")
        size = rng.randint(1024, 6144)
        body = bytearray(rng.randbytes(size))
        for i in range(0, size, 97):
            body[i] = 0
        return b"\x89BIN\r\n\x1a\n\x00\x00" + bytes(body)


def _word(n: int) -> str:
    return _WORDS[n % len(_WORDS)]


def _py_line(k: int, n: int) -> str:
    if k < 45:
        return f"def f_{n}(x, y={n % 7}): return x + y * {n % 97}"
    if k < 60:
        return f"class C_{n}: {_word(n)} = {n % 113}"
    if k < 82:
        return f"V_{n} = {n % 1009}  # {_word(n)} {_word(n // 7)}"
    if k < 92:
        return f"async def a_{n}(x): return [x, {n % 31}]"
    return f"# {_word(n)} {_word(n // 3)} note {n}"


def _yaml_line(k: int, n: int) -> str:
    return f"key_{n}: {_word(n)}-{k}"


def _toml_line(k: int, n: int) -> str:
    return f'key_{n} = "{_word(n)}-{k}"'


def _md_line(k: int, n: int) -> str:
    return f"Line {n}: the {_word(n)} {_word(n // 5)} {_word(k)} is described here."


def _sh_line(k: int, n: int) -> str:
    return f'echo "step {n} {_word(n)} {_word(k)}"'


def _c_line(k: int, n: int) -> str:
    if k < 60:
        return f"static int v_{n} = {n % 4099}; /* {_word(n)} */"
    return f"// {_word(n)} {_word(k)} note {n}"


def _comment_line(k: int, n: int) -> str:
    return f"# {_word(n)} {_word(k)} note {n}"


def _plain_line(k: int, n: int) -> str:
    return f"{_word(n)} {n} {_word(k)} {_word(n // 11)}"


def _style(path: str) -> Any:
    name = path.rsplit("/", 1)[-1].lower()
    ext = name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else ""
    if name.startswith(".git") or name in {"dockerfile", "makefile", "codeowners"}:
        return _comment_line
    if ext in {"py", "pyi"}:
        return _py_line
    if ext in {"yaml", "yml"}:
        return _yaml_line
    if ext == "toml":
        return _toml_line
    if ext in {"md", "rst", "txt"}:
        return _md_line
    if ext in {"sh", "bash"}:
        return _sh_line
    if ext in {"c", "cc", "cpp", "cxx", "h", "hpp", "cu"}:
        return _c_line
    if ext in {"cfg", "ini", "conf"} or name.startswith("."):
        return _comment_line
    return _plain_line


def _cuts(rng: random.Random, total: int, parts: int) -> list[int]:
    """Split ``total`` into ``parts`` non-negative integers."""
    if parts == 1:
        return [total]
    points = sorted(rng.randint(0, total) for _ in range(parts - 1))
    bounds = [0, *points, total]
    return [bounds[i + 1] - bounds[i] for i in range(parts)]


def _toggle_eol(line: str) -> str:
    """Switch a stored line between LF and CRLF endings (CRLF lines end with ``\\r``)."""
    return line[:-1] if line.endswith("\r") else line + "\r"


def _edit(
    lines: list[str],
    deleted: int,
    added: int,
    rng: random.Random,
    fresh: Callable[[int], list[str]],
    recycle: int = 0,
) -> list[str]:
    """Delete ``deleted`` existing lines and add ``added`` lines, in 1-3 hunks.

    The first ``recycle`` added lines are deleted lines with their line ending
    switched (LF <-> CRLF): ``git diff`` counts them as deleted and added, while
    git's rename similarity, which ignores CR before LF, still sees the content.
    The other added lines come from ``fresh(count)``.
    """
    kept = len(lines) - deleted
    hunks = 1 if deleted + added < 4 else rng.randint(1, 3)
    dels = _cuts(rng, deleted, hunks)
    adds = _cuts(rng, added, hunks)
    gaps = _cuts(rng, kept, hunks + 1)
    new: list[str] = []
    if recycle:
        pos = 0
        for i in range(hunks):
            pos += gaps[i]
            new.extend(_toggle_eol(x) for x in lines[pos : pos + dels[i]])
            pos += dels[i]
        del new[recycle:]
    new.extend(fresh(added - len(new)))
    out: list[str] = []
    pos = 0
    ins = 0
    for i in range(hunks):
        out.extend(lines[pos : pos + gaps[i]])
        pos += gaps[i] + dels[i]
        out.extend(new[ins : ins + adds[i]])
        ins += adds[i]
    out.extend(lines[pos:])
    return out


# --------------------------------------------------------------------------- planning


@dataclass
class _Lineage:
    """One file identity followed across modifications and renames (planning pass)."""

    binary: bool
    base_path: str | None
    offset: int = 0
    min_base: int = 0
    fixed_base: int | None = None
    rename_need: int = 0


@dataclass
class _Plan:
    baseline: dict[str, tuple[bool, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _source_path(fc: dict[str, Any]) -> str:
    if fc["status"] == "R":
        return str(fc.get("old_path") or fc["path"])
    return str(fc["path"])


def _plan(shapes: list[dict[str, Any]], seed: int) -> _Plan:
    """Find files that must exist before the first replayed commit, and their sizes."""
    exists: dict[str, _Lineage] = {}
    seen: set[str] = set()
    base: dict[str, _Lineage] = {}
    for shape in shapes:
        files = shape["files"]
        sources: list[_Lineage | None] = []
        for fc in files:
            if fc["status"] == "A":
                sources.append(None)
                continue
            sp = _source_path(fc)
            src = exists.get(sp)
            if src is None and sp not in seen:
                src = _Lineage(binary=bool(fc["binary"]), base_path=sp)
                base[sp] = src
            sources.append(src)
        for fc in files:
            if fc["status"] in ("D", "R"):
                exists.pop(_source_path(fc), None)
            seen.add(fc["path"])
            seen.add(_source_path(fc))
        for fc, src in zip(files, sources, strict=True):
            status = fc["status"]
            if status == "D" or src is None:
                if src is not None and not fc["binary"] and src.fixed_base is None:
                    src.fixed_base = (fc["deleted"] or 0) - src.offset
                if status != "D":
                    exists[fc["path"]] = _Lineage(binary=bool(fc["binary"]), base_path=None)
                continue
            if not fc["binary"]:
                d = fc["deleted"] or 0
                a = fc["added"] or 0
                src.min_base = max(src.min_base, d - src.offset)
                if status == "R":
                    need = math.ceil(max(2 * d, d + a) * _RENAME_MARGIN) + 1 if d or a else 0
                    src.rename_need = max(src.rename_need, need - src.offset)
                src.offset += a - d
            exists[fc["path"]] = src

    plan = _Plan()
    for path, lin in base.items():
        if lin.binary:
            plan.baseline[path] = (True, 0)
            continue
        if lin.fixed_base is not None:
            size = lin.fixed_base
            if size < lin.min_base:
                plan.notes.append(
                    f"{path}: deleted at {lin.fixed_base} lines but needs {lin.min_base}"
                )
                size = lin.min_base
        else:
            default = 40 + zlib.crc32(f"{seed}:{path}:size".encode()) % 160
            size = max(lin.min_base, lin.rename_need, default)
        plan.baseline[path] = (False, max(size, 0))
    return plan


# --------------------------------------------------------------------------- building


@dataclass
class _File:
    lines: list[str] | None  # None for binary files
    data: bytes | None = None  # binary payload
    mode: str = MODE_FILE

    def payload(self) -> bytes:
        if self.lines is None:
            assert self.data is not None
            return self.data
        if not self.lines:
            return b""
        return ("\n".join(self.lines) + "\n").encode("utf-8")


def _message(shape: dict[str, Any]) -> bytes:
    title = shape.get("title") or ""
    body = shape.get("body") or ""
    msg = f"{title}\n\n{body}" if body else title
    if not msg.endswith("\n"):
        msg += "\n"
    return msg.encode("utf-8")


def _git(args: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, **kw)


class _Builder:
    def __init__(self, shapes: list[dict[str, Any]], seed: int) -> None:
        self.shapes = shapes
        self.seed = seed
        self.synth = _Synth(seed)
        self.state: dict[str, _File] = {}
        self.notes: list[str] = []

    # -- file operations -----------------------------------------------------------

    def _new_file(self, path: str, fc: dict[str, Any], tag: str) -> _File:
        if fc["binary"]:
            return _File(lines=None, data=self.synth.blob(path, tag))
        return _File(lines=self.synth.lines(path, fc["added"] or 0))

    def _modify(self, src: _File, fc: dict[str, Any], tag: str, sha: str) -> _File:
        path = fc["path"]
        if fc["binary"]:
            if fc["status"] == "R":
                return _File(lines=None, data=src.data or self.synth.blob(path, tag), mode=src.mode)
            return _File(lines=None, data=self.synth.blob(path, tag), mode=src.mode)
        lines = src.lines if src.lines is not None else []
        added = fc["added"] or 0
        deleted = fc["deleted"] or 0
        if added == 0 and deleted == 0 and fc["status"] == "M":
            # A text modification without line changes: a mode change upstream.
            mode = MODE_EXEC if src.mode == MODE_FILE else MODE_FILE
            return _File(lines=list(lines), mode=mode)
        if deleted > len(lines):
            self.notes.append(
                f"{sha[:10]} {path}: needs {deleted} deletions, file has {len(lines)} lines"
            )
            deleted = len(lines)
        recycle = 0
        if fc["status"] == "R":
            # git only shows a rename when the files are at least 50% similar.
            # If plain line edits cannot get there (e.g. a whole-file rewrite,
            # typically a line-ending conversion upstream), re-add some of the
            # deleted lines with switched line endings.
            kept = len(lines) - deleted
            target = math.ceil(_RENAME_TARGET * max(len(lines), kept + added))
            recycle = max(0, min(deleted, added, target - kept))
        rng = random.Random(f"{self.seed}\0{path}\0{tag}")

        def fresh(count: int) -> list[str]:
            return self.synth.lines(path, count)

        return _File(lines=_edit(lines, deleted, added, rng, fresh, recycle), mode=src.mode)

    # -- stream ----------------------------------------------------------------------

    def _commit(
        self,
        mark: int,
        author: bytes,
        committer: bytes,
        message: bytes,
        deletes: Iterable[str],
        writes: Iterable[str],
    ) -> list[bytes]:
        chunks = [
            b"commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\n"
            % (mark, author, committer),
            _data(message),
        ]
        for path in deletes:
            chunks.append(b"D %s\n" % _quote_path(path))
        for path in writes:
            f = self.state[path]
            chunks.append(b"M %s inline %s\n" % (f.mode.encode(), _quote_path(path)))
            chunks.append(_data(f.payload()))
        chunks.append(b"\n")
        return chunks

    def baseline_chunks(self, plan: _Plan, mark: int) -> list[bytes]:
        first = self.shapes[0]
        when = _parse_iso(first["committer_date"]) - timedelta(seconds=1)
        ident = _ident(BASELINE_NAME, when)
        for path, (binary, size) in sorted(plan.baseline.items()):
            if binary:
                self.state[path] = _File(lines=None, data=self.synth.blob(path, "baseline"))
            else:
                self.state[path] = _File(lines=self.synth.lines(path, size))
        body = (
            f"{len(plan.baseline)} files that the replayed commits modify, delete or rename\n"
            "without having created them; sized for the later deletions.\n"
        )
        message = f"{BASELINE_TITLE}\n\n{body}".encode()
        return self._commit(mark, ident, ident, message, [], sorted(plan.baseline))

    def shape_chunks(self, index: int, shape: dict[str, Any]) -> list[bytes]:
        sha = str(shape.get("sha", index))
        files = shape["files"]
        sources: list[_File | None] = []
        for fc in files:
            if fc["status"] == "A":
                sources.append(None)
                continue
            sp = _source_path(fc)
            src = self.state.get(sp)
            if src is None:
                self.notes.append(f"{sha[:10]} {fc['status']} {sp}: file does not exist; created")
            sources.append(src)
        removed: list[str] = []
        for fc in files:
            if fc["status"] in ("D", "R"):
                sp = _source_path(fc)
                if self.state.pop(sp, None) is not None:
                    removed.append(sp)
        written: list[str] = []
        for j, (fc, src) in enumerate(zip(files, sources, strict=True)):
            if fc["status"] == "D":
                continue
            path = fc["path"]
            tag = f"{sha}:{j}"
            if src is None:
                if fc["status"] == "A" and path in self.state:
                    self.notes.append(f"{sha[:10]} A {path}: file already exists; replaced")
                self.state[path] = self._new_file(path, fc, tag)
            else:
                self.state[path] = self._modify(src, fc, tag, sha)
            written.append(path)
        written_set = set(written)
        deletes = [p for p in removed if p not in written_set]
        author = _ident(shape["author"], _parse_iso(shape["author_date"]))
        committer = _ident(shape["committer"], _parse_iso(shape["committer_date"]))
        return self._commit(index + 1, author, committer, _message(shape), deletes, written)


def build_repo(
    shapes: list[dict[str, Any]],
    dest: Path,
    *,
    bare: bool = False,
    seed: int = 0,
) -> list[str]:
    """Replay ``shapes`` (oldest first) into a new git repository at ``dest``.

    Returns the SHAs of the replayed commits, oldest first, one per shape (the
    optional baseline commit that precedes them is not included).  ``dest``
    must not exist or be an empty directory.  The history is linear on
    ``main``, which is checked out (non-bare) or is HEAD (bare).
    """
    return _build(shapes, dest, bare=bare, seed=seed)[0]


def _build(
    shapes: list[dict[str, Any]], dest: Path, *, bare: bool, seed: int
) -> tuple[list[str], list[str]]:
    """:func:`build_repo`, also returning notes on what could not be replayed exactly."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"destination is not empty: {dest}")
    dest.mkdir(parents=True, exist_ok=True)
    _git(["init", "--quiet", *(["--bare"] if bare else []), str(dest)], cwd=dest)
    _git(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=dest)
    if not shapes:
        return [], []

    builder = _Builder(shapes, seed)
    plan = _plan(shapes, seed)
    n = len(shapes)
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        marks = Path(tmp) / "marks"
        errlog = Path(tmp) / "stderr"
        with errlog.open("wb") as err:
            proc = subprocess.Popen(
                ["git", "fast-import", "--quiet", "--done", f"--export-marks={marks}"],
                cwd=dest,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
            assert proc.stdin is not None
            try:
                out = proc.stdin
                if plan.baseline:
                    out.write(b"".join(builder.baseline_chunks(plan, n + 1)))
                for i, shape in enumerate(shapes):
                    out.write(b"".join(builder.shape_chunks(i, shape)))
                out.write(b"done\n")
                out.close()
            except BrokenPipeError:
                pass
            rc = proc.wait()
        if rc != 0:
            raise RuntimeError(
                f"git fast-import failed ({rc}): {errlog.read_text(errors='replace')[-4000:]}"
            )
        by_mark: dict[int, str] = {}
        for line in marks.read_text().splitlines():
            mark, sha = line.split()
            by_mark[int(mark.lstrip(":"))] = sha
    if not bare:
        _git(["-c", "core.autocrlf=false", "reset", "--hard", "--quiet", "main"], cwd=dest)
    return [by_mark[i + 1] for i in range(n)], plan.notes + builder.notes


# --------------------------------------------------------------------------- verification


def _log_numstat(repo: Path, rev: str = "main") -> list[dict[str, Any]]:
    """Commits of ``rev`` (oldest first) with their numstat, read with ``-z``."""
    sep = "\x1e"
    fmt = f"{sep}%H%x1f%an%x1f%cn%x1f%aI%x1f%cI%x1f%s"
    raw = _git(
        [
            "-c",
            "diff.renames=true",
            "log",
            "--first-parent",
            "--reverse",
            "-M",
            "--numstat",
            "-z",
            "--no-color",
            "--no-ext-diff",
            f"--format={fmt}",
            rev,
        ],
        cwd=repo,
    ).stdout.decode("utf-8")
    commits: list[dict[str, Any]] = []
    for record in raw.split(sep)[1:]:
        header, _, rest = record.partition("\0")
        sha, an, cn, ad, cd, title = header.split("\x1f")
        files: list[dict[str, Any]] = []
        tokens = rest.lstrip("\n").split("\0")
        i = 0
        while i < len(tokens):
            tok = tokens[i].lstrip("\n")
            i += 1
            if not tok:
                continue
            added, deleted, path = tok.split("\t", 2)
            old = None
            if path == "":
                old, path = tokens[i], tokens[i + 1]
                i += 2
            files.append(
                {
                    "path": path,
                    "old_path": old,
                    "added": None if added == "-" else int(added),
                    "deleted": None if deleted == "-" else int(deleted),
                }
            )
        commits.append(
            {
                "sha": sha,
                "author": an,
                "committer": cn,
                "author_date": ad,
                "committer_date": cd,
                "title": title,
                "files": files,
            }
        )
    return commits


def verify_repo(shapes: list[dict[str, Any]], repo: Path) -> list[str]:
    """Compare ``git log --numstat`` of a replayed repo with ``shapes``; list differences."""
    commits = [c for c in _log_numstat(repo) if c["title"] != BASELINE_TITLE]
    problems: list[str] = []
    if len(commits) != len(shapes):
        problems.append(f"commit count {len(commits)} != {len(shapes)}")
    for shape, got in zip(shapes, commits, strict=False):
        tag = shape["sha"][:10]
        for key in ("title", "author", "committer"):
            if _sanitize_name(shape[key]) != got[key] and shape[key] != got[key]:
                problems.append(f"{tag} {key}: {got[key]!r} != {shape[key]!r}")
        for key in ("author_date", "committer_date"):
            want = _parse_iso(shape[key])
            have = _parse_iso(got[key])
            if want != have or want.utcoffset() != have.utcoffset():
                problems.append(f"{tag} {key}: {got[key]} != {shape[key]}")
        have_files = {f["path"]: f for f in got["files"]}
        for fc in shape["files"]:
            g = have_files.pop(fc["path"], None)
            if g is None:
                # A deletion is listed under its own path; a rename not detected
                # shows up as delete + add.
                problems.append(f"{tag} {fc['status']} {fc['path']}: missing from numstat")
                continue
            if fc["status"] == "R" and g["old_path"] != fc["old_path"]:
                problems.append(
                    f"{tag} R {fc['old_path']} -> {fc['path']}: shown as "
                    f"{'rename from ' + g['old_path'] if g['old_path'] else 'add'}"
                )
                continue
            if fc["status"] != "R" and g["old_path"] is not None:
                problems.append(f"{tag} {fc['status']} {fc['path']}: shown as rename")
            if fc["binary"]:
                if g["added"] is not None:
                    problems.append(f"{tag} {fc['path']}: binary shown as text")
                continue
            if (g["added"], g["deleted"]) != (fc["added"], fc["deleted"]):
                problems.append(
                    f"{tag} {fc['status']} {fc['path']}: +{g['added']}/-{g['deleted']} "
                    f"!= +{fc['added']}/-{fc['deleted']}"
                )
        for path in have_files:
            problems.append(f"{tag} {path}: extra entry in numstat")
    return problems


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.replay",
        description="Replay recorded commit shapes into a fresh git repository.",
    )
    parser.add_argument("dest", type=Path, help="new repository directory (must be empty)")
    parser.add_argument("--shapes", type=Path, default=DEFAULT_SHAPES, help="shapes .jsonl file")
    parser.add_argument("--since", type=date.fromisoformat, default=None, help="first day")
    parser.add_argument("--until", type=date.fromisoformat, default=None, help="day after last")
    parser.add_argument("--tz", default="Asia/Shanghai", help="time zone of --since/--until")
    parser.add_argument("--seed", type=int, default=0, help="content seed")
    parser.add_argument("--bare", action="store_true", help="create a bare repository")
    parser.add_argument(
        "--verify", action="store_true", help="compare git log --numstat with the shapes"
    )
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    shapes = load_shapes(args.shapes, args.since, args.until, args.tz)
    t1 = time.perf_counter()
    shas, notes = _build(shapes, args.dest, bare=args.bare, seed=args.seed)
    t2 = time.perf_counter()
    nfiles = sum(len(s["files"]) for s in shapes)
    print(
        f"replayed {len(shas)} commits ({nfiles} file changes) into {args.dest} "
        f"in {t2 - t1:.2f}s (load {t1 - t0:.2f}s)"
    )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.verify:
        problems = verify_repo(shapes, args.dest)
        t3 = time.perf_counter()
        print(f"verify: {len(problems)} differences ({t3 - t2:.2f}s)")
        for p in problems:
            print(f"  {p}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
