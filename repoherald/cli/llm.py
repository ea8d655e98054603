"""``repoherald llm check``: is the configured endpoint usable, before the morning run?"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from repoherald.cli.errors import fail_on_errors, setup_logging
from repoherald.cli.options import endpoint_options
from repoherald.config.endpoints import llm_settings
from repoherald.config.settings import read_config
from repoherald.errors import UsageError
from repoherald.llm.check import CheckResult, check_endpoint

MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "info": "·"}


@click.group("llm")
def llm_group() -> None:
    """The LLM endpoint: check it before a run depends on it."""


@llm_group.command("check")
@click.option(
    "--config", metavar="FILE", help="Configuration file. Default: ./repoherald.toml if present."
)
@endpoint_options
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
def check_command(
    config: str | None,
    llm_provider: str | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key_env: str | None,
    debug: bool,
) -> None:
    """Send one tiny request and say what works: reachability, key, structured output,
    latency, the model's context size.

    Exit status: 0 usable, 1 not usable, 2 the settings are incomplete or wrong.
    """
    setup_logging(debug)
    with fail_on_errors(debug):
        file_cfg, _ = read_config(config, Path.cwd())
        cfg = llm_settings(
            file_cfg.llm, llm_base_url, llm_model, llm_api_key_env, llm_provider, need_model=False,
        )  # fmt: skip
        if cfg is None:
            raise UsageError(
                "no LLM configured: set provider (or base_url and model) in [llm],"
                " or pass --llm-provider / --llm-base-url and --llm-model"
            )
        result = check_endpoint(cfg)
    _print(result, cfg.model, cfg.provider)
    if result.needs_config:
        sys.exit(2)
    if not result.usable:
        sys.exit(1)


def _print(result: CheckResult, model: str, provider: str | None) -> None:
    preset = f" (provider {provider})" if provider else ""
    click.echo(f"LLM endpoint {result.endpoint}, model {model or '(none)'}{preset}")
    for f in result.findings:
        click.echo(f"{MARKS[f.status]} {f.topic:<9} {f.text}")
    click.echo("usable: yes" if result.usable else "usable: no")
