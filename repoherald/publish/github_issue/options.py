"""The options of a ``github_issue`` target (one ``[[publish]]`` table), checked when read.

The title is a template; it is checked here, with the config, so a typo in
a field is a config error rather than a failure at the first delivery.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from repoherald.config.defaults import DEFAULT_GITHUB_API, DEFAULT_GITHUB_TOKEN_ENV
from repoherald.config.templates import template_fields
from repoherald.i18n import DEFAULT_LANGUAGE
from repoherald.publish.base import PublisherOptions

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
TITLE_FIELDS = frozenset({"name", "date", "lang"})
MAX_TITLE = 256


class GitHubIssueOptions(PublisherOptions):
    """One ``[[publish]]`` table with ``type = "github_issue"``."""

    repo: str = Field(
        pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$",
        description="owner/name of the repository the issues are opened in.",
    )
    labels: list[str] = Field(default_factory=list, description="Labels of every issue.")
    title: str = Field(
        default="repoherald {name} {date}",
        min_length=1,
        description="Issue title: {name} {date} {lang} are filled in.",
    )
    close_previous: bool = Field(
        default=False, description="Close the repository's earlier open issues on a new one."
    )
    api_url: str = Field(
        default=DEFAULT_GITHUB_API, description="API root. Default: [github] api_url."
    )
    token_env: str = Field(
        default=DEFAULT_GITHUB_TOKEN_ENV,
        pattern=ENV_NAME,
        description="NAME of the env variable holding the token. Default: [github] token_env.",
    )

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: list[str]) -> list[str]:
        for label in value:
            if not label.strip() or len(label) > 50 or "," in label:
                raise ValueError(f"label {label!r} must be 1-50 characters without commas")
        return value

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        template_fields(value, sorted(TITLE_FIELDS), "title")
        try:
            value.format(name="n", date="2000-01-01", lang=DEFAULT_LANGUAGE)
        except ValueError as exc:
            raise ValueError(f"title {value!r} is not a valid template: {exc}") from None
        return value
