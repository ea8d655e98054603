"""``repoherald site``: build the static site of the archive (incrementally)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from repoherald.cli.errors import fail_on_errors, setup_logging
from repoherald.cli.terminal import say
from repoherald.config.defaults import DEFAULT_LANG, DEFAULT_OUT, check_lang
from repoherald.config.settings import read_config
from repoherald.config.site import DEFAULT_SITE_OUT, site_dir
from repoherald.site import build_site


@click.command("site")
@click.option(
    "--archive",
    metavar="DIR",
    help="Archive of reports to build from. Default: [report] out, else ./reports.",
)
@click.option(
    "--out", metavar="DIR", help="Where to write the site. Default: [site] out, else ./site."
)
@click.option("--lang", help="Language of the site's own pages. Default: [site] lang.")
@click.option(
    "--config", metavar="FILE", help="Configuration file. Default: ./repoherald.toml if present."
)
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
def site_command(
    archive: str | None, out: str | None, lang: str | None, config: str | None, debug: bool
) -> None:
    """Build a static site (home, day pages, filters, search, trends) from the archive.

    Only days whose JSON twin changed are built again. Exit status: 0 built,
    1 some twin could not be used (the rest of the site is built; its home page
    lists them), 2 usage error.
    """
    setup_logging(debug)
    cwd = Path.cwd()
    with fail_on_errors(debug):
        file_cfg, base = read_config(config, cwd)
        archive_dir = cwd / archive if archive else base / (file_cfg.report.out or DEFAULT_OUT)
        out_dir = cwd / out if out else site_dir(file_cfg.site, base) or cwd / DEFAULT_SITE_OUT
        site_lang = check_lang(lang or file_cfg.site.lang or file_cfg.report.lang or DEFAULT_LANG)
        result = build_site(archive_dir, out_dir, site_lang)
    for problem in result.problems:
        say(f"repoherald: skipped: {problem.message}")
    say(
        f"site: {result.out / 'index.html'}: {result.pages} day pages,"
        f" {len(result.days_built)} built, {len(result.removed)} removed,"
        f" {len(result.problems)} skipped"
    )
    if not result.ok:
        sys.exit(1)
