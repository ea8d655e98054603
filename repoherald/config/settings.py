"""One frozen settings object, built once: flags > environment > file > defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import platformdirs

from repoherald.config.days import DaySelection, check_tz, select_days
from repoherald.config.defaults import (
    CONFIG_FILE_NAME,
    DEFAULT_LANG,
    DEFAULT_OUT,
    DEFAULT_PATH_TEMPLATE,
    DEFAULT_TZ,
    Lang,
    check_lang,
)
from repoherald.config.endpoints import (
    GitHubSettings,
    github_settings,
    llm_section,
    llm_settings,
)
from repoherald.config.file import _ConfigFile, load_config_file
from repoherald.config.locations import is_local_path
from repoherald.config.overrides import LlmOverrides, Overrides, RepoOverrides
from repoherald.config.repos import (
    RepoConfig,
    checked_web_url,
    repo_from_file,
    with_downstream_flags,
)
from repoherald.config.site import site_dir
from repoherald.config.targets import TargetConfig, publish_targets
from repoherald.errors import UsageError
from repoherald.llm.settings import LlmSettings


@dataclass(frozen=True, slots=True)
class Settings:
    repos: tuple[RepoConfig, ...]
    selection: DaySelection
    tz_name: str
    lang: Lang
    out_dir: Path
    home: Path
    report_name: str | None = None
    path_template: str = DEFAULT_PATH_TEMPLATE
    debug: bool = False
    llm: LlmSettings | None = None
    max_catch_up_days: int = 7
    """``run`` without a date reports at most this many missed days per repository."""
    lease_seconds: float = 60.0
    """How long ``run``'s claim on a repository-day lasts unless its worker renews it."""
    repos_from_config: bool = False
    """True when the repositories came from ``[[repos]]`` rather than ``--repo``."""
    github: GitHubSettings = field(default_factory=GitHubSettings)
    extra: dict[str, Any] = field(default_factory=dict)
    publish: tuple[TargetConfig, ...] = ()
    """The ``[[publish]]`` targets as data (the archive of ``run`` is not one of them); the
    pipeline creates their publishers through :mod:`repoherald.publish.registry`."""
    store_url_env: str | None = None
    """``[store] url_env``: the NAME of the variable that may hold a PostgreSQL store's URL."""
    site_out: Path | None = None
    """``[site] out``: ``run`` builds the static site there after delivering (None: no site)."""
    site_lang: Lang | None = None

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.tz_name)

    @property
    def db_path(self) -> Path:
        return self.home / "repoherald.db"

    @property
    def mirrors_dir(self) -> Path:
        return self.home / "mirrors"


def default_home() -> Path:
    """``REPOHERALD_HOME`` or the per-user data directory."""
    env = os.environ.get("REPOHERALD_HOME")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("repoherald", appauthor=False))


def read_config(config: str | None, cwd: Path) -> tuple[_ConfigFile, Path]:
    """The configuration file (``config``, else ``./repoherald.toml`` if present, else empty)
    and the directory its relative paths start from."""
    if config is not None:
        return load_config_file(Path(config)), Path(config).resolve().parent
    if (cwd / CONFIG_FILE_NAME).is_file():
        return load_config_file(cwd / CONFIG_FILE_NAME), cwd
    return _ConfigFile(), cwd


def resolve_home(home: str | None, file_cfg: _ConfigFile, base: Path) -> Path:
    """The data directory: ``--home``, else ``REPOHERALD_HOME``, else the file's, else default."""
    if home:
        return Path(home).expanduser()
    if os.environ.get("REPOHERALD_HOME"):
        return default_home()
    if file_cfg.home:
        return (base / Path(file_cfg.home).expanduser()).resolve()
    return default_home()


def build_settings(
    *,
    cwd: Path | None = None,
    now: datetime | None = None,
    **options: Any,
) -> Settings:
    """Merge the config file, the environment and ``options`` into :class:`Settings`.

    ``options`` are the commands' keyword names (``repos``, ``day``, ``lang``,
    ``llm_model``, ``no_llm`` ...; see :class:`~repoherald.config.overrides.Overrides`),
    the library's flat way to say what :func:`merge_settings` takes grouped.
    """
    overrides = Overrides.from_options(**options)
    return merge_settings(overrides, cwd=cwd, now=now)


