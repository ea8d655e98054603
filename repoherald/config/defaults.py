"""Default values and shapes shared by the configuration file and the settings built from it."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from repoherald.errors import UsageError
from repoherald.i18n import DEFAULT_LANGUAGE, LANGUAGES

DEFAULT_TZ = "Asia/Shanghai"
DEFAULT_LANG = DEFAULT_LANGUAGE
DEFAULT_OUT = "reports"
DEFAULT_PATH_TEMPLATE = "{year}/{name}/{date}"
CONFIG_FILE_NAME = "repoherald.toml"


def check_lang(value: str) -> str:
    """``value`` if a catalogue exists for it (:data:`repoherald.i18n.LANGUAGES`), else a
    UsageError listing the languages there are: the catalogues are the only list."""
    if value not in LANGUAGES:
        raise UsageError(f"unknown language {value!r}: use {' or '.join(LANGUAGES)}")
    return value


def _lang_field(value: str) -> str:
    """:func:`check_lang` for a pydantic field: the message without a "Value error" prefix."""
    try:
        return check_lang(value)
    except UsageError as exc:
        raise PydanticCustomError("lang", str(exc)) from None


Lang = Annotated[
    str,
    AfterValidator(_lang_field),
    WithJsonSchema({"type": "string", "enum": list(LANGUAGES)}),
]
"""A report language: one with a catalogue in :mod:`repoherald.i18n` (the README's
configuration table lists them from the schema)."""

DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_GITHUB_TOKEN_ENV = "GITHUB_TOKEN"
DEFAULT_GITHUB_CONCURRENCY = 4
"""GitHub requests in flight: ``[github] concurrency``'s default, and the client's."""
GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
"""``owner/name`` as GitHub allows them (no path tricks such as ``..``)."""
