"""The repositories to report on, from ``[[repos]]`` or from ``--repo`` and its flags."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from repoherald.config.days import check_tz
from repoherald.config.defaults import Lang
from repoherald.config.downstream import Downstream, check_watch, resolve_downstream
from repoherald.config.file import _RepoFile
from repoherald.config.locations import is_local_path
from repoherald.errors import UsageError


@dataclass(frozen=True, slots=True)
class RepoConfig:
    """One repository to report on."""

    source: str
    branch: str | None = None
    name: str | None = None
    """Display name (``owner/name``); derived from the source when absent."""
    web_url: str | None = None
    """Base URL for commit and PR links; derived from a GitHub remote when absent."""
    areas: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Ordered (area name, path globs) pairs; first match wins."""
    lang: Lang | None = None
    """This repository's report language under ``run`` (default: the report's)."""
    tz: str | None = None
    """This repository's day boundaries under ``run`` (default: the report's zone)."""
    github: str | None = None
    """``owner/name`` on GitHub, for pull-request context when the source is git."""
    downstream: tuple[Downstream, ...] = ()
    """Checkouts of the reader's code checked against each commit ("Affects your code")."""
    watch: tuple[str, ...] = ()
    """Path globs of this repository whose changes the reader wants to hear about."""
    upstream_packages: tuple[str, ...] = ()
    """Top-level import packages of this repository; empty: derived from its tree."""
    hosts: tuple[str, ...] = ()
    """Frameworks it is built on, whose pin moves are high; empty: derived from its name."""


def repo_from_file(r: _RepoFile, base: Path) -> RepoConfig:
    """One ``[[repos]]`` table; local paths are relative to the config file's directory."""
    source = r.source
    if is_local_path(source):
        source = str((base / Path(source).expanduser()).resolve())
    return RepoConfig(
        source=source,
        branch=r.branch,
        name=r.name,
        web_url=r.web_url.rstrip("/") if r.web_url else None,
        areas=tuple((k, tuple(v)) for k, v in r.areas.items()),
        lang=r.lang,
        tz=check_tz(r.tz) if r.tz else None,
        github=r.github,
        downstream=resolve_downstream(r.downstream, r.downstream_web_urls, base),
        watch=tuple(dict.fromkeys(r.watch)),
        upstream_packages=tuple(r.upstream_packages),
        hosts=tuple(dict.fromkeys(r.hosts)),
    )


def checked_web_url(value: str | None) -> str | None:
    """A plain http(s) URL (the same rule as ``web_url`` in the config file), without a slash."""
    if value is None:
        return None
    try:
        return _RepoFile(source="-", web_url=value).web_url.rstrip("/")  # type: ignore[union-attr]
    except ValidationError:
        raise UsageError(
            f"--web-url {value!r} must be a plain http(s) URL such as https://github.com/owner/name"
        ) from None


def with_downstream_flags(
    repos: tuple[RepoConfig, ...], downstream: tuple[str, ...], watch: tuple[str, ...], cwd: Path
) -> tuple[RepoConfig, ...]:
    """``--downstream``/``--watch`` add to the one repository (from --repo or the config)."""
    if not downstream and not watch:
        return repos
    if len(repos) != 1:
        raise UsageError(
            "--downstream and --watch describe one repository: give exactly one --repo"
        )
    (cfg,) = repos
    added = resolve_downstream(downstream, {}, cwd)
    known = {d.path for d in cfg.downstream}
    return (
        replace(
            cfg,
            downstream=cfg.downstream + tuple(d for d in added if d.path not in known),
            watch=tuple(dict.fromkeys(cfg.watch + check_watch(watch))),
        ),
    )
