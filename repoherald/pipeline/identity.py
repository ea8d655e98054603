"""A repository's identity, resolved once when it is configured: the key its reports are
filed under, the name the report shows, and the repository's own name.

These were derived separately (the report key, the report's file name, the
host names' source, each from its own reading of the configuration), so two
readings could disagree; now every stage is handed the one
:class:`RepoIdentity`.
"""

from __future__ import annotations

from dataclasses import dataclass

from repoherald.config.repos import RepoConfig
from repoherald.publish.archive.layout import safe_component
from repoherald.sources import registry


@dataclass(frozen=True, slots=True)
class RepoIdentity:
    """Who a configured repository is, for every stage that names it."""

    key: str
    """What its reports, ledger rows and store records are filed under (``reports/YYYY/<key>/``)."""
    name: str
    """What the report calls it: the configured ``name``, else its source's (``owner/name``)."""
    own_name: str
    """The repository's own name (``vllm-spyre``), whatever the report calls it."""
    config: RepoConfig

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a message about this repository may start with."""
        found = (self.key, self.name, self.config.name or "")
        return tuple(dict.fromkeys(n for n in found if n))


def identify(cfg: RepoConfig) -> RepoIdentity:
    """Resolve ``cfg``'s identity without opening it (a repository that fails keeps its name)."""
    name = registry.display_name(cfg)
    return RepoIdentity(
        key=safe_component(name.rsplit("/", 1)[-1]),
        name=name,
        own_name=(cfg.github or cfg.source).rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"),
        config=cfg,
    )
