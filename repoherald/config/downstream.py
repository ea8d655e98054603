"""The "Affects your code" settings of a repository: downstream checkouts, watch globs, packages.

Kept apart from :mod:`repoherald.config.file` (which only declares the keys
and calls these) so the rules live in one place for the file and the flags alike:
paths are resolved against the config file's directory (the working
directory for flags) but shown as written, watch globs are compiled once so a
bad one is a usage error before any repository is read, and package names
must be importable names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repoherald.errors import UsageError

_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WEB_URL = re.compile(r"https?://[^\s<>()\[\]`\"']+")


@dataclass(frozen=True, slots=True)
class Downstream:
    """One checkout of the reader's own code that builds on a repository."""

    path: str
    """Absolute path of the checkout on this machine."""
    label: str
    """The path as the user wrote it (shown in reports: no home directory leaks)."""
    web_url: str | None = None
    """The checkout's web page for ``file:line`` links; None: derived from its origin remote."""


def check_watch(globs: Sequence[str]) -> tuple[str, ...]:
    """The globs unchanged, or :class:`UsageError` naming the first that can never match."""
    from repoherald.analysis.downstream.impact import (
        match_watch,  # the matcher owns the glob syntax
    )

    match_watch((), globs)
    return tuple(globs)


def check_packages(names: Iterable[str]) -> tuple[str, ...]:
    """Top-level import package names (``vllm``), de-duplicated in order."""
    out: list[str] = []
    for name in names:
        if not _PACKAGE.fullmatch(name):
            raise UsageError(
                f"upstream package {name!r} is not an import name: write it like 'vllm'"
            )
        if name not in out:
            out.append(name)
    return tuple(out)


def check_web_url(value: str) -> str:
    """A plain http(s) URL without a trailing slash (the rule of ``web_url``)."""
    if not _WEB_URL.fullmatch(value):
        raise UsageError(
            f"downstream web URL {value!r} must be a plain http(s) URL such as"
            " https://github.com/me/my-plugin"
        )
    return value.rstrip("/")


def _absolute(path: Path) -> str:
    """``path`` resolved; a symbolic link loop stays as written, for the run to name it."""
    try:
        return str(path.resolve())
    except (RuntimeError, OSError):  # RuntimeError: Python 3.11's "Symlink loop from ..."
        return os.path.abspath(path)


def resolve_downstream(
    entries: Sequence[str], web_urls: Mapping[str, str], base: Path
) -> tuple[Downstream, ...]:
    """Downstream entries as written, resolved against ``base``, each with its web URL.

    A web URL keyed by a path that is not one of ``entries`` is a usage error
    (a typo would otherwise silently drop every link).
    """
    unknown = sorted(set(web_urls) - set(entries))
    if unknown:
        raise UsageError(
            f"downstream_web_urls names {unknown[0]!r}, which is not in downstream:"
            " use the same string as in the downstream list"
        )
    out: list[Downstream] = []
    seen: set[str] = set()
    for entry in entries:
        if not entry.strip():
            raise UsageError("an empty downstream path: give the directory of a checkout")
        path = _absolute(base / Path(entry).expanduser())
        if path in seen:
            continue
        seen.add(path)
        url = web_urls.get(entry)
        out.append(Downstream(path, entry, check_web_url(url) if url else None))
    return tuple(out)
