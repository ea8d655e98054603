"""Read commits from a git repository through git's plumbing commands.

Why plumbing and not a library: git itself is the only reader that agrees
with git on every corner of history (encodings, renames, submodules, shallow
boundaries). To stay fast, a whole window is read with a handful of
processes: one ``rev-list`` walk, one ``cat-file --batch`` for commit objects
and blobs, one ``diff-tree --stdin`` for every diff.

Repositories are written by strangers, so nothing in them may run code:
hooks, fsmonitor, external diff drivers and textconv filters are disabled on
every call.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from repoherald.errors import SourceError, UsageError
from repoherald.models import Commit, FileChange, FileStatus, Person

_SAFE_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "diff.external=",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "core.quotePath=false",
)

# Give up on a remote that stalls instead of hanging a scheduled run; the
# user's own settings win when present.
_ENV_DEFAULTS = {
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
    "GIT_HTTP_LOW_SPEED_TIME": "60",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=30",
}

_ENV_OVERRIDES = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",
}

_STATUS = {
    "A": FileStatus.ADDED,
    "M": FileStatus.MODIFIED,
    "D": FileStatus.DELETED,
    "R": FileStatus.RENAMED,
    "C": FileStatus.COPIED,
    "T": FileStatus.TYPE_CHANGED,
}

_ZERO = re.compile(r"^0+$")


def _git_env() -> dict[str, str]:
    env = {**_ENV_DEFAULTS, **os.environ}
    env.update(_ENV_OVERRIDES)
    return env


def is_remote(source: str) -> bool:
    """True for clone URLs (``https://…``, ``file://…``, ``git@host:path``)."""
    return "://" in source or bool(re.match(r"^[\w.-]+@[\w.-]+:", source))


# What git appends to every failed remote operation; the cause is the line before.
_BOILERPLATE = (
    "fatal: Could not read from remote repository.",
    "Please make sure you have the correct access rights",
    "and the repository exists.",
)


def _last_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    useful = [ln for ln in lines if ln not in _BOILERPLATE]
    return (useful or lines or ["no message from git"])[-1]


@dataclass(frozen=True, slots=True)
class RepoIdentity:
    """How a repository is named and linked in the report."""

    name: str
    web_url: str | None


def identity_from_url(url: str) -> RepoIdentity:
    """``https://github.com/owner/name.git`` -> ``owner/name`` with a web URL.

    Only hosts known to serve ``/commit/<sha>`` pages get a web URL; for
    anything else the report shows SHAs without links rather than dead links.
    """
    scp = re.match(r"^[\w.-]+@([\w.-]+):(.+)$", url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        parts = urlsplit(url)
        host, path = parts.hostname or "", parts.path
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    segments = [s for s in path.split("/") if s]
    name = "/".join(segments[-2:]) if len(segments) >= 2 else (segments[-1] if segments else url)
    web = None
    if host in ("github.com", "gitlab.com", "codeberg.org") and len(segments) >= 2:
        web = f"https://{host}/{'/'.join(segments)}"
    return RepoIdentity(name=name, web_url=web)


class GitRepo:
    """A git directory (bare or not) and the plumbing calls repoherald needs."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._cat: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the long-lived ``cat-file`` process, if one was started."""
        if self._cat is not None:
            if self._cat.stdin:
                self._cat.stdin.close()
            self._cat.wait()
            if self._cat.stdout:
                self._cat.stdout.close()
            self._cat = None

    def _argv(self, *args: str) -> list[str]:
        return ["git", *_SAFE_CONFIG, f"--git-dir={self.git_dir}", *args]

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        """Run a git command in this repository and return its stdout."""
        proc = subprocess.run(
            self._argv(*args),
            input=input,
            capture_output=True,
            env=_git_env(),
            check=False,
        )
        if check and proc.returncode != 0:
            raise SourceError(f"git {args[0]} failed in {self.git_dir}: {_last_line(proc.stderr)}")
        return proc.stdout

    # -- refs ---------------------------------------------------------------

    def default_branch(self) -> str:
        """The branch HEAD points at (the clone's default branch for mirrors)."""
        out = self.run("symbolic-ref", "--quiet", "HEAD", check=False).decode().strip()
        head = out[len("refs/heads/") :] if out.startswith("refs/heads/") else None
        if head is not None and self.ref_exists(head):
            return head
        # HEAD is detached, or names an unborn branch (a bare repository made
        # with ``git init --bare`` whose HEAD says master while only main was
        # pushed): fall back to the usual names before giving up.
        for candidate in ("main", "master"):
            if self.ref_exists(candidate):
                return candidate
        if head is not None:
            return head  # an empty repository: resolve_branch reports "no commits"
        raise SourceError(
            f"cannot tell the default branch of {self.git_dir}: pass --branch explicitly"
        )

    def ref_exists(self, branch: str) -> bool:
        proc = subprocess.run(
            self._argv("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}"),
            capture_output=True,
            env=_git_env(),
            check=False,
        )
        return proc.returncode == 0

    def resolve_branch(self, branch: str) -> str | None:
        """Tip SHA of ``branch``; None when the branch exists but has no commits."""
        if branch.startswith("-") or not branch.strip():
            raise UsageError(f"invalid branch name {branch!r}")
        out = subprocess.run(
            self._argv("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}"),
            capture_output=True,
            env=_git_env(),
            check=False,
        )
        if out.returncode != 0:
            if not self.run("for-each-ref", "--count=1", "refs/heads/").strip():
                return None
            names = self.run("for-each-ref", "--format=%(refname:short)", "refs/heads/")
            known = ", ".join(names.decode("utf-8", "replace").split()[:10])
            raise UsageError(
                f"unknown branch {branch!r} in {self.git_dir}: known branches: {known}"
            )
        return out.stdout.decode().strip()

    def shallow_commits(self) -> set[str]:
        """Commits whose parents are missing because the mirror is shallow."""
        path = self.git_dir / "shallow"
        if not path.is_file():
            return set()
        return set(path.read_text(encoding="ascii").split())

    # -- history ------------------------------------------------------------

    def first_parent(self, tip: str) -> Iterator[tuple[str, int]]:
        """Yield (sha, committer time) along the first-parent chain, newest first.

        The whole chain is walked on purpose: ``--since`` stops early when
        dates are out of order (rebases, clock skew), and a walk of tens of
        thousands of commits costs well under a second.
        """
        proc = subprocess.Popen(
            self._argv("rev-list", "--first-parent", "--timestamp", tip),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_git_env(),
        )
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                ts, sha = line.split()
                yield sha.decode("ascii"), int(ts)
        finally:
            proc.stdout.close()
            stderr = proc.stderr.read() if proc.stderr else b""
            if proc.stderr:
                proc.stderr.close()
            code = proc.wait()
        if code != 0:
            raise SourceError(f"git rev-list failed in {self.git_dir}: {_last_line(stderr)}")

    # -- objects ------------------------------------------------------------

    def _cat_file(self) -> subprocess.Popen[bytes]:
        if self._cat is None:
            self._cat = subprocess.Popen(
                self._argv("cat-file", "--batch"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_git_env(),
            )
        return self._cat

    def read_object(self, oid: str) -> tuple[str, bytes] | None:
        """(type, content) of an object, or None when it is missing."""
        cat = self._cat_file()
        assert cat.stdin is not None and cat.stdout is not None
        cat.stdin.write(oid.encode("ascii") + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline()
        if not header:
            raise SourceError(f"git cat-file stopped unexpectedly in {self.git_dir}")
        parts = header.split()
        if len(parts) < 3 or parts[1] == b"missing":
            return None
        size = int(parts[2])
        data = cat.stdout.read(size)
        cat.stdout.read(1)
        return parts[1].decode("ascii"), data

    def read_commits(self, shas: Iterable[str]) -> dict[str, Commit]:
        """Parse commit objects ourselves so every encoding quirk is handled once."""
        out: dict[str, Commit] = {}
        for sha in shas:
            obj = self.read_object(sha)
            if obj is None or obj[0] != "commit":
                raise SourceError(f"commit {sha} is missing from {self.git_dir}: fetch it again")
            out[sha] = parse_commit(sha, obj[1])
        return out

    def read_blob(self, oid: str, max_bytes: int) -> bytes | None:
        """Blob content, or None when missing or larger than ``max_bytes``."""
        if not oid or _ZERO.match(oid):
            return None
        obj = self.read_object(oid)
        if obj is None or obj[0] != "blob" or len(obj[1]) > max_bytes:
            return None
        return obj[1]

    def blob_sizes(self, oids: Iterable[str]) -> dict[str, int]:
        """Sizes of blobs without reading them (for binary and huge files)."""
        wanted = [o for o in dict.fromkeys(oids) if o and not _ZERO.match(o)]
        if not wanted:
            return {}
        out = self.run(
            "cat-file", "--batch-check", input=("\n".join(wanted) + "\n").encode("ascii")
        )
        sizes: dict[str, int] = {}
        for line in out.decode("ascii", "replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                sizes[parts[0]] = int(parts[2])
        return sizes

    def diff_first_parent(self, commits: Iterable[Commit]) -> dict[str, list[FileChange]]:
        """File changes of each commit against its first parent, in one process.

        Merges are diffed against their first parent (what the branch gained);
        root commits against the empty tree.
        """
        commits = list(commits)
        if not commits:
            return {}
        lines = []
        for c in commits:
            lines.append(f"{c.sha} {c.parents[0]}" if c.parents else c.sha)
        out = self.run(
            "diff-tree",
            "--stdin",
            "-r",
            "-z",
            "-M",
            "--raw",
            "--numstat",
            "--always",
            "--root",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=none",
            input=("\n".join(lines) + "\n").encode("ascii"),
        )
        return parse_diff_tree(out, [c.sha for c in commits])

    def patch(self, commit: Commit, max_bytes: int = 8_000_000) -> tuple[str, bool]:
        """The unified diff of ``commit`` against its first parent, and whether it was cut.

        The options match :meth:`diff_first_parent` (``-r -M``, submodules
        shown), so the files come in the same order as its
        :class:`FileChange` list and the two can be paired file by file.
        Merges are diffed against their first parent, root commits against
        the empty tree.

        One commit can hold gigabytes of diff (a vendored tree, a data dump),
        so stdout is read in chunks and git is killed as soon as more than
        ``max_bytes`` have arrived; the text then ends at the last complete
        line within ``max_bytes`` and the flag is True. Bytes that are not
        UTF-8 are replaced: the text is for reading, not for applying.
        """
        revs = [commit.parents[0], commit.sha] if commit.parents else ["--root", commit.sha]
        proc = subprocess.Popen(
            self._argv(
                "diff-tree",
                "-p",
                "-M",
                "-r",
                "--no-commit-id",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
                "-U3",
                "--ignore-submodules=none",
                *revs,
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_git_env(),
        )
        assert proc.stdout is not None and proc.stderr is not None
        # stderr is read only at the end: diff-tree writes at most a few
        # warning lines there, far below what a pipe holds.
        out_fd = proc.stdout.fileno()
        buf = bytearray()
        finished = False
        try:
            while len(buf) <= max_bytes:
                chunk = os.read(out_fd, 1 << 16)
                if not chunk:
                    finished = True
                    break
                buf += chunk
        finally:
            if not finished:
                # Cut (or interrupted): git may still have gigabytes to write.
                proc.kill()
                proc.stdout.close()
                proc.stderr.close()
                proc.wait()
        if not finished:
            end = buf.rfind(b"\n", 0, max(max_bytes, 0))
            return bytes(buf[: end + 1]).decode("utf-8", "replace"), True
        proc.stdout.close()
        stderr = proc.stderr.read()
        proc.stderr.close()
        if proc.wait() != 0:
            raise SourceError(f"git diff-tree failed in {self.git_dir}: {_last_line(stderr)}")
        return bytes(buf).decode("utf-8", "replace"), False


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
                    old_mode="" if _ZERO.match(old_mode) else old_mode,
                    new_mode="" if _ZERO.match(new_mode) else new_mode,
                    old_blob="" if _ZERO.match(old_blob) else old_blob,
                    new_blob="" if _ZERO.match(new_blob) else new_blob,
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


# -- opening sources ---------------------------------------------------------


def open_local(path: str) -> GitRepo:
    """Open a work tree or bare repository at ``path``."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"repository path {path} does not exist: check --repo")
    proc = subprocess.run(
        ["git", *_SAFE_CONFIG, "-C", str(p), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        env=_git_env(),
        check=False,
    )
    if proc.returncode != 0:
        raise UsageError(f"{path} is not a git repository: point --repo at a clone or a URL")
    return GitRepo(Path(proc.stdout.decode("utf-8", "surrogateescape").strip()))


def mirror_path(mirrors_dir: Path, url: str) -> Path:
    """Where the bare mirror of ``url`` lives in the cache (stable, readable, unique)."""
    ident = identity_from_url(url)
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", ident.name)[:80] or "repo"
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return mirrors_dir / f"{readable}-{digest}.git"


def _run_git(args: list[str], what: str, url: str) -> None:
    proc = subprocess.run(
        ["git", *_SAFE_CONFIG, *args], capture_output=True, env=_git_env(), check=False
    )
    if proc.returncode != 0:
        raise SourceError(
            f"cannot {what} {url}: {_last_line(proc.stderr)} (check the URL, network and access)"
        )


def ensure_mirror(url: str, mirrors_dir: Path, branch: str | None, since: int) -> GitRepo:
    """Clone ``url`` once as a shallow bare mirror, or fetch what is new.

    History is fetched back to two days before ``since`` (seconds since the
    epoch) and one commit beyond, so each commit in the window has its first
    parent to diff against, without ever downloading the full history of a
    large project. Asking for an older window deepens the mirror.
    """
    dest = mirror_path(mirrors_dir, url)
    cutoff = str(since - 2 * 86400)
    if not (dest / "HEAD").is_file():
        mirrors_dir.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".partial")
        if tmp.exists():
            _remove_tree(tmp)
        args = ["clone", "--bare", "--quiet", "--no-tags", f"--shallow-since={cutoff}"]
        if branch:
            args += ["--branch", branch, "--single-branch"]
        else:
            args += ["--single-branch"]
        proc = subprocess.run(
            ["git", *_SAFE_CONFIG, *args, "--", url, str(tmp)],
            capture_output=True,
            env=_git_env(),
            check=False,
        )
        if proc.returncode != 0 and b"no commits selected" in proc.stderr:
            _remove_tree(tmp)
            args = [a for a in args if not a.startswith("--shallow-since")] + ["--depth=1"]
            proc = subprocess.run(
                ["git", *_SAFE_CONFIG, *args, "--", url, str(tmp)],
                capture_output=True,
                env=_git_env(),
                check=False,
            )
        if proc.returncode != 0:
            _remove_tree(tmp)
            msg = _last_line(proc.stderr)
            if branch and ("not found" in msg or "Remote branch" in msg):
                raise UsageError(f"unknown branch {branch!r} in {url}: check --branch")
            raise SourceError(f"cannot clone {url}: {msg} (check the URL, network and access)")
        os.replace(tmp, dest)
        repo = GitRepo(dest)
        repo.run("config", "remote.origin.url", url)
    else:
        repo = GitRepo(dest)
        name = branch or repo.default_branch()
        refspec = f"+refs/heads/{name}:refs/heads/{name}"
        proc = subprocess.run(
            repo._argv("fetch", "--quiet", "--no-tags", url, refspec),
            capture_output=True,
            env=_git_env(),
            check=False,
        )
        if proc.returncode != 0:
            msg = _last_line(proc.stderr)
            if "couldn't find remote ref" in msg:
                raise UsageError(f"unknown branch {name!r} in {url}: check --branch")
            raise SourceError(f"cannot fetch {url}: {msg} (check the URL, network and access)")
    return repo


def deepen(repo: GitRepo, url: str, branch: str, *, by: int = 0, since: int = 0) -> None:
    """Fetch more history behind the shallow boundary.

    ``by`` generations, or everything committed after ``since`` (seconds since
    the epoch). Never makes the mirror shallower than it is.
    """
    refspec = f"+refs/heads/{branch}:refs/heads/{branch}"
    how = f"--deepen={by}" if by else f"--shallow-since={since}"
    _run_git(
        [f"--git-dir={repo.git_dir}", "fetch", "--quiet", "--no-tags", how, url, refspec],
        "deepen the mirror of",
        url,
    )


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
