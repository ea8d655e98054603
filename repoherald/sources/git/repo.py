"""Read commits from a git repository through git's plumbing commands.

Why plumbing and not a library: git itself is the only reader that agrees
with git on every corner of history (encodings, renames, submodules, shallow
boundaries). To stay fast, a whole window is read with a handful of
processes: one ``rev-list`` walk, one ``cat-file --batch`` for commit objects
and blobs, one ``diff-tree --stdin`` for every diff.

Repositories are written by strangers, so nothing in them may run code:
hooks, fsmonitor, external diff drivers and textconv filters are disabled on
every call, every value that came from a user or a repository is passed after
``--end-of-options`` (so it can never be read as an option), and reading a
repository may not use any transport at all (``GIT_ALLOW_PROTOCOL`` empty):
a partial clone whose own config names a promisor remote cannot make a read
fetch, which is where a repository's config could otherwise run a command
(a credential helper, ``core.gitProxy``, a ``uploadpack`` path).
Fetching is :mod:`repoherald.sources.git.mirror`'s job, with its own allow-list.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import secrets
import select
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from repoherald.errors import SourceError, UsageError
from repoherald.models import Commit, FileChange
from repoherald.sources.git.parse import ZERO, parse_commit, parse_diff_tree

SAFE_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "diff.external=",
    "-c",
    "core.quotePath=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.ext.allow=never",
)
"""Options for every git call; transports are re-allowed one by one where a fetch needs them."""

# Give up on a remote that stalls instead of hanging a scheduled run; the
# user's own settings win when present. An empty GIT_PROXY_COMMAND makes git
# ignore ``core.gitProxy``, a command a repository's own config could name.
_ENV_DEFAULTS = {
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
    "GIT_HTTP_LOW_SPEED_TIME": "60",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=30",
    "GIT_PROXY_COMMAND": "",
}

_ENV_OVERRIDES = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PROTOCOL_FROM_USER": "0",
}

# Inherited from a calling git hook or shell, these would make git read some
# other repository than the one named by --git-dir / -C.
_REPOSITORY_SELECTORS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)


def git_env(*, allow: Iterable[str] = (), extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git process: no prompts, C locale, only the ``allow``ed transports.

    ``GIT_ALLOW_PROTOCOL`` is set even when empty because, unlike
    ``-c protocol.allow=never``, it overrides whatever a repository's own
    config says about ``protocol.<name>.allow``.
    """
    env = {**_ENV_DEFAULTS, **os.environ}
    for name in _REPOSITORY_SELECTORS:
        env.pop(name, None)
    env.update(_ENV_OVERRIDES)
    env["GIT_ALLOW_PROTOCOL"] = ":".join(allow)
    if extra:
        env.update(extra)
    return env


# What git appends to every failed remote operation; the cause is the line before.
_BOILERPLATE = (
    "fatal: Could not read from remote repository.",
    "Please make sure you have the correct access rights",
    "and the repository exists.",
)


def last_line(stderr: bytes) -> str:
    """The line of git's stderr that says what went wrong."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    useful = [ln for ln in lines if ln not in _BOILERPLATE]
    return (useful or lines or ["no message from git"])[-1]


def run_git(
    argv: list[str], *, input: bytes | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run git to completion, capturing output; a git that cannot start is a SourceError."""
    try:
        return subprocess.run(
            argv,
            input=input,
            capture_output=True,
            env=dict(env) if env is not None else git_env(),
            check=False,
        )
    except OSError as exc:
        raise SourceError(_cannot_start(exc)) from exc


