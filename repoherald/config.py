"""One frozen settings object, built once: file < environment < flags.

The configuration file is validated with pydantic so a typo is reported with
its location (``repos.0.brnach: extra inputs are not permitted``) instead of
being silently ignored. Secrets never live here: the file may only *name* an
environment variable.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repoherald.config_downstream import (
    Downstream,
    check_packages,
    check_watch,
    check_web_url,
    resolve_downstream,
)
from repoherald.errors import ConfigError, UsageError
from repoherald.llm.settings import LlmSettings
from repoherald.publish.layout import template_validator
from repoherald.redact import register, secret_env
from repoherald.sources.locations import is_local_path

if TYPE_CHECKING:  # the registry imports this module; the annotation only needs the name
    from repoherald.publish.registry import Target

DEFAULT_TZ = "Asia/Shanghai"
DEFAULT_LANG = "zh"
DEFAULT_OUT = "reports"
DEFAULT_PATH_TEMPLATE = "{year}/{name}/{date}"
CONFIG_FILE_NAME = "repoherald.toml"

Lang = Literal["zh", "en"]
_In = TypeVar("_In")
_Out = TypeVar("_Out")

DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_GITHUB_TOKEN_ENV = "GITHUB_TOKEN"
GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
"""``owner/name`` as GitHub allows them (no path tricks such as ``..``)."""


class _RepoFile(BaseModel):
    """One repository to report on (any number of them)."""

    model_config = ConfigDict(extra="forbid")

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

    model_config = ConfigDict(extra="forbid")

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


class _LlmFile(BaseModel):
    """An OpenAI-compatible endpoint; omit the table for rules only."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(default=None, description="e.g. https://api.deepseek.com/v1")
    model: str | None = Field(default=None, description="Model name at that endpoint.")
    api_key_env: str | None = Field(
        default=None, description="NAME of the env variable holding the key (never the key)."
    )
    concurrency: int = Field(default=4, ge=1, le=64, description="Parallel requests.")
    timeout: float = Field(default=120.0, gt=0, le=3600, description="Seconds per request.")
    max_output_tokens: int = Field(
        default=2048, ge=256, le=131072, description="Output room of a full analysis."
    )
    temperature: float = Field(default=0.2, ge=0, le=2)
    context_tokens: int = Field(
        default=32768, ge=4096, le=2_000_000, description="Context window; the diff is packed."
    )
    max_retries: int = Field(
        default=4, ge=0, le=10, description="Retries of timeouts, resets, 429 and 5xx."
    )
    token_budget: int | None = Field(
        default=None, ge=1, description="Stop sending once a run has used this many tokens."
    )


class _RunFile(BaseModel):
    """Settings of the scheduled `run` command."""

    model_config = ConfigDict(extra="forbid")

    max_catch_up_days: int = Field(
        default=7, ge=1, le=366, description="Missed days `run` reports per repository, at most."
    )


