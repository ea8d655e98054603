"""The remote services' settings, GitHub and the LLM: flags over the file, merged here only.

The ``[llm]`` table is one pydantic model (:class:`~repoherald.llm.settings.LlmSection`)
that declares every key and bound once; the flags are merged into it and
validated by it, so ``--llm-concurrency`` and ``[llm] concurrency`` obey the
same bounds. Both services name the environment variable holding their credential, never the
credential itself; a value that looks like a pasted key is refused without
being echoed, and masked wherever it might appear.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from repoherald.config.defaults import DEFAULT_GITHUB_TOKEN_ENV
from repoherald.config.file import _GitHubFile
from repoherald.errors import ConfigError, UsageError
from repoherald.llm.providers import Provider, provider
from repoherald.llm.settings import LlmSection, LlmSettings
from repoherald.redact import register, secret_env


class GitHubSettings(_GitHubFile):
    """The ``[github]`` table resolved. Holds the *name* of the token's variable, never the token.

    The same model as the table (its keys and bounds are declared once, in
    :class:`~repoherald.config.file._GitHubFile`), plus what the table leaves
    implicit. The values are checked when a repository is opened (an API URL
    that is not http(s), a token variable that is not set), so one bad setting
    costs the GitHub repositories their reports, not the whole run.
    """

    token_env: str = DEFAULT_GITHUB_TOKEN_ENV
    token_env_explicit: bool = False
    """True when ``token_env`` was configured: then an unset variable is an error, not anonymous."""
    retry_backoff: float = 1.0
    """Seconds before the first retry of a 5xx or a dropped connection (doubling after)."""
    secondary_wait: float = 60.0
    """Seconds to wait after a secondary rate limit without ``Retry-After`` (GitHub: a minute)."""


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


_LLM_FLAGS = {"concurrency": "--llm-concurrency", "token_budget": "--llm-token-budget"}
"""The ``[llm]`` keys a flag can set, by the flag's name."""


def llm_section(f: LlmSection, concurrency: int | None, token_budget: int | None) -> LlmSection:
    """The ``[llm]`` table with the flags' numbers over it, validated by the table's model.

    Called even when no LLM is configured or ``--no-llm`` is given: a bad
    number is a usage error either way (it would be one later).
    """
    given = {"concurrency": concurrency, "token_budget": token_budget}
    flags = {key: value for key, value in given.items() if value is not None}
    if not flags:
        return f
    try:
        return LlmSection.model_validate(f.model_dump(exclude_unset=True) | flags)
    except ValidationError as exc:
        raise UsageError(_flag_error(exc)) from None


def _flag_error(exc: ValidationError) -> str:
    """One line naming the flag and its bounds, which come from the model's field."""
    err = exc.errors()[0]
    key = str(err["loc"][0])
    low, high = _bounds(key)
    if high is None:
        return f"{_LLM_FLAGS[key]} must be a positive number of tokens"
    return f"{_LLM_FLAGS[key]} {err['input']} is out of range: use {low} to {high}"


def _bounds(key: str) -> tuple[Any, Any]:
    """The ``ge``/``le`` bounds declared on an ``[llm]`` key (None where there is none)."""
    meta = LlmSection.model_fields[key].metadata
    low = next((m.ge for m in meta if hasattr(m, "ge")), None)
    high = next((m.le for m in meta if hasattr(m, "le")), None)
    return low, high


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


def github_settings(f: _GitHubFile) -> GitHubSettings:
    """The ``[github]`` table as settings; a token_env that is not a variable name is refused."""
    if f.token_env is not None and (
        _looks_like_key(f.token_env) or not _ENV_NAME.fullmatch(f.token_env)
    ):
        register(f.token_env)  # never echoed, and masked wherever it might appear
        raise ConfigError(
            "[github] token_env must be the NAME of an environment variable that holds the"
            " token (e.g. GITHUB_TOKEN), not the token itself"
        )
    resolved = {
        "api_url": f.api_url.rstrip("/"),
        "token_env": f.token_env or DEFAULT_GITHUB_TOKEN_ENV,
        "token_env_explicit": f.token_env is not None,
    }
    # Not validated again: the table was, when the file was read.
    return GitHubSettings.model_construct(**(f.model_dump() | resolved))


def llm_settings(
    f: LlmSection,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    provider_name: str | None = None,
    *,
    need_model: bool = True,
) -> LlmSettings | None:
    """The LLM endpoint, or None for rules only. Flags override the [llm] table.

    ``f`` is the table with the numeric flags already merged (:func:`llm_section`).

    A provider fills what is not set explicitly. One named by the flag is a
    switch of endpoint for this run, so it replaces the file's endpoint keys
    too (flags given with it still win); one named in the file yields to the
    keys beside it. ``need_model=False`` (``llm check``, which can list the
    server's models) accepts an endpoint without one: the model is then "".
    """
    file_url, file_model, file_key = f.base_url, f.model, f.api_key_env
    if provider_name is not None:
        preset: Provider | None = provider(provider_name)
        file_url = file_model = file_key = None
    else:
        preset = provider(f.provider) if f.provider is not None else None
    url = base_url or file_url or (preset.base_url if preset else None)
    name = model or file_model or (preset.model if preset else None)
    if not url and not name:
        return None
    if not need_model and url and not name:
        name = ""
    elif preset is not None and not name:
        raise UsageError(
            f"the {preset.name} provider has no default model: set model in [llm] or"
            f" --llm-model to the name the server serves (`repoherald llm check` lists them)"
        )
    if not url or name is None or (need_model and not name):
        raise UsageError(
            "an LLM needs both a base URL and a model: set --llm-base-url and --llm-model"
            " (or base_url and model in [llm], or a provider)"
        )
    if not re.fullmatch(r"https?://[^\s]+", url):
        raise UsageError(
            f"LLM base URL {url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1"
        )
    key_env = api_key_env if api_key_env is not None else file_key
    if key_env is None and preset is not None:
        key_env = preset.api_key_env
        if key_env and not secret_env(key_env):
            raise UsageError(
                f"environment variable {key_env} is not set: export it with your"
                f" {preset.name} API key, or name another variable in api_key_env"
            )
    if key_env:
        _check_key_env(key_env)
    endpoint = {
        "base_url": url.rstrip("/"),
        "model": name,
        "api_key_env": key_env or None,
        "provider": preset.name if preset else None,
    }
    # Not validated again: the numbers were, as the table; the endpoint by the checks above.
    return LlmSettings.model_construct(**(f.model_dump() | endpoint))
