"""Shallow bare mirrors of remote repositories: where they live, how they are fetched.

A clone URL is cloned once into the mirrors directory with only the recent
history a report needs, fetched incrementally on later runs, and deepened
when an older day is asked for.

Fetching is the one place where a value from the configuration reaches a
git *transport*, so it is held tight:

* the URL always follows ``--end-of-options`` and a source that begins with
  ``-`` is refused outright (a ``--upload-pack=CMD`` "URL" would otherwise
  run ``CMD``);
* only the transports in :data:`NETWORK_TRANSPORTS` are allowed, plus
  ``file`` when the source itself is a path or a ``file://`` URL;
* credentials in a URL (``https://user:TOKEN@host/…``) never reach git's
  command line, the mirror's ``config`` or a message: git gets the URL
  without them and asks for them through a credential helper that exists only
  on that one command line and reads them from that one process's
  environment. The helper is scoped to the URL's host and replaces the user's
  own helpers for the call, so a helper like ``store`` cannot write the
  token to disk either.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from repoherald.config.locations import SCP_LIKE
from repoherald.errors import SourceError, UsageError
from repoherald.redact import register
from repoherald.sources.git.naming import identity_from_url
from repoherald.sources.git.repo import SAFE_CONFIG, GitRepo, git_env, last_line, run_git

DAY = 86400
HISTORY_MARGIN = 2 * DAY
"""A mirror reaches this far before the earliest requested day (time zones, clock skew)."""

NETWORK_TRANSPORTS = ("https", "http", "ssh", "git")
_SCHEMES = {
    "https": "https",
    "http": "http",
    "ssh": "ssh",
    "git+ssh": "ssh",
    "ssh+git": "ssh",
    "git": "git",
    "file": "file",
}
_SCP = SCP_LIKE
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
_USERNAME_SECRET_LENGTH = 12
"""A user name without a password is a token (``https://TOKEN@host``) when at least this long."""

# Answers only "get": a "store" or "erase" from git is ignored, nothing is written anywhere.
_HELPER = (
    '!f() { test "$1" = get || return 0; printf "username=%s\\npassword=%s\\n"'
    ' "$REPOHERALD_GIT_USERNAME" "$REPOHERALD_GIT_PASSWORD"; }; f'
)


@dataclass(frozen=True, slots=True)
class Remote:
    """A clone URL split into what may be shown or stored and what may not."""

    url: str
    """What git is given and the mirror's config keeps: no password, no token."""
    display: str
    """The URL without any user-info: for names, messages and the source identity."""
    transport: str
    """``https``, ``http``, ``ssh``, ``git`` or ``file``."""
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    legacy_key: str | None = field(default=None, repr=False)
    """Digest of the URL as written (credentials included): where older versions kept the mirror."""

    @property
    def has_credentials(self) -> bool:
        return self.username is not None


def parse_remote(source: str) -> Remote:
    """Check a clone URL and take its credentials out (registering them for redaction)."""
    if source.startswith("-"):
        raise UsageError(
            "a repository source must not begin with '-' (git would read it as an option):"
            " check the repository's source setting"
        )
    if _SCP.match(source):
        return Remote(source, source, "ssh")
    m = _URL.match(source)
    if m is None:
        # "://" inside a path: git reads it as a local path (or a bundle file).
        return Remote(source, source, "file")
    transport = _SCHEMES.get(m["scheme"].lower())
    parts = urlsplit(source)
    if transport is None:
        raise UsageError(
            f"unsupported URL scheme {m['scheme']!r} in {_without_userinfo(parts)}: use https://,"
            " http://, ssh://, git:// or file://, or a local path"
        )
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return Remote(source, source, transport)
    display = _without_userinfo(parts)
    user, _, secret = userinfo.partition(":")
    if transport not in ("http", "https"):
        # A login name is an address (ssh://git@host), not a secret; a password
        # in such a URL cannot be used, so it is dropped.
        _register_secret(secret)
        url = urlunsplit(parts._replace(netloc=f"{user}@{hostport}"))
        return Remote(url, display, transport)
    username, password = unquote(user), unquote(secret)
    if "\n" in username + password:
        raise UsageError(f"the credentials in the URL of {display} contain a line break")
    _register_secret(secret)
    if not password and len(username) >= _USERNAME_SECRET_LENGTH:
        _register_secret(user)
    legacy = hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]
    return Remote(display, display, transport, username, password, legacy)


def _without_userinfo(parts: SplitResult) -> str:
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _register_secret(raw: str) -> None:
    """Mask the value as written in the URL and percent-decoded."""
    register(raw)
    register(unquote(raw))


def mirror_path(mirrors_dir: Path, url: str) -> Path:
    """Where the bare mirror of ``url`` lives (stable, readable, unique).

    Keyed by the URL without credentials, so a rotated token reuses the mirror.
    """
    return _mirror_dir(mirrors_dir, url, hashlib.sha256(url.encode("utf-8")).hexdigest()[:12])


def _mirror_dir(mirrors_dir: Path, url: str, digest: str) -> Path:
    ident = identity_from_url(url)
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", ident.name)[:80] or "repo"
    return mirrors_dir / f"{readable}-{digest}.git"


