"""Build real git repositories for tests, with exact control over every byte.

Two levels:

* porcelain-ish helpers (:meth:`GitFixture.write`, :meth:`GitFixture.commit`)
  that run ``git`` with ``GIT_AUTHOR_DATE`` / ``GIT_COMMITTER_DATE`` and
  identity variables pinned, so the result is the same on every machine;
* plumbing helpers (:meth:`GitFixture.raw_commit`, :meth:`GitFixture.mktree`)
  that write objects with ``git hash-object`` / ``git mktree`` so a test can
  create things porcelain refuses or silently "fixes" (a non-UTF-8 message
  without an ``encoding`` header, odd identity lines, arbitrary parents).

Dates are given as ``datetime`` (must be aware) or as git's raw form
``"<epoch> <+hhmm>"``; the offset recorded in the commit is the datetime's own.
Nothing here imports repoherald.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

DEFAULT_AUTHOR = ("Ada Author", "ada@example.com")
DEFAULT_COMMITTER = ("Cid Committer", "cid@example.com")

Date = datetime | str


def git_date(when: Date) -> str:
    """``datetime`` (aware) -> git's raw ``"<epoch> +hhmm"``; strings pass through."""
    if isinstance(when, str):
        return when
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError("fixture dates must be timezone-aware")
    off = when.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{int(when.timestamp())} {sign}{minutes // 60:02d}{minutes % 60:02d}"


def _base_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_") and k not in ("EMAIL", "LANG", "LANGUAGE")
    }
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
            "TZ": "UTC",
        }
    )
    return env


def run_git(
    cwd: Path | None,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> bytes:
    """Run ``git`` with an isolated configuration; return stdout (raises with stderr)."""
    full_env = _base_env()
    if env:
        full_env.update(env)
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=full_env,
        check=False,
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} failed ({proc.returncode}): "
            f"{proc.stderr.decode('utf-8', 'replace')}"
        )
    return proc.stdout


