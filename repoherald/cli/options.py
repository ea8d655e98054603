"""Option groups shared by the commands, so ``report``, ``run`` and ``publish`` agree.

Each group is a decorator that adds its options; the values arrive in the
command's keyword arguments under the names given here and are passed on to
:func:`repoherald.config.settings.build_settings` unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from repoherald.llm.settings import DEFAULT_CONCURRENCY

F = TypeVar("F", bound=Callable[..., Any])


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(fn: F) -> F:
        for deco in reversed(decorators):
            fn = deco(fn)
        return fn

    return apply


day_options = _stack(
    click.option(
        "--date",
        "day",
        metavar="YYYY-MM-DD|yesterday|today|latest",
        help="Day to report. Default: yesterday in --tz. 'latest': the newest day with commits.",
    ),
    click.option(
        "--since", metavar="YYYY-MM-DD", help="First day of a range (one report per day)."
    ),
    click.option(
        "--until",
        metavar="YYYY-MM-DD",
        help="Last day of the range, inclusive. Default: yesterday.",
    ),
    click.option("--tz", help="IANA time zone of the report's days. Default: Asia/Shanghai."),
)
"""--date / --since / --until / --tz."""

common_options = _stack(
    click.option(
        "--config",
        metavar="FILE",
        help="Configuration file. Default: ./repoherald.toml if present.",
    ),
    click.option(
        "--home",
        metavar="DIR",
        help="Data directory (store, mirrors). Default: $REPOHERALD_HOME or the per-user data dir.",
    ),
    click.option("--debug", is_flag=True, help="Show tracebacks and debug logs."),
)
"""--config / --home / --debug."""

endpoint_options = _stack(
    click.option(
        "--llm-provider",
        metavar="NAME",
        help="deepseek, openai, dashscope, ollama, vllm or sglang: its base URL, model and key"
        " variable, unless given too (replaces the endpoint of [llm]).",
    ),
    click.option(
        "--llm-base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1 (default: [llm]).",
    ),
    click.option("--llm-model", metavar="NAME", help="Model name for the endpoint."),
    click.option(
        "--llm-api-key-env",
        metavar="VAR",
        help="NAME of the environment variable holding the API key (never the key itself).",
    ),
)
"""--llm-provider / --llm-base-url / --llm-model / --llm-api-key-env: which endpoint."""

llm_options = _stack(
    endpoint_options,
    click.option(
        "--llm-concurrency",
        type=int,
        metavar="N",
        help=f"Parallel LLM requests (default {DEFAULT_CONCURRENCY}).",
    ),
    click.option(
        "--llm-token-budget",
        type=int,
        metavar="N",
        help="Stop sending once a run has used N tokens.",
    ),
    click.option("--no-llm", is_flag=True, help="Rules only, even when [llm] is configured."),
)
"""--llm-* and --no-llm."""

cache_options = _stack(
    click.option(
        "--no-cache",
        "no_cache",
        is_flag=True,
        help="Analyse every commit again (the cache is refreshed, not read).",
    ),
    click.option(
        "--rebuild",
        is_flag=True,
        help="Move the store aside (kept as .broken-<time>) and start a fresh one.",
    ),
)
"""--no-cache / --rebuild: the store is a cache and can always be rebuilt."""
