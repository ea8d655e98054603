"""``repoherald mark``: a reader's correction of a commit's verdict, or the export of them all."""

from __future__ import annotations

from pathlib import Path

import click

from repoherald.cli.errors import fail_on_errors, setup_logging
from repoherald.cli.options import common_options
from repoherald.config.settings import read_config, resolve_home
from repoherald.corrections import export_corrections, mark_commit
from repoherald.errors import UsageError
from repoherald.models import ChangeType, Importance
from repoherald.store.opener import open_store


@click.command("mark")
@click.argument("sha", required=False)
@click.option(
    "--importance",
    type=click.Choice([i.value for i in Importance]),
    help="The importance your team gives the commit.",
)
@click.option(
    "--type",
    "change_type",
    type=click.Choice([c.value for c in ChangeType]),
    help="Its change type, when the tool's is wrong too.",
)
@click.option("--reason", help="Why, in a sentence: it is shown in the report.")
@click.option(
    "--repo",
    metavar="NAME",
    help="The commit's repository, by its name in the report (when the SHA is in several).",
)
@click.option(
    "--export",
    metavar="FILE.tsv",
    help="Write every correction as labelled rows in the benchmarks' commits.tsv format.",
)
@common_options
def mark_command(
    sha: str | None,
    importance: str | None,
    change_type: str | None,
    reason: str | None,
    repo: str | None,
    export: str | None,
    config: str | None,
    home: str | None,
    debug: bool,
) -> None:
    """Correct a reported commit's verdict: later renderings of its day show the correction
    beside the tool's verdict (the analysis itself is never changed).

    repoherald mark SHA --importance high [--type bugfix] --reason "..." [--repo NAME];
    repoherald mark --export FILE.tsv.
    """
    setup_logging(debug)
    with fail_on_errors(debug):
        file_cfg, base = read_config(config, Path.cwd())
        path = resolve_home(home, file_cfg, base) / "repoherald.db"
        if export is not None:
            if sha or importance or change_type or reason or repo:
                raise UsageError("--export writes every correction: give it alone")
            with open_store(path, url_env=file_cfg.store.url_env) as store:
                count = export_corrections(store, Path(export))
            click.echo(f"{count} correction(s) written to {export}")
            return
        if sha is None or importance is None or reason is None:
            raise UsageError(
                "mark needs a SHA, --importance and --reason, e.g. repoherald mark 1a2b3c4"
                ' --importance high --reason "breaks our plugin\'s loader"'
            )
        with open_store(path, url_env=file_cfg.store.url_env) as store:
            done = mark_commit(
                store, sha, Importance(importance),
                ChangeType(change_type) if change_type else None, reason, repo,
            )  # fmt: skip
    kind = f" ({change_type})" if change_type else ""
    click.echo(
        f"{done.repo} {done.sha[:12]}: marked {importance}{kind}; the reports of its day show"
        " it when they are written again (repoherald report or run --date that day)"
    )