def merge_settings(
    overrides: Overrides,
    *,
    cwd: Path | None = None,
    now: datetime | None = None,
) -> Settings:
    """The one merge: defaults < config file < environment < ``overrides``.

    ``config`` defaults to ``./repoherald.toml`` when that file exists.
    """
    cwd = cwd or Path.cwd()
    place, days = overrides.place, overrides.days
    file_cfg, base = read_config(place.config, cwd)
    tz_name = check_tz(
        days.tz
        if days.tz is not None
        else os.environ.get("REPOHERALD_TZ") or file_cfg.report.tz or DEFAULT_TZ
    )
    lang = check_lang(
        place.lang or os.environ.get("REPOHERALD_LANG") or file_cfg.report.lang or DEFAULT_LANG
    )
    repo_cfgs = _repos(overrides.repo, file_cfg, base, cwd)
    out_dir = Path(place.out or file_cfg.report.out or DEFAULT_OUT)
    if not out_dir.is_absolute():
        out_dir = (cwd if place.out else base) / out_dir
    llm = _llm(overrides.llm, file_cfg)
    github = github_settings(file_cfg.github)
    return Settings(
        llm=llm,
        repos=repo_cfgs,
        selection=select_days(ZoneInfo(tz_name), days.day, days.since, days.until, now=now),
        tz_name=tz_name,
        lang=lang,
        out_dir=out_dir,
        home=resolve_home(place.home, file_cfg, base),
        report_name=file_cfg.report.name,
        path_template=file_cfg.report.path or DEFAULT_PATH_TEMPLATE,
        debug=place.debug,
        max_catch_up_days=file_cfg.run.max_catch_up_days,
        lease_seconds=file_cfg.run.lease_seconds,
        github=github,
        repos_from_config=not overrides.repo.repos,
        publish=publish_targets(file_cfg.publish, github),
        store_url_env=file_cfg.store.url_env,
        site_out=site_dir(file_cfg.site, base),
        site_lang=file_cfg.site.lang,
    )


def _repos(
    flags: RepoOverrides, file_cfg: _ConfigFile, base: Path, cwd: Path
) -> tuple[RepoConfig, ...]:
    """``--repo`` (relative to ``cwd``) or else ``[[repos]]`` (relative to the file), unique."""
    if (flags.name or flags.web_url) and len(flags.repos) != 1:
        raise UsageError("--name and --web-url describe one repository: give exactly one --repo")
    if flags.repos:
        repo_cfgs = tuple(
            RepoConfig(
                source=str((cwd / Path(r).expanduser()).resolve()) if is_local_path(r) else r,
                branch=flags.branch,
                name=flags.name,
                web_url=checked_web_url(flags.web_url),
            )
            for r in flags.repos
        )
    elif file_cfg.repos:
        repo_cfgs = tuple(repo_from_file(r, base) for r in file_cfg.repos)
        if flags.branch is not None:
            repo_cfgs = tuple(replace(r, branch=flags.branch) for r in repo_cfgs)
    else:
        raise UsageError(
            "no repository given: pass --repo PATH_OR_URL or list [[repos]] in repoherald.toml"
        )
    repo_cfgs = with_downstream_flags(repo_cfgs, flags.downstream, flags.watch, cwd)
    seen: set[str] = set()
    unique = []
    for r in repo_cfgs:
        if r.source not in seen:
            seen.add(r.source)
            unique.append(r)
    return tuple(unique)


def _llm(flags: LlmOverrides, file_cfg: _ConfigFile) -> LlmSettings | None:
    """The endpoint, or None for rules only; its numbers are checked even with ``--no-llm``."""
    table = llm_section(file_cfg.llm, flags.concurrency, flags.token_budget)
    if flags.no_llm:
        return None
    return llm_settings(table, flags.base_url, flags.model, flags.api_key_env, flags.provider)