class _PublishFile(BaseModel):
    """A delivery target; keys beyond these belong to its `type` (see Delivery)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(min_length=1, description="archive, webhook, ...")
    name: str | None = Field(
        default=None,
        description="The target's name (ledger key, --only). Default: type, or type-kind.",
    )
    repos: list[str] | None = Field(
        default=None, description="Only these repositories (by report name). Default: all."
    )


class _GitHubFile(BaseModel):
    """The GitHub REST API: `github:owner/name` sources and pull-request context."""

    model_config = ConfigDict(extra="forbid")

    api_url: str = Field(
        default=DEFAULT_GITHUB_API,
        description="API root; GitHub Enterprise: https://HOST/api/v3.",
    )
    token_env: str | None = Field(
        default=None,
        description="NAME of the env variable holding the token (default GITHUB_TOKEN).",
    )
    concurrency: int = Field(default=4, ge=1, le=16, description="Requests in flight, at most.")
    max_wait_seconds: float = Field(
        default=300,
        ge=0,
        le=3600,
        description="Wait this long for a rate limit to reset; beyond it, stop and say when.",
    )


class _ConfigFile(BaseModel):
    """The whole ``repoherald.toml``."""

    model_config = ConfigDict(extra="forbid")

    home: str | None = Field(
        default=None, description="Store and mirrors; REPOHERALD_HOME/--home win."
    )
    run: _RunFile = Field(default_factory=_RunFile)
    report: _ReportFile = Field(default_factory=_ReportFile)
    repos: list[_RepoFile] = Field(default_factory=list)
    llm: _LlmFile = Field(default_factory=_LlmFile)
    publish: list[_PublishFile] = Field(
        default_factory=list,
        description="Where `run` and `publish` deliver each repository-day (any number).",
    )
    github: _GitHubFile = Field(default_factory=_GitHubFile)


@dataclass(frozen=True, slots=True)
class GitHubSettings:
    """The GitHub REST API. Holds the *name* of the token's variable, never the token.

    The values are checked when a repository is opened (an API URL that is not
    http(s), a token variable that is not set), so one bad setting costs the
    GitHub repositories their reports, not the whole run.
    """

    api_url: str = DEFAULT_GITHUB_API
    token_env: str = DEFAULT_GITHUB_TOKEN_ENV
    token_env_explicit: bool = False
    """True when ``token_env`` was configured: then an unset variable is an error, not anonymous."""
    concurrency: int = 4
    max_wait_seconds: float = 300.0
    retry_backoff: float = 1.0
    """Seconds before the first retry of a 5xx or a dropped connection (doubling after)."""
    secondary_wait: float = 60.0
    """Seconds to wait after a secondary rate limit without ``Retry-After`` (GitHub: a minute)."""


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


@dataclass(frozen=True, slots=True)
class DaySelection:
    """Which local calendar days to report: explicit days, or the latest active one."""

    days: tuple[date, ...] = ()
    latest: bool = False
    today: date | None = None
    """Today in the report's zone when the selection was made: that day is still partial."""
    notices: tuple[str, ...] = ()
    """What the user should know about the selection (e.g. a range cut at today)."""


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
    repos_from_config: bool = False
    """True when the repositories came from ``[[repos]]`` rather than ``--repo``."""
    github: GitHubSettings = field(default_factory=GitHubSettings)
    extra: dict[str, Any] = field(default_factory=dict)
    publish: tuple[NamedTarget, ...] = ()
    """The validated ``[[publish]]`` targets (the archive of ``run`` is not one of them)."""

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.tz_name)

    @property
    def db_path(self) -> Path:
        return self.home / "repoherald.db"

    @property
    def mirrors_dir(self) -> Path:
        return self.home / "mirrors"


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


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem, located (``repos.0.brnach``), with a did-you-mean for a typo'd key.

    Shared by every pydantic-validated table (the config file, publisher options).
    """
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    where = ".".join(loc) or "(top level)"
    hint = " (see the README's configuration reference)"
    if err["type"] == "extra_forbidden" and loc:
        known = _known_keys(exc.title, loc[:-1])
        close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
        if close:
            hint = f": did you mean {close[0]!r}?"
    return f"{where}: {err['msg']}{hint}"


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


def check_tz(name: str) -> str:
    """Validate an IANA zone name."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(
            f"unknown time zone {name!r}: use an IANA name such as Asia/Shanghai or UTC"
        ) from None
    return name


def parse_day(
    text: str, tz: ZoneInfo, *, now: datetime | None = None, flag: str = "--date"
) -> date:
    """Parse ``YYYY-MM-DD``, ``today`` or ``yesterday`` (in ``tz``)."""
    today = (now or datetime.now(tz)).astimezone(tz).date()
    word = text.strip().lower()
    if word == "today":
        return today
    if word == "yesterday":
        return today - timedelta(days=1)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        words = "'yesterday' or 'latest'" if flag == "--date" else "'today' or 'yesterday'"
        raise UsageError(f"malformed date {text!r} for {flag}: use YYYY-MM-DD, {words}")
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"invalid date {text!r} for {flag}: no such calendar day") from None


MAX_DAYS = 3660


