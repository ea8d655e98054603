"""Source backends by scheme: ``github:owner/name`` -> ``github``; anything else -> ``git``.

A plain registry, no discovery magic: built-in backends register themselves
here on import (see :func:`_load_builtins`), and a third-party backend does
the same by calling :func:`register` before the pipeline runs.
"""

from __future__ import annotations

from collections.abc import Callable

from repoherald.config.repos import RepoConfig
from repoherald.errors import ConfigError, SourceError
from repoherald.sources.base import Source, SourceContext
from repoherald.sources.locations import backend_scheme

Opener = Callable[[RepoConfig, SourceContext], Source]
Namer = Callable[[RepoConfig], str]

_OPENERS: dict[str, Opener] = {}
_NAMERS: dict[str, Namer] = {}
DEFAULT_SCHEME = "git"


def register(scheme: str, opener: Opener, namer: Namer) -> None:
    """Make ``scheme`` available; ``namer`` names a repository that could not be opened."""
    _OPENERS[scheme] = opener
    _NAMERS[scheme] = namer


def scheme_of(source: str) -> str:
    """``github:owner/name`` -> ``github``; paths and clone URLs -> ``git``."""
    head, sep, _ = source.partition(":")
    if sep and head in _OPENERS and head != DEFAULT_SCHEME:
        return head
    return DEFAULT_SCHEME


def open_source(cfg: RepoConfig, ctx: SourceContext) -> Source:
    """Open ``cfg`` with the backend its ``source`` names."""
    _load_builtins()
    scheme = scheme_of(cfg.source)
    written = backend_scheme(cfg.source)
    if scheme == DEFAULT_SCHEME and written and written not in _OPENERS:
        known = ", ".join(f"{s}:" for s in sorted(_OPENERS) if s != DEFAULT_SCHEME)
        raise SourceError(
            f"{cfg.name or cfg.source}: unknown source scheme {written!r}: use {known}"
            "owner/name, a clone URL or a local path"
        )
    opener = _OPENERS.get(scheme)
    if opener is None:
        known = ", ".join(sorted(_OPENERS))
        raise ConfigError(f"no source backend for {scheme!r}: known backends are {known}")
    return opener(cfg, ctx)


def display_name(cfg: RepoConfig) -> str:
    """A non-empty name for ``cfg`` without opening it (for repositories that failed)."""
    _load_builtins()
    return cfg.name or _NAMERS[scheme_of(cfg.source)](cfg)


def _load_builtins() -> None:
    if DEFAULT_SCHEME not in _OPENERS:
        from repoherald.sources.git import source as git_source

        register(DEFAULT_SCHEME, git_source.open_git, git_source.guess_name)
    if "github" not in _OPENERS:
        from repoherald.sources import github as github_source

        register("github", github_source.open_github, github_source.guess_name)
