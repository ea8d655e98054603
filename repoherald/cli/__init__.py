"""Command line: parse flags, build settings once, call the pipeline, map errors.

Kept thin on purpose; everything it does is available from
:func:`repoherald.pipeline.run`. Exit status: 0 success, 1 a runtime failure
(something could not be read, analysed or written), 2 a usage error.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from repoherald import __version__
from repoherald.config import build_settings
from repoherald.errors import RepoheraldError


def _fail(message: str, code: int, debug: bool) -> NoReturn:
    if debug:
        traceback.print_exc()
    click.echo(f"repoherald: error: {message}", err=True)
    sys.exit(code)


class LlmProgressDisplay:
    """A progress bar on a terminal; a plain line every tenth of the way otherwise."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._last_step = -1

    def __enter__(self) -> LlmProgressDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, done: int, total: int) -> None:
        if sys.stderr.isatty():
            if self._bar is None:
                self._bar = Progress(
                    TextColumn("LLM"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True,
                )  # fmt: skip
                self._bar.start()
            if self._task is None or done == 1:
                if self._task is not None:
                    self._bar.remove_task(self._task)
                self._task = self._bar.add_task("llm", total=total)
            self._bar.update(self._task, completed=done, total=total)
            return
        step = done * 10 // max(total, 1)
        if step != self._last_step or done == total:
            self._last_step = step
            click.echo(f"LLM: {done}/{total} commits analysed", err=True)
        if done == total:
            self._last_step = -1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="repoherald")
def cli() -> None:
    """Daily reports of what changed in the repositories you depend on."""


@cli.command()
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="PATH_OR_URL",
    help="Repository to report on (repeatable). Default: [[repos]] in repoherald.toml.",
)
@click.option("--branch", help="Branch to follow. Default: the repository's default branch.")
@click.option(
    "--date",
    "day",
    metavar="YYYY-MM-DD|yesterday|today|latest",
    help="Day to report. Default: yesterday in --tz. 'latest': the newest day with commits.",
)
@click.option("--since", metavar="YYYY-MM-DD", help="First day of a range (one report per day).")
@click.option(
    "--until", metavar="YYYY-MM-DD", help="Last day of the range, inclusive. Default: yesterday."
)
@click.option("--tz", help="IANA time zone of the report's days. Default: Asia/Shanghai.")
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Report language. Default: zh.")
@click.option("--out", metavar="DIR", help="Archive directory. Default: ./reports.")
@click.option(
    "--config", metavar="FILE", help="Configuration file. Default: ./repoherald.toml if present."
)
@click.option(
    "--home",
    metavar="DIR",
    help="Data directory (store, mirrors). Default: $REPOHERALD_HOME or the per-user data dir.",
)
@click.option(
    "--llm-base-url",
    metavar="URL",
    help="OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1 (default: [llm] base_url).",
)
@click.option("--llm-model", metavar="NAME", help="Model name for the endpoint.")
@click.option(
    "--llm-api-key-env",
    metavar="VAR",
    help="NAME of the environment variable holding the API key (never the key itself).",
)
@click.option("--llm-concurrency", type=int, metavar="N", help="Parallel LLM requests (default 4).")
@click.option(
    "--llm-token-budget", type=int, metavar="N", help="Stop sending once a run has used N tokens."
)
@click.option("--no-llm", is_flag=True, help="Rules only, even when [llm] is configured.")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
def report(
    repos: Sequence[str],
    branch: str | None,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str | None,
    lang: str | None,
    out: str | None,
    config: str | None,
    home: str | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key_env: str | None,
    llm_concurrency: int | None,
    llm_token_budget: int | None,
    no_llm: bool,
    debug: bool,
) -> None:
    """Write the daily report(s) as Markdown plus a JSON twin."""
    from repoherald.pipeline import run

    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = build_settings(
            repos=tuple(repos),
            branch=branch,
            day=day,
            since=since,
            until=until,
            tz=tz,
            lang=lang,
            out=out,
            config=config,
            home=home,
            debug=debug,
            llm_base_url=llm_base_url,
            llm_model=llm_model,
            llm_api_key_env=llm_api_key_env,
            llm_concurrency=llm_concurrency,
            llm_token_budget=llm_token_budget,
            no_llm=no_llm,
        )
        with LlmProgressDisplay() as ticker:
            result = run(
                settings, progress=lambda msg: click.echo(msg, err=True), on_llm=ticker.update
            )
    except RepoheraldError as exc:
        _fail(str(exc), exc.exit_code, debug)
    except KeyboardInterrupt:
        _fail("interrupted", 130, debug)
    for path in result.written:
        if path.suffix == ".md":
            click.echo(str(path))
    for failure in result.failures:
        click.echo(f"repoherald: failed: {failure}", err=True)
    summary = (
        f"{len(result.days)} report(s), {result.commits} commits "
        f"({result.analysed} analysed, {result.cached} from cache)"
    )
    if settings.llm is not None:
        summary += (
            f"; LLM: {result.llm_requests} requests, {result.llm_tokens[0]} prompt +"
            f" {result.llm_tokens[1]} completion tokens"
        )
    click.echo(summary, err=True)
    if not result.ok:
        sys.exit(1)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point.

    Click's own usage errors (unknown option, bad choice, missing value) are
    reported in the same one-line format as ours, with exit status 2.
    """
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="repoherald",
            standalone_mode=False,
        )
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(2)
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        _fail(f"{exc.format_message()}{hint}", 2, False)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code, False)
    except click.exceptions.Abort:
        _fail("aborted", 130, False)
