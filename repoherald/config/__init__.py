"""Configuration: one frozen :class:`Settings`, from flags > environment > file > defaults.

The package's modules, by what they do: ``file`` the ``repoherald.toml``
models and reading them; ``settings`` the merge into :class:`Settings`;
``days`` the days to report; ``repos`` the repositories; ``downstream`` the
"Affects your code" keys; ``endpoints`` the GitHub and LLM settings;
``overrides`` what the flags say, one dataclass per option group;
``locations`` what a source string is; ``templates`` the checks of the
``{field}`` templates; ``targets`` the ``[[publish]]`` targets; ``defaults`` the shared defaults.
The names below are re-exported so ``from repoherald.config import ...``
keeps working for the library's users.
"""

from repoherald.config.days import MAX_DAYS, DaySelection, check_tz, parse_day, select_days
from repoherald.config.defaults import (
    CONFIG_FILE_NAME,
    DEFAULT_GITHUB_API,
    DEFAULT_GITHUB_TOKEN_ENV,
    DEFAULT_LANG,
    DEFAULT_OUT,
    DEFAULT_PATH_TEMPLATE,
    DEFAULT_TZ,
    GITHUB_REPO,
    Lang,
)
from repoherald.config.downstream import Downstream
from repoherald.config.endpoints import GitHubSettings
from repoherald.config.file import describe_validation_error, load_config_file
from repoherald.config.overrides import Overrides
from repoherald.config.repos import RepoConfig
from repoherald.config.settings import Settings, build_settings, default_home, merge_settings
from repoherald.config.targets import TargetConfig, publish_targets

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_GITHUB_API",
    "DEFAULT_GITHUB_TOKEN_ENV",
    "DEFAULT_LANG",
    "DEFAULT_OUT",
    "DEFAULT_PATH_TEMPLATE",
    "DEFAULT_TZ",
    "GITHUB_REPO",
    "MAX_DAYS",
    "DaySelection",
    "Downstream",
    "GitHubSettings",
    "Lang",
    "Overrides",
    "RepoConfig",
    "Settings",
    "TargetConfig",
    "build_settings",
    "check_tz",
    "default_home",
    "describe_validation_error",
    "load_config_file",
    "merge_settings",
    "parse_day",
    "publish_targets",
    "select_days",
]
