"""Which GitHub repository a configuration names: ``github:owner/name``, ``github =``, a web URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from repoherald.config.defaults import GITHUB_REPO
from repoherald.config.endpoints import GitHubSettings
from repoherald.errors import SourceError


@dataclass(frozen=True, slots=True)
class RepoRef:
    """``owner/name`` on one GitHub host, already checked to be safe in a URL path."""

    owner: str
    name: str

    @property
    def full(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def api_path(self) -> str:
        return f"/repos/{self.owner}/{self.name}"

    @classmethod
    def parse(cls, text: str, source: str) -> RepoRef:
        """``owner/name`` -> RepoRef; a SourceError naming ``source`` when malformed."""
        if not GITHUB_REPO.fullmatch(text):
            raise SourceError(
                f"{source}: {text!r} is not a GitHub owner/name: write it as"
                " github:OWNER/NAME, e.g. github:vllm-project/vllm"
            )
        owner, name = text.split("/", 1)
        return cls(owner, name)


def web_host(api_url: str) -> str:
    """The web host that goes with an API root (``api.github.com`` -> ``github.com``)."""
    host = urlsplit(api_url).hostname or ""
    return "github.com" if host == "api.github.com" else host


def repo_from_web_url(web_url: str | None, settings: GitHubSettings) -> RepoRef | None:
    """``https://github.com/owner/name`` (or the GHE web host) -> RepoRef, else None."""
    if not web_url:
        return None
    parts = urlsplit(web_url)
    if parts.hostname not in ("github.com", web_host(settings.api_url)):
        return None
    m = re.fullmatch(r"/?([^/]+/[^/]+?)(?:\.git)?/?", parts.path)
    if not m or not GITHUB_REPO.fullmatch(m.group(1)):
        return None
    owner, name = m.group(1).split("/", 1)
    return RepoRef(owner, name)