@dataclass
class GitFixture:
    """A repository under construction (work tree, or bare when ``bare=True``)."""

    path: Path
    bare: bool = False
    branch: str = "main"

    @classmethod
    def init(cls, path: Path, *, bare: bool = False, branch: str = "main") -> GitFixture:
        path.mkdir(parents=True, exist_ok=True)
        args = ["init", "--quiet", f"--initial-branch={branch}"]
        if bare:
            args.append("--bare")
        run_git(path, *args)
        fx = cls(path, bare, branch)
        # No user-level surprises: no autocrlf, no gc in the middle of a test.
        fx.git("config", "core.autocrlf", "false")
        fx.git("config", "gc.auto", "0")
        fx.git("config", "commit.gpgsign", "false")
        return fx

    # -- running git ----------------------------------------------------------

    def git(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> bytes:
        return run_git(self.path, *args, input=input, env=env, check=check)

    def text(self, *args: str) -> str:
        return self.git(*args).decode("utf-8", "replace").strip()

    def rev(self, ref: str = "HEAD") -> str:
        return self.text("rev-parse", "--verify", f"{ref}^{{commit}}")

    # -- the work tree ----------------------------------------------------------

    def write(self, rel: str, content: bytes | str, *, executable: bool = False) -> Path:
        """Write a file in the work tree (parents created) and stage it."""
        self._need_worktree()
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        data = content.encode("utf-8") if isinstance(content, str) else content
        target.write_bytes(data)
        target.chmod(0o755 if executable else 0o644)
        self.git("add", "--", rel)
        if executable:
            self.git("update-index", "--chmod=+x", "--", rel)
        return target

    def write_many(self, files: Mapping[str, bytes | str]) -> None:
        """Write and stage many files with a single ``git add`` (fast for thousands)."""
        self._need_worktree()
        for rel, content in files.items():
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        self.git("add", "--all", "--", ".")

    def chmod(self, rel: str, *, executable: bool) -> None:
        """Change only the mode bit git records."""
        self._need_worktree()
        (self.path / rel).chmod(0o755 if executable else 0o644)
        self.git("update-index", f"--chmod={'+' if executable else '-'}x", "--", rel)

    def symlink(self, rel: str, target: str) -> None:
        """Add a symbolic link ``rel`` -> ``target`` (mode 120000)."""
        self._need_worktree()
        link = self.path / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)
        self.git("add", "--", rel)

    def move(self, old: str, new: str) -> None:
        self._need_worktree()
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", "--", old, new)

    def remove(self, rel: str) -> None:
        self._need_worktree()
        self.git("rm", "--quiet", "--", rel)

    def add_gitlink(
        self, rel: str, sha: str, *, url: str = "https://example.invalid/sub.git"
    ) -> None:
        """Stage a submodule entry (mode 160000) pointing at ``sha``, plus .gitmodules."""
        self._need_worktree()
        gm = self.path / ".gitmodules"
        previous = gm.read_text() if gm.exists() else ""
        gm.write_text(previous + f'[submodule "{rel}"]\n\tpath = {rel}\n\turl = {url}\n')
        self.git("add", "--", ".gitmodules")
        self.git("update-index", "--add", "--cacheinfo", f"160000,{sha},{rel}")

    # -- commits ------------------------------------------------------------------

    def commit(
        self,
        message: bytes | str,
        *,
        when: Date,
        committed: Date | None = None,
        author: tuple[str, str] = DEFAULT_AUTHOR,
        committer: tuple[str, str] = DEFAULT_COMMITTER,
        encoding: str | None = None,
        allow_empty: bool = True,
        extra_args: Sequence[str] = (),
    ) -> str:
        """``git commit`` of the index with pinned identities and dates; returns the SHA.

        ``message`` bytes are passed to git untouched (``-F -``); with
        ``encoding`` git is told the bytes are in that encoding
        (``i18n.commitEncoding``) and records an ``encoding`` header.
        """
        self._need_worktree()
        data = message.encode("utf-8") if isinstance(message, str) else message
        args = []
        if encoding:
            args += ["-c", f"i18n.commitEncoding={encoding}"]
        args += ["commit", "--quiet", "--no-verify", "--cleanup=verbatim", "-F", "-"]
        if allow_empty:
            args.append("--allow-empty")
        if not data.strip():
            args.append("--allow-empty-message")
        args += list(extra_args)
        self.git(*args, input=data, env=self._ident_env(author, committer, when, committed))
        return self.rev()

    def merge(
        self,
        other: str,
        message: str,
        *,
        when: Date,
        committed: Date | None = None,
        author: tuple[str, str] = DEFAULT_AUTHOR,
        committer: tuple[str, str] = DEFAULT_COMMITTER,
    ) -> str:
        """``git merge --no-ff other`` into the current branch; returns the merge SHA."""
        self._need_worktree()
        self.git(
            "merge",
            "--quiet",
            "--no-ff",
            "--no-edit",
            "-m",
            message,
            other,
            env=self._ident_env(author, committer, when, committed),
        )
        return self.rev()

    def checkout(self, ref: str, *, create: bool = False) -> None:
        self._need_worktree()
        if create:
            self.git("checkout", "--quiet", "-b", ref)
        else:
            self.git("checkout", "--quiet", ref)

    # -- plumbing -------------------------------------------------------------------

    def hash_blob(self, content: bytes | str) -> str:
        data = content.encode("utf-8") if isinstance(content, str) else content
        return self.git("hash-object", "-w", "--stdin", input=data).decode().strip()

    def mktree(self, entries: Iterable[tuple[str, str, str]]) -> str:
        """Write a tree from ``(mode, name, oid)`` entries (one level, no slashes)."""
        lines = []
        for mode, name, oid in entries:
            kind = {"040000": "tree", "160000": "commit"}.get(mode, "blob")
            lines.append(f"{mode} {kind} {oid}\t{name}")
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        return self.git("mktree", "--missing", input=data).decode().strip()

    def tree_of(self, ref: str = "HEAD") -> str:
        return self.text("rev-parse", f"{ref}^{{tree}}")

    def raw_commit(
        self,
        message: bytes,
        *,
        tree: str | None = None,
        parents: Sequence[str] = (),
        when: Date,
        committed: Date | None = None,
        author: tuple[bytes | str, bytes | str] = DEFAULT_AUTHOR,
        committer: tuple[bytes | str, bytes | str] = DEFAULT_COMMITTER,
        encoding: bytes | str | None = None,
        update_ref: str | None = "HEAD",
    ) -> str:
        """Write a commit object byte for byte (``hash-object -t commit``).

        Unlike ``git commit`` this keeps a non-UTF-8 message exactly as given
        even without an ``encoding`` header. ``tree`` defaults to the empty tree.
        With ``update_ref`` the ref (HEAD follows the current branch) is moved.
        """

        def b(x: bytes | str) -> bytes:
            return x if isinstance(x, bytes) else x.encode("utf-8")

        tree = tree or self.mktree([])
        head = [b"tree " + tree.encode()]
        head += [b"parent " + p.encode() for p in parents]
        head.append(
            b"author " + b(author[0]) + b" <" + b(author[1]) + b"> " + git_date(when).encode()
        )
        head.append(
            b"committer "
            + b(committer[0])
            + b" <"
            + b(committer[1])
            + b"> "
            + git_date(committed or when).encode()
        )
        if encoding is not None:
            head.append(b"encoding " + b(encoding))
        raw = b"\n".join(head) + b"\n\n" + message
        sha = self.git("hash-object", "-t", "commit", "-w", "--stdin", input=raw).decode().strip()
        if update_ref:
            self.git("update-ref", update_ref, sha)
        return sha

    def cat(self, sha: str) -> bytes:
        """The raw object bytes (to assert what a fixture really wrote)."""
        return self.git("cat-file", "commit", sha)

    # -- internals ------------------------------------------------------------------

    def _need_worktree(self) -> None:
        if self.bare:
            raise RuntimeError("this helper needs a work tree; use the plumbing helpers")

    @staticmethod
    def _ident_env(
        author: tuple[str, str],
        committer: tuple[str, str],
        when: Date,
        committed: Date | None,
    ) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": author[0],
            "GIT_AUTHOR_EMAIL": author[1],
            "GIT_AUTHOR_DATE": git_date(when),
            "GIT_COMMITTER_NAME": committer[0],
            "GIT_COMMITTER_EMAIL": committer[1],
            "GIT_COMMITTER_DATE": git_date(committed or when),
        }


# -- running the real CLI --------------------------------------------------------


def _cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOHERALD_")}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def start_repoherald(*args: str, cwd: Path, stderr: Path) -> subprocess.Popen[str]:
    """``python -m repoherald ARGS`` started in the background (to run two at once, or to
    kill one mid-way); its stderr goes to the file ``stderr``, its stdout is captured."""
    import sys

    with stderr.open("w", encoding="utf-8") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "repoherald", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=_cli_env(),
        )


def run_repoherald(
    *args: str, cwd: Path, timeout: float = 600, pythonpath: Sequence[Path] = ()
) -> subprocess.CompletedProcess[str]:
    """``python -m repoherald ARGS`` in ``cwd`` with no REPOHERALD_* from the caller;
    ``pythonpath`` is put first on its PYTHONPATH (plugins installed without pip)."""
    import sys

    env = _cli_env()
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(
            [*(str(p) for p in pythonpath), *filter(None, [env.get("PYTHONPATH")])]
        )
    return subprocess.run(
        [sys.executable, "-m", "repoherald", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
        timeout=timeout,
        check=False,
    )
