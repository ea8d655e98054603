"""A real git repository read into GitHub REST JSON shapes (for :mod:`tests.github_server`).

Everything comes from git itself (``rev-list``, ``cat-file``, ``diff-tree``,
``ls-tree``), so what the test server answers is what GitHub would answer for
the same repository, down to the quirks that matter to a client:

* a commit list holds every commit reachable from ``sha`` whose committer date
  is inside ``since``/``until``, side branches included, newest first;
* a commit's ``files`` are diffed against its *first* parent (``-M`` rename
  detection, as the commit page shows a merge), with ``patch`` holding only
  the hunks (no ``diff --git`` header), omitted for binary files and for
  patches longer than ``patch_limit`` characters; a mode-only change has
  ``"sha": null``; a removed file carries the removed blob's SHA;
* dates are UTC with a ``Z``, messages lose their trailing newlines;
* trees list one directory (``mode``, ``type``, ``sha``, ``size`` for blobs),
  or with ``recursive`` everything below it by full path, cut at a limit and
  marked ``truncated`` like GitHub's; blobs are base64 with a newline every 60 characters.

Objects are addressed by SHA, so everything read is cached. Nothing here
imports repoherald.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

STATUS = {
    "A": "added",
    "D": "removed",
    "M": "modified",
    "R": "renamed",
    "C": "copied",
    "T": "changed",
}
ZERO = "0" * 40


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"})
    return env


def iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class RawCommit:
    sha: str
    tree: str
    parents: tuple[str, ...]
    author: tuple[str, str, int]
    committer: tuple[str, str, int]
    message: str


class GitShapes:
    """One repository on disk; ``base`` is the API URL prefix of ``/repos/{owner}/{name}``."""

    def __init__(self, path: Path, base: str, web: str) -> None:
        self.path = path
        self.base = base
        self.web = web
        self._lock = threading.Lock()
        self._commits: dict[str, RawCommit] = {}
        self._files: dict[str, list[dict[str, Any]]] = {}

    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args], input=input, capture_output=True, env=_env()
        )
        if check and proc.returncode != 0:
            raise RuntimeError(proc.stderr.decode("utf-8", "replace"))
        return proc.stdout

    # -- refs and history --------------------------------------------------------

    def resolve(self, ref: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return out.decode().strip() or None

    def branch_tip(self, branch: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
        return out.decode().strip() or None

    def is_empty(self) -> bool:
        return not self.git("for-each-ref", "refs/heads").strip()

    def reachable(self, tip: str, since: int | None, until: int | None) -> list[str]:
        """Every commit reachable from ``tip`` with a committer date in range, newest first."""
        out = self.git("rev-list", "--format=%ct", tip).decode()
        shas: list[str] = []
        lines = out.splitlines()
        for head, ts in zip(lines[0::2], lines[1::2], strict=True):
            t = int(ts)
            if (since is None or t >= since) and (until is None or t <= until):
                shas.append(head.split()[1])
        return shas

    # -- objects -------------------------------------------------------------------

    def raw(self, sha: str) -> RawCommit:
        with self._lock:
            hit = self._commits.get(sha)
        if hit is not None:
            return hit
        data = self.git("cat-file", "commit", sha)
        head, _, message = data.partition(b"\n\n")
        fields: dict[str, list[str]] = {}
        for line in head.decode("utf-8", "replace").split("\n"):
            key, _, value = line.partition(" ")
            fields.setdefault(key, []).append(value)

        def ident(value: str) -> tuple[str, str, int]:
            name, _, rest = value.partition(" <")
            email, _, when = rest.partition("> ")
            return name, email, int(when.split()[0])

        commit = RawCommit(
            sha=sha,
            tree=fields["tree"][0],
            parents=tuple(fields.get("parent", [])),
            author=ident(fields["author"][0]),
            committer=ident(fields["committer"][0]),
            message=message.decode("utf-8", "replace").rstrip("\n"),
        )
        with self._lock:
            self._commits[sha] = commit
        return commit

    def _person(self, who: tuple[str, str, int]) -> dict[str, Any]:
        return {"name": who[0], "email": who[1], "date": iso(who[2])}

    def commit_json(self, sha: str) -> dict[str, Any]:
        """An element of ``/commits`` (and the head of ``/commits/{sha}``)."""
        c = self.raw(sha)
        return {
            "sha": c.sha,
            "node_id": f"C_{c.sha[:12]}",
            "commit": {
                "author": self._person(c.author),
                "committer": self._person(c.committer),
                "message": c.message,
                "tree": {"sha": c.tree, "url": f"{self.base}/git/trees/{c.tree}"},
                "url": f"{self.base}/git/commits/{c.sha}",
                "comment_count": 0,
                "verification": {"verified": False, "reason": "unsigned"},
            },
            "url": f"{self.base}/commits/{c.sha}",
            "html_url": f"{self.web}/commit/{c.sha}",
            "author": None,
            "committer": None,
            "parents": [
                {"sha": p, "url": f"{self.base}/commits/{p}", "html_url": f"{self.web}/commit/{p}"}
                for p in c.parents
            ],
        }

    def git_commit_json(self, sha: str) -> dict[str, Any]:
        c = self.raw(sha)
        return {
            "sha": c.sha,
            "tree": {"sha": c.tree, "url": f"{self.base}/git/trees/{c.tree}"},
            "parents": [{"sha": p} for p in c.parents],
            "author": self._person(c.author),
            "committer": self._person(c.committer),
            "message": c.message,
        }

    def tree_json(
        self, sha: str, *, recursive: bool = False, limit: int | None = None
    ) -> dict[str, Any] | None:
        """One directory, or with ``recursive`` every entry below it (full paths, subtrees
        included, as ``?recursive=1`` answers); more than ``limit`` entries are cut there
        and marked ``truncated``, as GitHub does past 100,000 entries."""
        deep = ("-r", "-t") if recursive else ()
        out = self.git("ls-tree", "-l", "-z", *deep, sha, check=False)
        if not out and self.git("cat-file", "-t", sha, check=False).strip() != b"tree":
            return None
        entries = []
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, _, name = rec.partition(b"\t")
            mode, kind, oid, size = meta.decode().split()
            entry: dict[str, Any] = {
                "path": name.decode("utf-8", "replace"),
                "mode": mode,
                "type": kind,
                "sha": oid,
                "url": f"{self.base}/git/{kind}s/{oid}",
            }
            if kind == "blob":
                entry["size"] = int(size)
            entries.append(entry)
        truncated = limit is not None and len(entries) > limit
        return {
            "sha": sha,
            "url": f"{self.base}/git/trees/{sha}",
            "tree": entries[:limit] if truncated else entries,
            "truncated": truncated,
        }

    def blob_json(self, sha: str) -> dict[str, Any] | None:
        if self.git("cat-file", "-t", sha, check=False).strip() != b"blob":
            return None
        data = self.git("cat-file", "blob", sha)
        b64 = base64.b64encode(data).decode()
        content = "\n".join(b64[i : i + 60] for i in range(0, len(b64), 60))
        return {
            "sha": sha,
            "node_id": f"B_{sha[:12]}",
            "size": len(data),
            "url": f"{self.base}/git/blobs/{sha}",
            "content": content + "\n",
            "encoding": "base64",
        }

    # -- the diff of a commit against its first parent ---------------------------

    def files(self, sha: str, patch_limit: int) -> list[dict[str, Any]]:
        with self._lock:
            hit = self._files.get(sha)
        if hit is not None:
            return hit
        c = self.raw(sha)
        revs = [c.parents[0], sha] if c.parents else ["--root", sha]
        common = ["-r", "-M", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none"]
        raw = self.git("diff-tree", "-z", "--raw", "--numstat", *common, *revs)
        patch = self.git("diff-tree", "-p", "--no-commit-id", "-U3", *common, *revs)
        entries = _parse_raw(raw, sha if not c.parents else None)
        chunks = _chunks(patch.decode("utf-8", "replace"), entries)
        files = []
        for (meta, stat), hunks in zip(entries, chunks, strict=True):
            files.append(self._file_json(sha, meta, stat, hunks, patch_limit))
        with self._lock:
            self._files[sha] = files
        return files

    def _file_json(
        self,
        sha: str,
        meta: tuple[str, str, str, str, str, str, str | None],
        stat: tuple[str, str],
        hunks: str | None,
        patch_limit: int,
    ) -> dict[str, Any]:
        _old_mode, _new_mode, old_blob, new_blob, letter, path, origin = meta
        binary = stat[0] == "-"
        added, deleted = (0, 0) if binary else (int(stat[0]), int(stat[1]))
        blob = old_blob if letter == "D" else new_blob
        if letter == "M" and old_blob == new_blob:
            blob = None  # what GitHub sends for a mode-only change
        d: dict[str, Any] = {
            "sha": blob,
            "filename": path,
            "status": STATUS.get(letter, "modified"),
            "additions": added,
            "deletions": deleted,
            "changes": added + deleted,
            "blob_url": f"{self.web}/blob/{sha}/{path}",
            "raw_url": f"{self.web}/raw/{sha}/{path}",
            "contents_url": f"{self.base}/contents/{path}?ref={sha}",
        }
        if origin is not None:
            d["previous_filename"] = origin
        if hunks and not binary and len(hunks) <= patch_limit:
            d["patch"] = hunks
        return d


def _parse_raw(
    out: bytes, root: str | None
) -> list[tuple[tuple[str, str, str, str, str, str, str | None], tuple[str, str]]]:
    tokens = out.split(b"\0")
    pos = 0
    if root is not None or (tokens and not tokens[0].startswith(b":")):
        pos = 1  # the commit id line of a root commit
    raws = []
    while pos < len(tokens) and tokens[pos].startswith(b":"):
        old_mode, new_mode, old_blob, new_blob, status = tokens[pos][1:].decode().split(" ")[:5]
        letter = status[:1]
        if letter in ("R", "C"):
            origin, path = tokens[pos + 1].decode(), tokens[pos + 2].decode()
            pos += 3
        else:
            origin, path = None, tokens[pos + 1].decode()
            pos += 2
        raws.append((old_mode, new_mode, old_blob, new_blob, letter, path, origin))
    stats = []
    for _ in raws:
        parts = tokens[pos].decode().split("\t")
        pos += 1
        if len(parts) == 3 and parts[2] == "":
            pos += 2
        stats.append((parts[0], parts[1]))
    return list(zip(raws, stats, strict=True))


def _chunks(patch: str, entries: Sequence[Any]) -> list[str | None]:
    """Each file's hunks (from the first ``@@``), paired with ``entries`` in order.

    A type change is two chunks in git's patch for one entry: they are joined.
    """
    parts = [p for p in patch.split("\ndiff --git ")]
    if parts and parts[0].startswith("diff --git "):
        parts[0] = parts[0][len("diff --git ") :]
    parts = [p for p in parts if p.strip()]
    out: list[str | None] = []
    i = 0
    for meta, _stat in entries:
        take = 2 if meta[4] == "T" and i + 1 < len(parts) else 1
        text = "\n".join(parts[i : i + take])
        i += take
        at = text.find("\n@@")
        out.append(text[at + 1 :].rstrip("\n") if at >= 0 else None)
    return out