def select_days(
    tz: ZoneInfo,
    day: str | None,
    since: str | None,
    until: str | None,
    *,
    now: datetime | None = None,
) -> DaySelection:
    """Turn --date / --since / --until into the days to report (defaults to yesterday).

    A day that has not started yet in ``tz`` is a usage error; a range that
    reaches into the future stops at today and says so.
    """
    today = (now or datetime.now(tz)).astimezone(tz).date()
    if day is not None and (since is not None or until is not None):
        raise UsageError("--date cannot be combined with --since/--until: use one or the other")
    if day is not None:
        if day.strip().lower() == "latest":
            return DaySelection(latest=True, today=today)
        single = parse_day(day, tz, now=now)
        _not_future(single, today, tz, "--date")
        return DaySelection(days=(single,), today=today)
    if since is None and until is None:
        return DaySelection(days=(today - timedelta(days=1),), today=today)
    if since is None:
        raise UsageError("--until needs --since: give the first day of the range too")
    first = parse_day(since, tz, now=now, flag="--since")
    last = parse_day(until, tz, now=now, flag="--until") if until else today - timedelta(1)
    if last < first:
        raise UsageError(f"--until {last} is before --since {first}: swap them")
    _not_future(first, today, tz, "--since")
    notices: tuple[str, ...] = ()
    if last > today:
        notices = (f"the range stops at today, {today} ({tz.key}): later days have not started",)
        last = today
    count = (last - first).days + 1
    if count > MAX_DAYS:
        raise UsageError(f"{count} days requested: ask for at most {MAX_DAYS} at a time")
    days = tuple(first + timedelta(days=i) for i in range(count))
    return DaySelection(days=days, today=today, notices=notices)


def _not_future(day: date, today: date, tz: ZoneInfo, flag: str) -> None:
    if day > today:
        raise UsageError(
            f"{flag} {day} has not started yet in {tz.key} (today is {today}):"
            " ask for today or an earlier day"
        )


def default_home() -> Path:
    """``REPOHERALD_HOME`` or the per-user data directory."""
    env = os.environ.get("REPOHERALD_HOME")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("repoherald", appauthor=False))


def _repo_from_file(r: _RepoFile, base: Path) -> RepoConfig:
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
    )


def _checked_web_url(value: str | None) -> str | None:
    """A plain http(s) URL (the same rule as ``web_url`` in the config file), without a slash."""
    if value is None:
        return None
    try:
        return _RepoFile(source="-", web_url=value).web_url.rstrip("/")  # type: ignore[union-attr]
    except ValidationError:
        raise UsageError(
            f"--web-url {value!r} must be a plain http(s) URL such as https://github.com/owner/name"
        ) from None


