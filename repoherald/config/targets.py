"""The ``[[publish]]`` targets, each validated by its publisher and named for the ledger."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from repoherald.config.endpoints import GitHubSettings
from repoherald.config.file import _PublishFile
from repoherald.errors import ConfigError

if TYPE_CHECKING:  # the registry imports this package; the annotation only needs the name
    from repoherald.publish.registry import Target


def publish_targets(
    tables: list[_PublishFile],
    github: GitHubSettings | None = None,
    *,
    require_env: bool = True,
) -> tuple[NamedTarget, ...]:
    """Validate each ``[[publish]]`` table with its publisher's Options; names must be unique.

    A publisher whose Options have ``api_url`` or ``token_env`` (``github_issue``)
    gets the ``[github]`` values for them unless its own table sets them.
    ``require_env=False`` checks everything but whether the secrets are set
    (see :func:`repoherald.publish.registry.create`).
    """
    from repoherald.publish.registry import create

    gh = github or GitHubSettings()
    inherited = {"api_url": gh.api_url, "token_env": gh.token_env}
    out: list[NamedTarget] = []
    for i, table in enumerate(tables):
        data = table.model_dump(exclude_none=True)
        name = data.pop("name", None) or _default_target_name(data)
        if data["type"] == "archive":
            raise ConfigError(
                f"publish.{i}: the archive is written by `run` itself ([report] out):"
                " remove this [[publish]] entry"
            )
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
            raise ConfigError(f"publish.{i}: name {name!r} must be letters, digits, . _ -")
        if any(t.name == name for t in out):
            raise ConfigError(f"publish.{i}: two targets are named {name!r}: give each a `name`")
        out.append(
            NamedTarget(
                name,
                create(data, where=f"publish.{i}", inherited=inherited, require_env=require_env),
            )
        )
    return tuple(out)


def _default_target_name(data: dict[str, Any]) -> str:
    kind = data.get("kind")
    return f"{data['type']}-{kind}" if isinstance(kind, str) else str(data["type"])


@dataclass(frozen=True, slots=True)
class NamedTarget:
    """A ``[[publish]]`` target and the name the ledger files its deliveries under."""

    name: str
    target: Target

    def takes(self, repo: str) -> bool:
        """True when this target delivers ``repo``'s reports."""
        repos = self.target.repos
        return repos is None or repo in repos
