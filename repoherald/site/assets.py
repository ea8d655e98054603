"""The site's own CSS and JavaScript, copied from the package into ``assets/``.

Written here, small, no CDN: every page loads them from the site itself, so
the site works from ``file://`` and offline.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from repoherald.site.pages import write_page

ASSETS = ("site.css", "site.js", "search.js", "icon.svg")


def write_assets(out: Path) -> None:
    """Copy the assets into ``out/assets`` (unchanged files are left alone)."""
    folder = files("repoherald.site") / "assets"
    for name in ASSETS:
        write_page(out, f"assets/{name}", (folder / name).read_text(encoding="utf-8"))
