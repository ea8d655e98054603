"""``repoherald publish``: deliver days already in the archive again, without analysing."""

from __future__ import annotations

import sys
from typing import Any

import click

from repoherald.cli.errors import fail_on_errors, setup_logging
from repoherald.cli.options import common_options, day_options
from repoherald.cli.terminal import say
from repoherald.config.settings import build_settings
from repoherald.errors import UsageError
from repoherald.pipeline.delivery import archive_of, deliver_repository
from repoherald.pipeline.service import select_repos
from repoherald.publish.deliver import Batch, Outcome
from repoherald.store.opener import open_store


@click.command("publish")
@day_options
@click.option(
    "--only",
    "targets",
    multiple=True,
    metavar="NAME",
    help="Deliver only to this [[publish]] target (repeatable), by its `name`.",
)
@click.option(
    "--out",
    metavar="DIR",
    help="Archive to deliver from. Default: [report] out, else ./reports.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print what would be sent, where and how big; send nothing."
)
@click.option(
    "--force",
    is_flag=True,
    help="Send again days that were sent before and have changed since, or that a killed"
    " run may have sent.",
)
@common_options
def publish_command(
    targets: tuple[str, ...], dry_run: bool, force: bool, debug: bool, **options: Any
) -> None:
    """Deliver archived repository-days to the [[publish]] targets (default: yesterday).

    Reads the reports `run` wrote into the archive; analyses nothing. A day already
    sent unchanged is skipped. Exit status: 0 delivered, 1 some delivery failed, 2 usage error.
    """
    setup_logging(debug)
    outcomes: list[Outcome] = []
    with fail_on_errors(debug):
        settings = build_settings(debug=debug, no_llm=True, **options)
        chosen = _targets(settings.publish, targets)
        batch = Batch(force=force)  # digest targets: one message once every repository is read
        archive = archive_of(settings)
        with open_store(settings.db_path, url_env=settings.store_url_env) as store:
            for repo in select_repos(settings.repos):
                lang = repo.config.lang or settings.lang
                days = settings.selection.days
                if settings.selection.latest:
                    latest = store.latest_report_day(repo.key)
                    days = (latest,) if latest else ()
                delivered = deliver_repository(
                    store,
                    chosen,
                    repo,
                    days,
                    lang,
                    archive,
                    say=say,
                    force=force,
                    dry_run=dry_run,
                    batch=batch,
                )
                if not delivered.found:
                    say(f"{repo.key}: no archived report for the chosen days")
                outcomes += delivered.outcomes
            outcomes += batch.flush(store, dry_run=dry_run)
    for outcome in outcomes:
        say(outcome.line(), err=outcome.failed)
    failed = sum(o.failed for o in outcomes)
    say(f"{len(outcomes)} deliveries; {failed} failed")
    if failed:
        sys.exit(1)


def _targets(configured: tuple[Any, ...], names: tuple[str, ...]) -> tuple[Any, ...]:
    if not configured:
        raise UsageError("no [[publish]] target is configured: add one to repoherald.toml")
    known = {t.name for t in configured}
    for name in names:
        if name not in known:
            raise UsageError(
                f"--only {name!r} is not a [[publish]] target: use one of "
                + ", ".join(sorted(known))
            )
    return tuple(t for t in configured if not names or t.name in names)
