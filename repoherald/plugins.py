"""Finding backends through entry points: ``repoherald.sources``, ``.publishers``, ``.analysers``.

The built-in backends are declared in repoherald's own ``pyproject.toml``
under the same three entry-point groups a third-party package uses, so the
registries load both the same way (as simonw/llm registers its default
models through its own plugin hooks). An entry point's name is the scheme,
publisher ``type`` or analyser role it provides; its object is a class.

A plugin that cannot be loaded — its module fails to import, its object is
missing, it takes a name repoherald already provides — is skipped with one
warning naming the plugin and what to do, never a traceback (unless
``--debug``), and never at the cost of the built-ins or the other plugins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from repoherald.errors import ConfigError

log = logging.getLogger(__name__)

SOURCES = "repoherald.sources"
PUBLISHERS = "repoherald.publishers"
ANALYSERS = "repoherald.analysers"
BUILTIN_DIST = "repoherald"
"""The distribution whose entry points are the built-ins."""


@dataclass(frozen=True)
class Plugin:
    """One loaded entry point: the name it provides, its object, and where it came from."""

    name: str
    obj: object
    dist: str
    """The distribution that declared it (``repoherald`` for a built-in)."""

    @property
    def builtin(self) -> bool:
        return self.dist == BUILTIN_DIST


def load_group(
    group: str, check: Callable[[str, object], str | None], name: str | None = None
) -> list[Plugin]:
    """Every loadable entry point of ``group`` (or only those named ``name``), built-ins first.

    ``check(name, obj)`` says what is wrong with a loaded object (one
    sentence, e.g. "it has no Options model"), or None when it will do. A
    broken built-in is a bug of this installation and raises
    :class:`ConfigError`; a broken third-party plugin is warned about once
    and left out. A third-party plugin that takes a built-in's name is left
    out too: the built-in keeps it. ``name`` is for a caller that needs one
    backend (``run``'s archive): the group's other plugins are not imported,
    so a broken one is not warned about by a command that does not use it.
    """
    every = entry_points(group=group)
    if not any(_dist(ep) == BUILTIN_DIST for ep in every):
        raise ConfigError(
            f"repoherald's own {group} entry points are missing (a stale install):"
            " reinstall repoherald, e.g. `pip install -e .` in its checkout"
        )
    wanted = [ep for ep in every if name is None or ep.name == name]
    found = sorted(wanted, key=lambda ep: (_dist(ep) != BUILTIN_DIST, ep.name))
    plugins: list[Plugin] = []
    taken: dict[str, str] = {}
    for ep in found:
        dist = _dist(ep)
        if ep.name in taken:
            _warn(ep, group, f"{ep.name!r} is already provided by {taken[ep.name]}: rename it")
            continue
        try:
            obj = ep.load()
        except Exception as exc:  # a third-party import may raise anything at all
            if dist == BUILTIN_DIST:
                raise
            log.debug("loading plugin %s failed", ep.value, exc_info=True)
            _warn(ep, group, f"cannot be loaded ({type(exc).__name__}: {exc}): fix or uninstall it")
            continue
        problem = check(ep.name, obj)
        if problem is not None:
            if dist == BUILTIN_DIST:
                raise ConfigError(f"built-in {group} entry point {ep.name!r}: {problem}")
            _warn(ep, group, f"{problem}: fix or uninstall it")
            continue
        taken[ep.name] = dist
        plugins.append(Plugin(ep.name, obj, dist))
    return plugins


def _dist(ep: EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "?"


_warned: set[tuple[str, str, str]] = set()


def _warn(ep: EntryPoint, group: str, what: str) -> None:
    """One line per broken plugin and process, naming its package and entry point."""
    key = (group, ep.name, ep.value)
    if key in _warned:
        return
    _warned.add(key)
    log.warning(
        "plugin %s (%s = %s, from package %s) skipped: %s",
        ep.name,
        group,
        ep.value,
        _dist(ep),
        what,
    )
