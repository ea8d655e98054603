"""``repoherald report``: ad-hoc reports of one or more repositories for a day or a range."""

from __future__ import annotations

import sys
from typing import Any

import click

from repoherald.cli.errors import fail_on_errors, setup_logging
from repoherald.cli.options import cache_options, common_options, day_options, llm_options
from repoherald.cli.progress import ProgressDisplay
from repoherald.cli.terminal import say
from repoherald.config.settings import build_settings
from repoherald.i18n import LANGUAGES
from repoherald.pipeline.run import RunResult, run
from repoherald.publish.registry import build_all


@click.command()
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="PATH_OR_URL",
    help="Repository to report on (repeatable). Default: [[repos]] in repoherald.toml.",
)
@click.option("--branch", help="Branch to follow. Default: the repository's default branch.")
@click.option("--name", help="Display name of the one --repo (like `name` in [[repos]]).")
@click.option(
    "--web-url",
    metavar="URL",
    help="Web page of the one --repo, for commit and PR links (like `web_url` in [[repos]]).",
)
@click.option(
    "--downstream",
    multiple=True,
    metavar="PATH",
    help="Checkout of your code built on the one repository (repeatable): the report shows"
    " what each commit breaks or changes in it (like `downstream` in [[repos]]).",
)
@click.option(
    "--watch",
    multiple=True,
    metavar="GLOB",
    help="Path glob of the one repository to hear about (repeatable), e.g. 'vllm/v1/**'"
    " (like `watch` in [[repos]]).",
)
@day_options
@click.option("--lang", type=click.Choice(LANGUAGES), help="Report language. Default: zh.")
@click.option("--out", metavar="DIR", help="Archive directory. Default: ./reports.")
@common_options
@cache_options
@llm_options
def report(
    repos: tuple[str, ...], debug: bool, no_cache: bool, rebuild: bool, **options: Any
) -> None:
    """Write the daily report(s) as Markdown plus a JSON twin."""
    setup_logging(debug)
    with fail_on_errors(debug):
        settings = build_settings(repos=tuple(repos), debug=debug, **options)
        # `report` delivers nothing: the [[publish]] tables are checked, their secrets are not.
        build_all(settings.publish, require_env=False)
        with ProgressDisplay() as display:
            result = run(settings, events=display, use_cache=not no_cache, rebuild=rebuild)
    _print_summary(result, llm=settings.llm is not None)
    if not result.ok:
        sys.exit(1)


def _print_summary(result: RunResult, *, llm: bool) -> None:
    for path in result.written:
        if path.suffix == ".md":
            say(str(path), err=False)
    for failure in result.failures:
        say(f"repoherald: failed: {failure}")
    summary = (
        f"{len(result.days)} report(s), {result.commits} commits "
        f"({result.analysed} analysed, {result.cached} from cache)"
    )
    if llm:
        summary += (
            f"; LLM: {result.llm_requests} requests, {result.llm_tokens[0]} prompt +"
            f" {result.llm_tokens[1]} completion tokens"
        )
        if result.llm_fallbacks:
            summary += f", {result.llm_fallbacks} commits kept the rules analysis"
    say(summary)
