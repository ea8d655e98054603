"""``repoherald run``: the scheduled entry point over every ``[[repos]]`` entry."""

from __future__ import annotations

import sys
from functools import partial
from typing import Any

import click

from repoherald.cli.errors import fail_on_errors, setup_logging
from repoherald.cli.options import cache_options, common_options, day_options, llm_options
from repoherald.cli.progress import ProgressDisplay
from repoherald.cli.terminal import say
from repoherald.config.settings import Settings, build_settings
from repoherald.errors import RepoheraldError, UsageError
from repoherald.pipeline.service import ServiceResult, Shard, run_all
from repoherald.pipeline.workers import run_workers
from repoherald.site import build_site


@click.command("run")
@day_options
@click.option(
    "--only",
    multiple=True,
    metavar="NAME",
    help="Run only this repository (repeatable): its `name` or the folder its reports go to.",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Run the I-th of N stable subsets of the repositories (for parallel CI jobs or pods).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    metavar="N",
    help="Share the run between N processes on this machine (each repository-day is claimed"
    " in the store, so runs on other machines sharing it take part too).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Send a day again to chat targets even though it was sent before and has changed,"
    " or a killed run may have sent it.",
)
@common_options
@cache_options
@llm_options
def run_command(
    only: tuple[str, ...],
    shard: str | None,
    workers: int,
    force: bool,
    debug: bool,
    no_cache: bool,
    rebuild: bool,
    **options: Any,
) -> None:
    """Report every configured repository: one report per repository-day.

    Without --date/--since, catches up every day since the newest one already
    reported for each repository (at most [run] max_catch_up_days).
    Exit status: 0 all reported, 1 some repository or commit failed, 2 usage error.
    """
    setup_logging(debug)
    catch_up = options["day"] is None and options["since"] is None and options["until"] is None
    with fail_on_errors(debug):
        settings = build_settings(debug=debug, **options)
        if not settings.repos_from_config:
            raise UsageError("run reads [[repos]] from the configuration: list them there")
        if workers > 1:
            result = run_workers(
                partial(build_settings, debug=debug, **options),
                workers,
                catch_up=catch_up,
                only=tuple(only),
                shard=Shard.parse(shard) if shard else None,
                use_cache=not no_cache,
                rebuild=rebuild,
                force=force,
                say=say,
            )
        else:
            with ProgressDisplay() as display:
                result = run_all(
                    settings,
                    catch_up=catch_up,
                    only=tuple(only),
                    shard=Shard.parse(shard) if shard else None,
                    events=display,
                    use_cache=not no_cache,
                    rebuild=rebuild,
                    force=force,
                )
    _print_summary(result)
    site_ok = _build_site(settings)
    if not result.ok or not site_ok:
        sys.exit(1)


def _build_site(settings: Settings) -> bool:
    """Build the static site after delivering, when ``[site] out`` is set; False if it failed.

    The reports are already written and delivered, so a site that cannot be
    built is said and fails the exit status without undoing anything.
    """
    if settings.site_out is None:
        return True
    try:
        built = build_site(settings.out_dir, settings.site_out, settings.site_lang or settings.lang)
    except RepoheraldError as exc:
        say(f"repoherald: failed: site: {exc}")
        return False
    for problem in built.problems:
        say(f"repoherald: failed: site: {problem.message}")
    say(f"site: {built.out / 'index.html'}: {len(built.days_built)} day page(s) built")
    return built.ok


def _print_summary(result: ServiceResult) -> None:
    for outcome in result.outcomes:
        if outcome.result is not None:
            for path in outcome.result.written:
                if path.suffix == ".md":
                    say(str(path), err=False)
    for outcome in result.outcomes:
        for delivery in outcome.deliveries:
            if not delivery.failed:
                say(delivery.line())
    for failure in result.failures:
        say(f"repoherald: failed: {failure}")
    done = [o for o in result.outcomes if o.result is not None]
    commits = sum(o.result.commits for o in done if o.result is not None)
    reports = sum(len(o.result.days) for o in done if o.result is not None)
    broken = sum(
        o.error is not None or (o.result is not None and not o.result.ok) for o in result.outcomes
    )
    deliveries = [d for o in result.outcomes for d in o.deliveries]
    undelivered = sum(d.failed for d in deliveries)
    n = result.repositories
    line = f"{n} {'repository' if n == 1 else 'repositories'}: {reports} report(s),"
    line += f" {commits} commits; {broken} failed"
    if deliveries:
        line += f"; {len(deliveries) - undelivered} of {len(deliveries)} deliveries done"
    say(line)
