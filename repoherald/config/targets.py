"""The ``[[publish]]`` targets as plain, frozen data: named, typed, their shared keys checked.

Configuration sits at the bottom of the house, so it builds no publisher: a
:class:`TargetConfig` is what one table says, and the pipeline asks the
publisher registry (:func:`repoherald.publish.registry.build_all`) to
validate the publisher's own keys with its ``Options`` model and create it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from repoherald.config.endpoints import GitHubSettings
from repoherald.config.file import WEEKDAYS, _PublishFile
from repoherald.errors import ConfigError


@dataclass(frozen=True, slots=True)
class TargetConfig:
    """One ``[[publish]]`` table: its name for the ledger, its type and its publisher's keys."""

    name: str
    type: str
    options: Mapping[str, Any]
    """The publisher's own keys, read-only (lists as tuples); :meth:`table` thaws them."""
    repos: tuple[str, ...] | None = None
    """Only these repositories (by name); None for all."""
    send_empty: bool = False
    """Send repository-days without commits too (by default they are skipped)."""
    weekly_on: int | None = None
    """For ``schedule = "weekly"``: the weekday (0 Monday) of its roll-up; None for daily."""
    inherited: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """``[github]`` values for the Options fields of those names the table leaves out."""
    where: str = "publish"
    """Where the table is, for messages (``publish.1``)."""

    def takes(self, repo: str) -> bool:
        """True when this target delivers ``repo``'s reports."""
        return self.repos is None or repo in self.repos

    def table(self) -> dict[str, Any]:
        """The publisher's keys as a fresh, mutable table, as its Options model reads them."""
        return {key: _thaw(value) for key, value in self.options.items()}


def publish_targets(
    tables: list[_PublishFile], github: GitHubSettings | None = None
) -> tuple[TargetConfig, ...]:
    """Check each ``[[publish]]`` table's shared keys; names must be unique.

    A publisher whose Options have ``api_url`` or ``token_env`` (``github_issue``)
    gets the ``[github]`` values for them unless its own table sets them.
    """
    gh = github or GitHubSettings()
    inherited = MappingProxyType({"api_url": gh.api_url, "token_env": gh.token_env})
    out: list[TargetConfig] = []
    for i, table in enumerate(tables):
        where = f"publish.{i}"
        data = table.model_dump(exclude_none=True)
        name = data.pop("name", None) or _default_target_name(data)
        if data["type"] == "archive":
            raise ConfigError(
                f"{where}: the archive is written by `run` itself ([report] out):"
                " remove this [[publish]] entry"
            )
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
            raise ConfigError(f"{where}: name {name!r} must be letters, digits, . _ -")
        if any(t.name == name for t in out):
            raise ConfigError(f"{where}: two targets are named {name!r}: give each a `name`")
        out.append(target_config(name, data, where, inherited))
    return tuple(out)


def target_config(
    name: str,
    table: Mapping[str, Any],
    where: str = "publish",
    inherited: Mapping[str, Any] | None = None,
) -> TargetConfig:
    """The :class:`TargetConfig` of one table (``type`` and the shared keys checked here)."""
    data = dict(table)
    data.pop("name", None)
    type_name = data.pop("type", None)
    if not isinstance(type_name, str) or not type_name:
        raise ConfigError(f"{where}: set `type` to the publisher to use (webhook, email ...)")
    repos = data.pop("repos", None)
    if repos is not None and not (
        isinstance(repos, list | tuple) and all(isinstance(r, str) and r for r in repos)
    ):
        raise ConfigError(f"{where} ({type_name}): `repos` must be a list of repository names")
    send_empty = bool(data.pop("send_empty", False))
    weekly_on = _weekly_on(data.pop("schedule", "daily"), data.pop("weekday", None), where)
    return TargetConfig(
        name,
        type_name,
        MappingProxyType({key: _freeze(value) for key, value in data.items()}),
        tuple(repos) if repos is not None else None,
        send_empty,
        weekly_on,
        MappingProxyType(dict(inherited or {})),
        where,
    )


def _default_target_name(data: dict[str, Any]) -> str:
    kind = data.get("kind")
    return f"{data['type']}-{kind}" if isinstance(kind, str) else str(data["type"])


def _weekly_on(schedule: object, weekday: object, where: str) -> int | None:
    """The weekday index of a weekly target's roll-up; None for a daily target."""
    if schedule == "daily":
        if weekday is not None:
            raise ConfigError(
                f'{where}: `weekday` needs schedule = "weekly": remove it or set both'
            )
        return None
    if schedule != "weekly":
        raise ConfigError(f'{where}: schedule must be "daily" or "weekly"')
    day = "mon" if weekday is None else weekday
    if day not in WEEKDAYS:
        raise ConfigError(f"{where}: weekday must be one of {', '.join(WEEKDAYS)}")
    return WEEKDAYS.index(day)


def _freeze(value: Any) -> Any:
    """A read-only copy of a TOML value: lists become tuples, tables read-only mappings."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    return value


def _thaw(value: Any) -> Any:
    """The TOML value :func:`_freeze` was given, as a fresh mutable copy."""
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    return value
