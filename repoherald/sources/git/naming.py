"""How a git repository is called in a report, and where its web pages are.

The name heads the repository's section and names its report files, so it
must never be empty and should say which project it is: a mirror kept as
``/srv/mirrors/vllm/repo`` is "vllm" (better: "vllm-project/vllm" from its
origin), not "repo"; ``--repo X/.git`` is "X", not "".

Precedence: the configured ``name`` (it is explicit); then the origin URL
(the clone URL itself for a remote source, ``remote.origin.url`` for a local
clone); then the path, skipping components that say nothing (``repo``,
``.git``, a ``.git`` suffix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from urllib.parse import urlsplit

from repoherald.redact import strip_userinfo

_SCP = re.compile(r"^[\w.-]+@([\w.-]+):(.+)$")
_GENERIC = frozenset({"", "repo"})
"""Directory names (after dropping a ``.git`` suffix) that do not name a project."""
_WEB_HOSTS = ("github.com", "gitlab.com", "codeberg.org")
"""Hosts known to serve ``/commit/<sha>`` pages."""


@dataclass(frozen=True, slots=True)
class RepoIdentity:
    """How a repository is named and linked in the report."""

    name: str
    web_url: str | None


def identity_from_url(url: str) -> RepoIdentity:
    """``https://github.com/owner/name.git`` -> ``owner/name`` with a web URL.

    Only hosts known to serve ``/commit/<sha>`` pages get a web URL; for
    anything else the report shows SHAs without links rather than dead links.
    Credentials in the URL never reach the name.
    """
    url = strip_userinfo(url)
    scp = _SCP.match(url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        parts = urlsplit(url)
        host, path = parts.hostname or "", parts.path
    segments = [s for s in path.strip("/").split("/") if s]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][:-4]
    segments = [s for s in segments if s]
    if len(segments) >= 2:
        name = "/".join(segments[-2:])
    else:
        name = segments[-1] if segments else (host or name_from_path(path or url))
    web = None
    if host in _WEB_HOSTS and len(segments) >= 2:
        web = f"https://{host}/{'/'.join(segments)}"
    return RepoIdentity(name=name, web_url=web)


def name_from_path(path: str) -> str:
    """The project a path names: its last component that is not ``repo`` or ``.git``.

    ``/srv/mirrors/foo/repo`` -> ``foo``; ``X/.git`` -> ``X``; ``vllm.git`` -> ``vllm``.
    Never empty.
    """
    parts = [p for p in PurePath(path).parts if p not in ("/", "\\")]
    for part in reversed(parts):
        base = part[:-4] if part.lower().endswith(".git") else part
        if base.lower() not in _GENERIC and base not in (".", ".."):
            return base
    fallback = path.strip("/\\ ")
    return fallback or "repository"


def derive_name(configured: str | None, origin: str | None, path: str | None) -> str:
    """A display name by precedence: configured name, origin URL, then the path."""
    if configured:
        return configured
    if origin:
        return identity_from_url(origin).name
    return name_from_path(path or "")
