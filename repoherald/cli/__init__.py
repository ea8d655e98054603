"""Command line: a thin layer over the library.

Each command loads settings, calls one library function and prints the
result; :mod:`repoherald.cli.errors` maps exceptions to exit statuses.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from repoherald._version import __version__
from repoherald.cli.errors import fail
from repoherald.cli.llm import llm_group
from repoherald.cli.mark import mark_command
from repoherald.cli.publish import publish_command
from repoherald.cli.report import report
from repoherald.cli.run import run_command
from repoherald.cli.site import site_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="repoherald")
def cli() -> None:
    """Daily reports of what changed in the repositories you depend on."""


cli.add_command(report)
cli.add_command(run_command)
cli.add_command(publish_command)
cli.add_command(llm_group)
cli.add_command(mark_command)
cli.add_command(site_command)


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
        raise SystemExit(2) from None
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        fail(f"{exc.format_message()}{hint}", 2, False)
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code, False)
    except click.exceptions.Abort:
        fail("aborted", 130, False)


__all__ = ["cli", "main"]
