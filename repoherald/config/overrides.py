"""What the command line (or a library caller) says over the file and the environment.

One small frozen dataclass per option group of :mod:`repoherald.cli.options`,
gathered in :class:`Overrides`, so the merge in :mod:`repoherald.config.settings`
takes one structured value instead of two dozen keyword arguments. The
field names are the commands' keyword names (``llm_`` dropped in
:class:`LlmOverrides`), which is what :meth:`Overrides.from_options` relies on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class RepoOverrides:
    """``--repo`` and the flags that describe the one repository given."""

    repos: tuple[str, ...] = ()
    branch: str | None = None
    name: str | None = None
    web_url: str | None = None
    downstream: tuple[str, ...] = ()
    watch: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DayOverrides:
    """``--date`` / ``--since`` / ``--until`` / ``--tz``."""

    day: str | None = None
    since: str | None = None
    until: str | None = None
    tz: str | None = None


@dataclass(frozen=True, slots=True)
class PlaceOverrides:
    """Where things are read and written, and how loudly: ``--config``, ``--home``, ``--out``,
    ``--lang``, ``--debug``."""

    config: str | None = None
    home: str | None = None
    out: str | None = None
    lang: str | None = None
    debug: bool = False


@dataclass(frozen=True, slots=True)
class LlmOverrides:
    """``--llm-*`` and ``--no-llm``."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    token_budget: int | None = None
    provider: str | None = None
    no_llm: bool = False


_GROUPS: dict[str, tuple[type[Any], str]] = {
    "repo": (RepoOverrides, ""),
    "days": (DayOverrides, ""),
    "place": (PlaceOverrides, ""),
    "llm": (LlmOverrides, "llm_"),
}
"""Each group of :class:`Overrides`, its class and the prefix its options carry as keywords."""


@dataclass(frozen=True, slots=True)
class Overrides:
    """Everything the flags say; the defaults say nothing, so the file and environment decide."""

    repo: RepoOverrides = field(default_factory=RepoOverrides)
    days: DayOverrides = field(default_factory=DayOverrides)
    place: PlaceOverrides = field(default_factory=PlaceOverrides)
    llm: LlmOverrides = field(default_factory=LlmOverrides)

    @classmethod
    def from_options(cls, **options: Any) -> Overrides:
        """The commands' keyword arguments (``llm_model=...``, ``no_llm=...``) grouped.

        An unknown keyword is a TypeError, as it was for the flat keyword API.
        """
        left = dict(options)
        groups: dict[str, Any] = {}
        for attr, (group, prefix) in _GROUPS.items():
            values: dict[str, Any] = {}
            for f in fields(group):
                keyword = f.name if f.name == "no_llm" else prefix + f.name
                if keyword in left:
                    values[f.name] = left.pop(keyword)
            groups[attr] = group(**values)
        if left:
            raise TypeError(f"unknown settings option(s): {', '.join(sorted(left))}")
        return cls(**groups)