def _transport(
    remote: Remote, args: list[str], git_dir: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run a git command that talks to ``remote``, with only its transports allowed."""
    allow = [*NETWORK_TRANSPORTS, "file"] if remote.transport == "file" else NETWORK_TRANSPORTS
    config = [arg for name in allow for arg in ("-c", f"protocol.{name}.allow=always")]
    extra: dict[str, str] = {}
    if remote.has_credentials:
        parts = urlsplit(remote.url)
        scope = f"{parts.scheme}://{parts.netloc}"
        config += ["-c", "credential.helper=", "-c", f"credential.{scope}.helper={_HELPER}"]
        extra = {
            "REPOHERALD_GIT_USERNAME": remote.username or "",
            "REPOHERALD_GIT_PASSWORD": remote.password or "",
        }
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    argv = ["git", *SAFE_CONFIG, *config, *where, *args]
    return run_git(argv, env=git_env(allow=allow, extra=extra))


def _failure(what: str, remote: Remote, stderr: bytes, branch: str | None) -> Exception:
    msg = last_line(stderr)
    if branch and any(s in msg for s in ("not found", "Remote branch", "couldn't find remote ref")):
        return UsageError(
            f"unknown branch {branch!r} in {remote.display}: check the repository's branch setting"
        )
    return SourceError(f"cannot {what} {remote.display}: {msg} (check the URL, network and access)")


def private_dir(path: Path) -> None:
    """Create ``path`` readable by its owner only (mirrors may hold private code)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:
        pass  # not ours to change (a shared cache set up by an administrator)


def ensure_mirror(remote: Remote, mirrors_dir: Path, branch: str | None, since: int) -> GitRepo:
    """Clone ``remote`` once as a shallow bare mirror, or fetch what is new.

    History is fetched back to :data:`HISTORY_MARGIN` before ``since``
    (seconds since the epoch) and one commit beyond, so each commit in the
    window has its first parent to diff against, without ever downloading the
    full history of a large project. Asking for an older window deepens the
    mirror.
    """
    dest = mirror_path(mirrors_dir, remote.url)
    private_dir(mirrors_dir)
    _adopt_legacy(remote, mirrors_dir, dest)
    if not (dest / "HEAD").is_file():
        _clone(remote, dest, branch, since - HISTORY_MARGIN)
        return GitRepo(dest)
    repo = GitRepo(dest)
    name = branch or repo.default_branch()
    refspec = f"+refs/heads/{name}:refs/heads/{name}"
    args = ["fetch", "--quiet", "--no-tags", "--end-of-options", remote.url, refspec]
    proc = _transport(remote, args, dest)
    if proc.returncode != 0:
        raise _failure("fetch", remote, proc.stderr, name)
    return repo


def _clone(remote: Remote, dest: Path, branch: str | None, cutoff: int) -> None:
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    args = ["clone", "--bare", "--quiet", "--no-tags", "--single-branch"]
    if branch:
        args += ["--branch", branch]
    where = ["--end-of-options", remote.url, str(tmp)]
    proc = _transport(remote, [*args, f"--shallow-since={cutoff}", *where])
    if proc.returncode != 0 and b"no commits selected" in proc.stderr:
        shutil.rmtree(tmp, ignore_errors=True)
        proc = _transport(remote, [*args, "--depth=1", *where])
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _failure("clone", remote, proc.stderr, branch)
    os.replace(tmp, dest)
    GitRepo(dest).run("config", "--end-of-options", "remote.origin.url", remote.url)


def _adopt_legacy(remote: Remote, mirrors_dir: Path, dest: Path) -> None:
    """Move a mirror made by an older version, keyed and configured with the token, into place.

    It keeps its history (no second clone) and loses the credential in its config.
    """
    if remote.legacy_key is None or (dest / "HEAD").is_file():
        return
    old = _mirror_dir(mirrors_dir, remote.url, remote.legacy_key)
    if not (old / "HEAD").is_file():
        return
    os.replace(old, dest)
    GitRepo(dest).run("config", "--end-of-options", "remote.origin.url", remote.url)


def deepen(repo: GitRepo, remote: Remote, branch: str, *, by: int = 0, since: int = 0) -> None:
    """Fetch more history behind the shallow boundary.

    ``by`` generations, or everything committed after ``since`` (seconds since
    the epoch). Never makes the mirror shallower than it is.
    """
    refspec = f"+refs/heads/{branch}:refs/heads/{branch}"
    how = f"--deepen={by}" if by else f"--shallow-since={since}"
    args = ["fetch", "--quiet", "--no-tags", how, "--end-of-options", remote.url, refspec]
    proc = _transport(remote, args, repo.git_dir)
    if proc.returncode != 0:
        raise _failure("deepen the mirror of", remote, proc.stderr, None)


def window_reaches_boundary(
    history: list[tuple[str, int]], shallow: set[str], earliest: int
) -> bool:
    """True when the oldest fetched commit is a shallow boundary too close to the window.

    ``history`` is the first-parent walk, newest first. Commits of the window's
    first day could then be missing (their committer dates need not be in order).
    """
    if not history:
        return False
    oldest_sha, oldest_ts = history[-1]
    return oldest_sha in shallow and oldest_ts >= earliest - DAY
