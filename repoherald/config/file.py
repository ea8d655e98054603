"""The ``repoherald.toml`` file: its tables as pydantic models, and reading it.

The file is validated with pydantic so a typo is reported with its location
(``repos.0.brnach: extra inputs are not permitted``) instead of being silently
ignored. Secrets never live here: the file may only *name* an environment
variable.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repoherald.config.defaults import (
    DEFAULT_GITHUB_API,
    DEFAULT_GITHUB_CONCURRENCY,
    GITHUB_REPO,
    Lang,
)
from repoherald.config.downstream import check_packages, check_watch, check_web_url
from repoherald.config.site import SiteSection
from repoherald.config.templates import template_validator
from repoherald.errors import ConfigError, UsageError
from repoherald.llm.settings import LlmSection

_In = TypeVar("_In")
_Out = TypeVar("_Out")


class _RepoFile(BaseModel):
    """One repository to report on (any number of them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(
        min_length=1,
        description="A local path (relative to this file), a clone URL, or github:owner/name.",
    )
    branch: str | None = Field(
        default=None, description="Default: the repository's default branch."
    )
    name: str | None = Field(
        default=None, description="Display name and report folder. Default: from the URL or origin."
    )
    web_url: str | None = Field(
        default=None,
        description="Base URL for commit and PR links. Default: derived for github.com.",
    )
    areas: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Area name -> path globs; first match wins. Default: top-level directories.",
    )
    lang: Lang | None = Field(
        default=None, description="This repository's report language under `run`."
    )
    tz: str | None = Field(
        default=None, description="This repository's day boundaries under `run`."
    )
    github: str | None = Field(
        default=None,
        description="owner/name on GitHub, for pull-request context of a git source.",
    )

    @field_validator("github")
    @classmethod
    def _owner_name(cls, value: str | None) -> str | None:
        if value is not None and not GITHUB_REPO.fullmatch(value):
            raise ValueError("must be owner/name, e.g. vllm-project/vllm")
        return value

    downstream: list[str] = Field(
        default_factory=list,
        description="Checkouts of your own code built on this repository (paths relative to"
        " this file): the report shows what each commit breaks or changes in them.",
    )
    downstream_web_urls: dict[str, str] = Field(
        default_factory=dict,
        description="A `downstream` entry -> its web page, for file:line links."
        " Default: from the checkout's origin on github.com or gitlab.com.",
    )
    watch: list[str] = Field(
        default_factory=list,
        description="Path globs of this repository (`**` spans directories): a commit"
        ' touching one is listed under "Affects your code".',
    )
    upstream_packages: list[str] = Field(
        default_factory=list,
        description='This repository\'s top-level import packages, e.g. ["vllm"].'
        " Default: read from its tree.",
    )
    hosts: list[str] = Field(
        default_factory=list,
        description='Frameworks this repository is built on (package names, e.g. ["vllm"]):'
        " a commit that moves their pinned version is high. Default: the first part of"
        " a plugin's name (vllm-gaudi: vllm).",
    )

    @field_validator("web_url")
    @classmethod
    def _http_only(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^\s<>()\[\]`\"']+", value):
            raise ValueError("must be a plain http(s) URL such as https://github.com/owner/name")
        return value

    @field_validator("watch")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return list(_as_value_error(check_watch, value))

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
                raise ValueError(f"{name!r} is not a package name: write it like 'vllm'")
        return value

    @field_validator("upstream_packages")
    @classmethod
    def _packages(cls, value: list[str]) -> list[str]:
        return list(_as_value_error(check_packages, value))

    @field_validator("downstream_web_urls")
    @classmethod
    def _downstream_urls(cls, value: dict[str, str]) -> dict[str, str]:
        return {k: _as_value_error(check_web_url, v) for k, v in value.items()}


def _as_value_error(check: Callable[[_In], _Out], value: _In) -> _Out:
    """Run a shared check inside a pydantic validator (which reports ValueError with the key)."""
    try:
        return check(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from None


class _ReportFile(BaseModel):
    """Where and how reports are written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tz: str | None = Field(default=None, description="IANA zone of the days (Asia/Shanghai); --tz.")
    lang: Lang | None = Field(default=None, description="Report language (zh); --lang.")
    out: str | None = Field(
        default=None, description="Archive directory, relative to this file; --out."
    )
    name: str | None = Field(
        default=None, description="{name} in the path of a multi-repository report."
    )
    path: str | None = Field(
        default=None,
        description="Path template: {year}, {month}, {day}, {date}, {name}; .md/.json appended.",
    )

    @field_validator("path")
    @classmethod
    def _valid_template(cls, value: str | None) -> str | None:
        return template_validator(value) if value is not None else None


class _RunFile(BaseModel):
    """Settings of the scheduled `run` command."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_catch_up_days: int = Field(
        default=7, ge=1, le=366, description="Missed days `run` reports per repository, at most."
    )
    lease_seconds: float = Field(
        default=60.0,
        ge=1.0,
        le=3600.0,
        description="How long a worker's claim on a repository-day lasts unless renewed:"
        " a killed worker's days are taken over after this.",
    )


class _StoreFile(BaseModel):
    """Where the store lives: the embedded SQLite file in the home, or a shared PostgreSQL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url_env: str | None = Field(
        default=None,
        description=(
            "NAME of the env variable holding a postgresql:// URL (e.g. REPOHERALD_DATABASE_URL):"
            " when it is set, the store is that database. Default: SQLite in the home."
        ),
    )


Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Weekday names in ``date.weekday()`` order."""


class _PublishFile(BaseModel):
    """A delivery target; keys beyond these belong to its `type` (see Delivery)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = Field(
        min_length=1,
        description="webhook, github_issue, email or a plugin's (the archive is [report] out).",
    )
    name: str | None = Field(
        default=None,
        description="The target's name (ledger key, --only). Default: type, or type-kind.",
    )
    repos: list[str] | None = Field(
        default=None, description="Only these repositories (by report name). Default: all."
    )
    send_empty: bool = Field(
        default=False,
        description="Also send days without commits (they are skipped and filed as skipped).",
    )
    schedule: Literal["daily", "weekly"] = Field(
        default="daily",
        description='"daily", or "weekly": one roll-up per repository and week, no daily sends.',
    )
    weekday: Weekday | None = Field(
        default=None,
        description='Weekly: the day the roll-up of the 7 days before it is sent. Default: "mon".',
    )


class _GitHubFile(BaseModel):
    """The GitHub REST API: `github:owner/name` sources and pull-request context."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_url: str = Field(
        default=DEFAULT_GITHUB_API,
        description="API root; GitHub Enterprise: https://HOST/api/v3.",
    )
    token_env: str | None = Field(
        default=None,
        description="NAME of the env variable holding the token (default GITHUB_TOKEN).",
    )
    concurrency: int = Field(
        default=DEFAULT_GITHUB_CONCURRENCY, ge=1, le=16, description="Requests in flight, at most."
    )
    max_wait_seconds: float = Field(
        default=300,
        ge=0,
        le=3600,
        description="Wait this long for a rate limit to reset; beyond it, stop and say when.",
    )
    stage_timeout: float = Field(
        default=1800,
        gt=0,
        le=86400,
        description="Seconds one repository-day's fetch may take in all (requests and waits);"
        " beyond it, that day fails.",
    )


class _ConfigFile(BaseModel):
    """The whole ``repoherald.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    home: str | None = Field(
        default=None, description="Store and mirrors; REPOHERALD_HOME/--home win."
    )
    run: _RunFile = Field(default_factory=_RunFile)
    report: _ReportFile = Field(default_factory=_ReportFile)
    repos: list[_RepoFile] = Field(default_factory=list)
    llm: LlmSection = Field(default_factory=LlmSection)
    publish: list[_PublishFile] = Field(
        default_factory=list,
        description="Where `run` and `publish` deliver each repository-day (any number).",
    )
    github: _GitHubFile = Field(default_factory=_GitHubFile)
    store: _StoreFile = Field(default_factory=_StoreFile)
    site: SiteSection = Field(default_factory=SiteSection)


def load_config_file(path: Path) -> _ConfigFile:
    """Read and validate a ``repoherald.toml``; raise ConfigError naming the problem."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist: check the --config path") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8: save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    try:
        return _ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config file {path}: {describe_validation_error(exc)}") from None


def describe_validation_error(exc: ValidationError, keys: Iterable[str] = ()) -> str:
    """The first problem, located (``repos.0.brnach``), with a did-you-mean for a typo'd key.

    Shared by every pydantic-validated table (the config file, publisher options);
    ``keys`` are the keys of a table validated on its own (a publisher's Options).
    """
    errors = exc.errors()
    err = _misspelled_required(errors) or errors[0]
    loc = [str(p) for p in err["loc"]]
    where = ".".join(loc) or "(top level)"
    hint = " (see the README's configuration reference)"
    if err["type"] == "extra_forbidden" and loc:
        known = _known_keys(exc.title, loc[:-1]) or (list(keys) if len(loc) == 1 else [])
        close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
        if close:
            hint = f": did you mean {close[0]!r}?"
    return f"{where}: {err['msg']}{hint}"


def _misspelled_required(errors: list[Any]) -> Any | None:
    """The unknown key that looks like a missing required one (``soruce`` for ``source``).

    pydantic reports the missing key first ("Field required"), which hides
    the typo that caused it; the unknown key beside it is the one to name.
    """
    for err in errors:
        loc = [str(p) for p in err["loc"]]
        if err["type"] != "extra_forbidden" or not loc:
            continue
        if difflib.get_close_matches(loc[-1], _missing_keys(errors, loc[:-1]), n=1, cutoff=0.6):
            return err
    return None


def _missing_keys(errors: list[Any], parents: list[str]) -> list[str]:
    """Required keys reported missing from the table at ``parents``."""
    return [
        str(e["loc"][-1])
        for e in errors
        if e["type"] == "missing" and [str(p) for p in e["loc"][:-1]] == parents
    ]


def _known_keys(model_name: str, parents: list[str]) -> list[str]:
    """Field names of the table at ``parents`` in the config file's schema."""
    model: Any = _ConfigFile if model_name == _ConfigFile.__name__ else None
    if model is None:
        return []
    for part in parents:
        if part.isdigit():
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        ann = field.annotation
        args = getattr(ann, "__args__", ())
        model = next(
            (a for a in (ann, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None
        )
        if model is None:
            return []
    return list(model.model_fields)
