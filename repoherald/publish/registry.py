"""Publishers by config ``type``, found through the ``repoherald.publishers`` entry points.

The built-in publishers (archive, webhook, github_issue, email) are declared
in repoherald's own package under that group exactly as a third-party
package declares ``example = "repoherald_example.publisher:ExamplePublisher"``
(:mod:`repoherald.plugins`); nothing is special-cased. :func:`register` adds
one by hand (a notebook, a test) and wins over an entry point of the same type.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from repoherald.config.file import describe_validation_error
from repoherald.config.targets import TargetConfig, target_config
from repoherald.errors import ConfigError
from repoherald.plugins import PUBLISHERS, load_group
from repoherald.publish.base import Publisher

_REGISTERED: dict[str, type[Publisher]] = {}
_LOADED: dict[str, type[Publisher]] | None = None
_ONE: dict[str, type[Publisher] | None] = {}
"""Publishers loaded by :func:`_one` without the rest of their group, by type."""


@dataclass(frozen=True)
class Target:
    """One configured ``[[publish]]`` entry, validated and ready to publish."""

    type: str
    publisher: Publisher
    repos: tuple[str, ...] | None = None
    """Only these repositories (by name); None for all."""
    send_empty: bool = False
    """Send repository-days without commits too (by default they are skipped)."""
    weekly_on: int | None = None
    """For ``schedule = "weekly"``: the weekday (0 Monday) its roll-up is sent on; None for
    a daily target."""


@dataclass(frozen=True, slots=True)
class NamedTarget:
    """A ``[[publish]]`` target and the name the ledger files its deliveries under."""

    name: str
    target: Target

    def takes(self, repo: str) -> bool:
        """True when this target delivers ``repo``'s reports."""
        repos = self.target.repos
        return repos is None or repo in repos


def register(cls: type[Publisher]) -> type[Publisher]:
    """Make ``cls`` available under ``cls.type`` (usable as a class decorator)."""
    _REGISTERED[cls.type] = cls
    return cls


def publishers() -> dict[str, type[Publisher]]:
    """Every publisher class by type: entry points (loaded once), then :func:`register`."""
    global _LOADED
    if _LOADED is None:
        _LOADED = {p.name: _as_publisher(p.obj) for p in load_group(PUBLISHERS, _problem)}
    return {**_LOADED, **_REGISTERED}


def _problem(name: str, obj: object) -> str | None:
    """What makes ``obj`` unusable as the publisher of type ``name``, or None."""
    if not inspect.isclass(obj):
        return f"{obj!r} is not a class"
    if getattr(obj, "type", None) != name:
        return f"its class says type {getattr(obj, 'type', None)!r}, its entry point {name!r}"
    options = getattr(obj, "Options", None)
    if not (inspect.isclass(options) and issubclass(options, BaseModel)):
        return "it has no Options model (a pydantic BaseModel)"
    for method in ("publish", "env_vars"):
        if not callable(getattr(obj, method, None)):
            return f"it has no {method}() method"
    return None


def _as_publisher(obj: object) -> type[Publisher]:
    """``obj``, which :func:`_problem` found to be a publisher class."""
    return cast("type[Publisher]", obj)


def _one(type_name: str) -> type[Publisher] | None:
    """The publisher of ``type_name`` without importing every other publisher plugin
    (``run`` needs only the archive when no ``[[publish]]`` target is configured)."""
    if type_name in _REGISTERED:
        return _REGISTERED[type_name]
    if _LOADED is not None:
        return _LOADED.get(type_name)
    if type_name not in _ONE:
        # Once per process: run asks for the archive once per repository, and reading
        # the installed distributions' entry points costs tens of milliseconds each time.
        found = load_group(PUBLISHERS, _problem, name=type_name)
        _ONE[type_name] = _as_publisher(found[0].obj) if found else None
    return _ONE[type_name]


def known_types() -> list[str]:
    """Every registered ``type``, sorted."""
    return sorted(publishers())


def get(type_name: str) -> type[Publisher]:
    """The publisher class registered as ``type_name``."""
    cls = _one(type_name)
    if cls is None:
        known = ", ".join(known_types())
        raise ConfigError(f"unknown publisher type {type_name!r}: known types are {known}")
    return cls


def create(
    table: Mapping[str, Any],
    where: str = "publish",
    inherited: Mapping[str, Any] | None = None,
    *,
    require_env: bool = True,
) -> Target:
    """Validate one ``[[publish]]`` table and build its publisher.

    ``where`` locates the table in messages (``publish.1``). ``inherited``
    holds values from the rest of the configuration (``[github]`` api_url
    and token_env) for the Options fields of those names that the table
    leaves out. See :func:`build` for what is checked.
    """
    config = target_config(str(table.get("type", "")), table, where, inherited)
    return build(config, require_env=require_env).target


def build(config: TargetConfig, *, require_env: bool = True) -> NamedTarget:
    """Create the publisher of one configured target, its keys validated by its Options.

    Raises :class:`ConfigError` for an unknown type, a key the publisher does
    not know, a bad value, or (unless ``require_env`` is false) an
    environment variable it needs that is not set. ``require_env=False`` is
    for a command that validates the targets but delivers nothing
    (``report``): a missing secret matters only to the commands that send.
    """
    where, type_name = config.where, config.type
    cls = get(type_name)
    data = config.table()
    for key, value in config.inherited.items():
        if key in cls.Options.model_fields and key not in data:
            data[key] = value
    try:
        options = cls.Options.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"{where} ({type_name}): {describe_validation_error(exc, cls.Options.model_fields)}"
        ) from None
    for name in cls.env_vars(options) if require_env else ():
        if not os.environ.get(name):
            raise ConfigError(
                f"{where} ({type_name}): environment variable {name} is not set: export it"
            )
    target = Target(type_name, cls(options), config.repos, config.send_empty, config.weekly_on)
    return NamedTarget(config.name, target)


def build_all(
    configs: Iterable[TargetConfig], *, require_env: bool = True
) -> tuple[NamedTarget, ...]:
    """The publishers of every configured ``[[publish]]`` target, in order (see :func:`build`)."""
    return tuple(build(config, require_env=require_env) for config in configs)