def popen_git(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start a long-running git process (a walk, a patch, ``cat-file --batch``)."""
    try:
        return subprocess.Popen(argv, env=git_env(), **kwargs)
    except OSError as exc:
        raise SourceError(_cannot_start(exc)) from exc


def _cannot_start(exc: OSError) -> str:
    return f"cannot run git ({exc.strerror or exc}): install git and make sure it is on PATH"


def check_branch_name(branch: str) -> None:
    """Refuse a branch that git could take for an option, or that no ref can be called."""
    if not branch.strip() or branch.startswith("-") or any(ord(ch) < 32 for ch in branch):
        raise UsageError(f"invalid branch name {branch!r}: check the repository's branch setting")


_DIFF_OPTIONS = (
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
)
"""How :meth:`GitRepo.diff_first_parent` asks: every file, renames found, line counts."""


def _write_all(pipe: Any, data: bytes) -> None:
    """Write and flush ``data``; a process that died is reported by its reader."""
    with contextlib.suppress(OSError):
        pipe.write(data)
        pipe.flush()


class GitRepo:
    """A git directory (bare or not) and the plumbing calls repoherald needs."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._cat: subprocess.Popen[bytes] | None = None
        self._diff: subprocess.Popen[bytes] | None = None
        self._diff_err: Any = None
        self._diff_err_seen = 0

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
        """Stop the long-lived ``cat-file`` and ``diff-tree`` processes, if they were started."""
        if self._cat is not None:
            if self._cat.stdin:
                self._cat.stdin.close()
            self._cat.wait()
            if self._cat.stdout:
                self._cat.stdout.close()
            self._cat = None
        self._stop_diff_tree()

    def _stop_diff_tree(self) -> None:
        if self._diff is not None:
            if self._diff.stdin:
                with contextlib.suppress(OSError):  # it died with input still buffered
                    self._diff.stdin.close()
            self._diff.wait()
            if self._diff.stdout:
                self._diff.stdout.close()
            self._diff = None
        if self._diff_err is not None:
            self._diff_err.close()
            self._diff_err = None

    def argv(self, *args: str) -> list[str]:
        """The full command line of ``git <args>`` in this repository, safe options included."""
        return ["git", *SAFE_CONFIG, f"--git-dir={self.git_dir}", *args]

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        """Run a git command in this repository and return its stdout."""
        proc = run_git(self.argv(*args), input=input)
        if check and proc.returncode != 0:
            raise self._failure(args[0], proc.stderr)
        return proc.stdout

    def _failure(self, command: str, stderr: bytes) -> SourceError:
        msg = last_line(stderr)
        if "promisor remote" in msg:
            return SourceError(
                f"{self.git_dir} is a partial clone missing objects that reading it would have to"
                f" fetch ({msg}): repoherald never fetches into a local clone, so give its clone"
                " URL as the source instead"
            )
        return SourceError(f"git {command} failed in {self.git_dir}: {msg}")

    def origin_url(self) -> str | None:
        """``remote.origin.url`` as configured, or None."""
        out = self.run("config", "--get", "remote.origin.url", check=False)
        return out.decode("utf-8", "replace").strip() or None

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
            f"cannot tell the default branch of {self.git_dir}: set the repository's branch"
        )

    def _verify_branch(self, branch: str) -> subprocess.CompletedProcess[bytes]:
        rev = f"refs/heads/{branch}^{{commit}}"
        return run_git(self.argv("rev-parse", "--verify", "--quiet", "--end-of-options", rev))

    def ref_exists(self, branch: str) -> bool:
        return self._verify_branch(branch).returncode == 0

    def resolve_branch(self, branch: str) -> str | None:
        """Tip SHA of ``branch``; None when the repository has no branch with commits at all."""
        check_branch_name(branch)
        out = self._verify_branch(branch)
        if out.returncode != 0:
            if not self.run("for-each-ref", "--count=1", "refs/heads/").strip():
                return None
            names = self.run("for-each-ref", "--format=%(refname:short)", "refs/heads/")
            raise UsageError(
                unknown_branch(branch, self.git_dir, names.decode("utf-8", "replace").split(),
                               self._default_or_none())
            )  # fmt: skip
        return out.stdout.decode().strip()

    def _default_or_none(self) -> str | None:
        try:
            return self.default_branch()
        except SourceError:
            return None

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
        proc = popen_git(
            self.argv("rev-list", "--first-parent", "--timestamp", "--end-of-options", tip),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
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
            raise self._failure("rev-list", stderr)

    # -- objects ------------------------------------------------------------

    def _cat_file(self) -> subprocess.Popen[bytes]:
        if self._cat is None:
            self._cat = popen_git(
                self.argv("cat-file", "--batch"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._cat

    def read_object(self, oid: str) -> tuple[str, bytes] | None:
        """(type, content) of an object, or None when it is missing."""
        cat = self._cat_file()
        assert cat.stdin is not None and cat.stdout is not None
        try:
            cat.stdin.write(oid.encode("ascii") + b"\n")
            cat.stdin.flush()
            header = cat.stdout.readline()
        except OSError:  # the process died: a broken pipe
            header = b""
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
        if not oid or ZERO.match(oid):
            return None
        obj = self.read_object(oid)
        if obj is None or obj[0] != "blob" or len(obj[1]) > max_bytes:
            return None
        return obj[1]

    def blob_sizes(self, oids: Iterable[str]) -> dict[str, int]:
        """Sizes of blobs without reading them (for binary and huge files)."""
        wanted = [o for o in dict.fromkeys(oids) if o and not ZERO.match(o)]
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
        """File changes of each commit against its first parent.

        Merges are diffed against their first parent (what the branch gained);
        root commits against the empty tree. One ``diff-tree --stdin`` process
        serves every call (a run asks once per day): starting git and warming
        its caches again each time cost as much as the diffs themselves.
        """
        commits = list(commits)
        if not commits:
            return {}
        lines = []
        for c in commits:
            lines.append(f"{c.sha} {c.parents[0]}" if c.parents else c.sha)
        out = self._diff_batch(("\n".join(lines) + "\n").encode("ascii"))
        try:
            return parse_diff_tree(out, [c.sha for c in commits])
        except SourceError:
            stderr = self._diff_stderr()
            if stderr.strip():
                raise self._failure("diff-tree", stderr) from None
            raise

    def _diff_batch(self, request: bytes) -> bytes:
        """What the long-lived ``diff-tree --stdin`` prints for ``request``.

        diff-tree echoes a line that is not an object name and flushes its
        output, so such a line, with a random part no path can guess, marks
        where the answer ends. A request larger than the pipe surely holds
        is written by a thread while this one reads: a day's diffs can be more
        than a pipe holds. A smaller one (most days: 80 bytes a commit) is
        written at once, as git has read the previous one to its end marker,
        which leaves the pipe empty.
        """
        if self._diff is None:
            # A file, not a pipe: nobody reads stderr while git runs, and a
            # pipe full of rename warnings would stall it.
            self._diff_err = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
            self._diff_err_seen = 0
            self._diff = popen_git(
                self.argv("diff-tree", "--stdin", *_DIFF_OPTIONS),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._diff_err,
            )
        proc = self._diff
        assert proc.stdin is not None and proc.stdout is not None
        mark = b"repoherald-end-of-batch " + secrets.token_hex(16).encode("ascii") + b"\n"
        data = request + mark
        writer = None
        if len(data) <= select.PIPE_BUF:
            _write_all(proc.stdin, data)
        else:
            writer = threading.Thread(target=_write_all, args=(proc.stdin, data))
            writer.start()
        out = bytearray()
        fd = proc.stdout.fileno()
        while not out.endswith(mark):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            out += chunk
        if writer is not None:
            writer.join()
        if not out.endswith(mark):
            stderr = self._diff_stderr()
            self._stop_diff_tree()
            raise self._failure("diff-tree", stderr)
        return bytes(out[: -len(mark)])

    def _diff_stderr(self) -> bytes:
        """What ``diff-tree`` wrote to stderr since this was last asked."""
        err = self._diff_err
        if err is None:
            return b""
        err.seek(self._diff_err_seen)
        data: bytes = err.read()
        self._diff_err_seen += len(data)
        return data

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
        revs = [commit.parents[0], commit.sha] if commit.parents else [commit.sha]
        root = [] if commit.parents else ["--root"]
        proc = popen_git(
            self.argv(
                "diff-tree", "-p", "-M", "-r", "--no-commit-id", "--no-ext-diff", "--no-textconv",
                "--no-color", "-U3", "--ignore-submodules=none", *root, "--end-of-options", *revs,
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
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
            raise self._failure("diff-tree", stderr)
        return bytes(buf).decode("utf-8", "replace"), False


def open_local(path: str) -> GitRepo:
    """Open a work tree or bare repository at ``path`` (read in place, never fetched)."""
    if path.startswith("-"):
        raise UsageError(
            f"repository source {path!r} begins with '-': write a path as ./{path} or use a URL"
        )
    p = Path(path)
    if not p.exists():
        raise UsageError(
            f"repository path {path} does not exist: check the repository's source setting"
        )
    proc = run_git(["git", *SAFE_CONFIG, "-C", str(p), "rev-parse", "--absolute-git-dir"])
    if proc.returncode != 0:
        raise UsageError(
            f"{path} is not a git repository: point the source at a clone, a bare repository"
            " or a clone URL"
        )
    return GitRepo(Path(proc.stdout.decode("utf-8", "surrogateescape").strip()))


def unknown_branch(branch: str, where: object, names: list[str], default: str | None) -> str:
    """The error for a branch that does not exist: the closest names first, and the default.

    A typo (``mian``) is what this usually is, so the names most like it lead
    the list instead of the first ten in alphabetical order.
    """
    close = difflib.get_close_matches(branch, names, n=10, cutoff=0.5)
    shown = (close + [n for n in names if n not in close])[:10]
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    line = f"unknown branch {branch!r} in {where}:"
    if close:
        line += f" did you mean {close[0]!r}?"
    if default is not None:
        line += f" the default branch is {default!r} (used when no branch is set);"
    return f"{line} branches: {', '.join(shown)}{more}"
