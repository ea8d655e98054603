"""Source backends by scheme: ``github:owner/name`` -> ``github``; anything else -> ``git``.

Backends are found through the ``repoherald.sources`` entry-point group
(:mod:`repoherald.plugins`): the built-in ``git`` and ``github`` are declared
there by repoherald's own package exactly as a third-party backend declares
``example = "repoherald_example.source:ExampleBackend"``. :func:`register` adds one
by hand (a notebook, a test) and wins over an entry point of the same scheme.
"""

from __future__ import annotations

import inspect
from typing import cast

from pydantic import BaseModel, ValidationError

from repoherald.config.locations import backend_scheme
from repoherald.config.repos import RepoConfig
from repoherald.errors import ConfigError, SourceError
from repoherald.plugins import SOURCES, load_group
from repoherald.sources.base import Source, SourceBackend, SourceContext

DEFAULT_SCHEME = "git"

_REGISTERED: dict[str, SourceBackend] = {}
_LOADED: dict[str, SourceBackend] | None = None


def register(cls: type[SourceBackend]) -> type[SourceBackend]:
    """Make ``cls`` available under ``cls.scheme``, built from its default ``Options``."""
    _REGISTERED[cls.scheme] = cls(cls.Options())
    return cls


def backends() -> dict[str, SourceBackend]:
    """Every available backend by scheme: entry points (loaded once), then :func:`register`."""
    global _LOADED
    if _LOADED is None:
        _LOADED = {p.name: _build(p.obj) for p in load_group(SOURCES, _problem)}
    return {**_LOADED, **_REGISTERED}


def _problem(name: str, obj: object) -> str | None:
    """What makes ``obj`` unusable as the backend of scheme ``name``, or None."""
    if not inspect.isclass(obj):
        return f"{obj!r} is not a class"
    if getattr(obj, "scheme", None) != name:
        return f"its class says scheme {getattr(obj, 'scheme', None)!r}, its entry point {name!r}"
    options = getattr(obj, "Options", None)
    if not (inspect.isclass(options) and issubclass(options, BaseModel)):
        return "it has no Options model (a pydantic BaseModel)"
    for method in ("open", "guess_name"):
        if not callable(getattr(obj, method, None)):
            return f"it has no {method}() method"
    try:
        options()
    except ValidationError as exc:
        return f"its Options cannot be built from defaults ({exc.error_count()} errors)"
    return None


def _build(obj: object) -> SourceBackend:
    """An instance of ``obj``, which :func:`_problem` found to be a backend class."""
    cls = cast("type[SourceBackend]", obj)
    return cls(cls.Options())


def scheme_of(source: str) -> str:
    """``github:owner/name`` -> ``github``; paths and clone URLs -> ``git``."""
    head, sep, _ = source.partition(":")
    if sep and head in backends() and head != DEFAULT_SCHEME:
        return head
    return DEFAULT_SCHEME


def open_source(cfg: RepoConfig, ctx: SourceContext) -> Source:
    """Open ``cfg`` with the backend its ``source`` names."""
    known = backends()
    scheme = scheme_of(cfg.source)
    written = backend_scheme(cfg.source)
    if scheme == DEFAULT_SCHEME and written and written not in known:
        schemes = ", ".join(f"{s}:" for s in sorted(known) if s != DEFAULT_SCHEME)
        raise SourceError(
            f"{cfg.name or cfg.source}: unknown source scheme {written!r}: use {schemes}"
            "owner/name, a clone URL or a local path"
        )
    backend = known.get(scheme)
    if backend is None:
        names = ", ".join(sorted(known))
        raise ConfigError(f"no source backend for {scheme!r}: known backends are {names}")
    return backend.open(cfg, ctx)


def display_name(cfg: RepoConfig) -> str:
    """A non-empty name for ``cfg`` without opening it (for repositories that failed)."""
    return cfg.name or backends()[scheme_of(cfg.source)].guess_name(cfg)
