"""The ``[site]`` table: where ``run`` builds the static site of the archive (off by default)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from repoherald.config.defaults import Lang

DEFAULT_SITE_OUT = "site"
"""Where ``repoherald site`` writes without ``--out`` or ``[site] out``."""


class SiteSection(BaseModel):
    """The static site of the archive (`repoherald site`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: str | None = Field(
        default=None,
        description="Site directory, relative to this file: `run` builds the site there after"
        " delivering. Default: no site under `run`; `repoherald site` writes ./site.",
    )
    lang: Lang | None = Field(
        default=None,
        description="Language of the site's own pages (day pages keep their report's)."
        " Default: [report] lang.",
    )


def site_dir(section: SiteSection, base: Path) -> Path | None:
    """``[site] out`` resolved against the config file's folder, or None when unset."""
    if section.out is None:
        return None
    path = Path(section.out).expanduser()
    return path if path.is_absolute() else base / path