def _with_downstream_flags(
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


def build_settings(
    *,
    repos: tuple[str, ...] = (),
    branch: str | None = None,
    day: str | None = None,
    since: str | None = None,
    until: str | None = None,
    tz: str | None = None,
    lang: str | None = None,
    out: str | None = None,
    config: str | None = None,
    home: str | None = None,
    debug: bool = False,
    now: datetime | None = None,
    cwd: Path | None = None,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_api_key_env: str | None = None,
    llm_concurrency: int | None = None,
    llm_token_budget: int | None = None,
    no_llm: bool = False,
    name: str | None = None,
    web_url: str | None = None,
    downstream: tuple[str, ...] = (),
    watch: tuple[str, ...] = (),
) -> Settings:
    """Merge the config file, the environment and the flags into :class:`Settings`.

    ``config`` defaults to ``./repoherald.toml`` when that file exists.
    """
    cwd = cwd or Path.cwd()
    file_cfg = _ConfigFile()
    base = cwd
    if config is not None:
        file_cfg = load_config_file(Path(config))
        base = Path(config).resolve().parent
    elif (cwd / CONFIG_FILE_NAME).is_file():
        file_cfg = load_config_file(cwd / CONFIG_FILE_NAME)

    tz_name = check_tz(
        tz
        if tz is not None
        else os.environ.get("REPOHERALD_TZ") or file_cfg.report.tz or DEFAULT_TZ
    )
    lang_value = lang or os.environ.get("REPOHERALD_LANG") or file_cfg.report.lang or DEFAULT_LANG
    if lang_value not in ("zh", "en"):
        raise UsageError(f"unknown language {lang_value!r}: use zh or en")

    if (name or web_url) and len(repos) != 1:
        raise UsageError("--name and --web-url describe one repository: give exactly one --repo")
    if repos:
        repo_cfgs = tuple(
            RepoConfig(
                source=str((cwd / Path(r).expanduser()).resolve()) if is_local_path(r) else r,
                branch=branch,
                name=name,
                web_url=_checked_web_url(web_url),
            )
            for r in repos
        )
    elif file_cfg.repos:
        repo_cfgs = tuple(_repo_from_file(r, base) for r in file_cfg.repos)
        if branch is not None:
            repo_cfgs = tuple(replace(r, branch=branch) for r in repo_cfgs)
    else:
        raise UsageError(
            "no repository given: pass --repo PATH_OR_URL or list [[repos]] in repoherald.toml"
        )

    repo_cfgs = _with_downstream_flags(repo_cfgs, downstream, watch, cwd)
    seen: set[str] = set()
    unique = []
    for r in repo_cfgs:
        if r.source not in seen:
            seen.add(r.source)
            unique.append(r)
    repo_cfgs = tuple(unique)

    if home:
        home_path = Path(home).expanduser()
    elif os.environ.get("REPOHERALD_HOME"):
        home_path = default_home()
    elif file_cfg.home:
        home_path = (base / Path(file_cfg.home).expanduser()).resolve()
    else:
        home_path = default_home()

    out_dir = Path(out or file_cfg.report.out or DEFAULT_OUT)
    if not out_dir.is_absolute():
        out_dir = (cwd if out else base) / out_dir

    template = file_cfg.report.path or DEFAULT_PATH_TEMPLATE

    _check_llm_limits(llm_concurrency, llm_token_budget)
    llm = (
        None
        if no_llm
        else _llm_settings(
            file_cfg.llm, llm_base_url, llm_model, llm_api_key_env, llm_concurrency,
            llm_token_budget,
        )
    )  # fmt: skip

    github = _github_settings(file_cfg.github)
    return Settings(
        llm=llm,
        repos=repo_cfgs,
        selection=select_days(ZoneInfo(tz_name), day, since, until, now=now),
        tz_name=tz_name,
        lang=lang_value,  # type: ignore[arg-type]
        out_dir=out_dir,
        home=home_path,
        report_name=file_cfg.report.name,
        path_template=template,
        debug=debug,
        max_catch_up_days=file_cfg.run.max_catch_up_days,
        github=github,
        repos_from_config=not repos,
        publish=publish_targets(file_cfg.publish, github),
    )


def publish_targets(
    tables: list[_PublishFile], github: GitHubSettings | None = None
) -> tuple[NamedTarget, ...]:
    """Validate each ``[[publish]]`` table with its publisher's Options; names must be unique.

    A publisher whose Options have ``api_url`` or ``token_env`` (``github_issue``)
    gets the ``[github]`` values for them unless its own table sets them.
    """
    from repoherald.publish.registry import create

    gh = github or GitHubSettings()
    inherited = {"api_url": gh.api_url, "token_env": gh.token_env}
    out: list[NamedTarget] = []
    for i, table in enumerate(tables):
        data = table.model_dump(exclude_none=True)
        name = data.pop("name", None) or _default_target_name(data)
        if data["type"] == "archive":
            raise ConfigError(
                f"publish.{i}: the archive is written by `run` itself ([report] out):"
                " remove this [[publish]] entry"
            )
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
            raise ConfigError(f"publish.{i}: name {name!r} must be letters, digits, . _ -")
        if any(t.name == name for t in out):
            raise ConfigError(f"publish.{i}: two targets are named {name!r}: give each a `name`")
        out.append(NamedTarget(name, create(data, where=f"publish.{i}", inherited=inherited)))
    return tuple(out)


def _default_target_name(data: dict[str, Any]) -> str:
    kind = data.get("kind")
    return f"{data['type']}-{kind}" if isinstance(kind, str) else str(data["type"])


@dataclass(frozen=True, slots=True)
class NamedTarget:
    """A ``[[publish]]`` target and the name the ledger files its deliveries under."""

    name: str
    target: Target

    def takes(self, repo: str) -> bool:
        """True when this target delivers ``repo``'s reports."""
        repos = self.target.repos
        return repos is None or repo in repos


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_KEY_PREFIXES = ("sk-", "gsk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
                 "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "hf_", "AKIA", "AIza")  # fmt: skip


def _looks_like_key(value: str) -> bool:
    """True for a credential pasted where a variable NAME belongs.

    A known key prefix; or a long token that is not ALL_CAPS_WITH_UNDERSCORES
    and scatters digits and capitals the way generated keys do (several digit
    runs, capitals next to digits or alone between small letters), which
    CamelCase or snake_case names such as ``OpenAiKeyForTeam2024`` do not.
    """
    if any(value.startswith(p) and len(value) >= len(p) + 6 for p in _KEY_PREFIXES):
        return True
    if len(value) <= 24 or re.fullmatch(r"[A-Z][A-Z0-9_]*", value):
        return False
    digit_runs = len(re.findall(r"\d+", value))
    odd_capitals = len(re.findall(r"[A-Z]\d|[a-z][A-Z](?![a-z])", value))
    return digit_runs >= 1 and digit_runs + odd_capitals >= 4


def _check_llm_limits(concurrency: int | None, token_budget: int | None) -> None:
    """Bad numbers are usage errors even when no LLM is configured (they would be later)."""
    if concurrency is not None and not 1 <= concurrency <= 64:
        raise UsageError(f"--llm-concurrency {concurrency} is out of range: use 1 to 64")
    if token_budget is not None and token_budget < 1:
        raise UsageError("--llm-token-budget must be a positive number of tokens")


def _check_key_env(key_env: str) -> None:
    """The key's variable must be a variable name (never echo it: it may be the key) and set."""
    if _looks_like_key(key_env):
        register(key_env)
        raise UsageError(
            "the LLM API key setting (--llm-api-key-env or [llm] api_key_env): this looks like"
            " a key, not a variable name; give the NAME of an environment variable that holds"
            " the key, e.g. DEEPSEEK_API_KEY"
        )
    if not _ENV_NAME.fullmatch(key_env):
        register(key_env)
        raise UsageError(
            "the LLM API key setting must be the NAME of an environment variable"
            " (e.g. DEEPSEEK_API_KEY), not the key itself"
        )
    if not secret_env(key_env):
        raise UsageError(
            f"environment variable {key_env} is not set: export it with your API key,"
            " or drop --llm-api-key-env for a server that needs no key"
        )


def _github_settings(f: _GitHubFile) -> GitHubSettings:
    if f.token_env is not None and (
        _looks_like_key(f.token_env) or not _ENV_NAME.fullmatch(f.token_env)
    ):
        register(f.token_env)  # never echoed, and masked wherever it might appear
        raise ConfigError(
            "[github] token_env must be the NAME of an environment variable that holds the"
            " token (e.g. GITHUB_TOKEN), not the token itself"
        )
    return GitHubSettings(
        api_url=f.api_url.rstrip("/"),
        token_env=f.token_env or DEFAULT_GITHUB_TOKEN_ENV,
        token_env_explicit=f.token_env is not None,
        concurrency=f.concurrency,
        max_wait_seconds=f.max_wait_seconds,
    )


def _llm_settings(
    f: _LlmFile,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    concurrency: int | None,
    token_budget: int | None,
) -> LlmSettings | None:
    """The LLM endpoint, or None for rules only. Flags override the [llm] table."""
    url = base_url or f.base_url
    name = model or f.model
    if not url and not name:
        return None
    if not url or not name:
        raise UsageError(
            "an LLM needs both a base URL and a model: set --llm-base-url and --llm-model"
            " (or base_url and model in [llm])"
        )
    if not re.fullmatch(r"https?://[^\s]+", url):
        raise UsageError(
            f"LLM base URL {url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1"
        )
    key_env = api_key_env if api_key_env is not None else f.api_key_env
    if key_env:
        _check_key_env(key_env)
    workers = concurrency if concurrency is not None else f.concurrency
    budget = token_budget if token_budget is not None else f.token_budget
    return LlmSettings(
        base_url=url.rstrip("/"),
        model=name,
        api_key_env=key_env or None,
        concurrency=workers,
        timeout=f.timeout,
        max_output_tokens=f.max_output_tokens,
        temperature=f.temperature,
        context_tokens=f.context_tokens,
        max_retries=f.max_retries,
        token_budget=budget,
    )
