"""Plugins made importable without pip: a ``.dist-info`` with ``entry_points.txt`` on a path.

That is all ``importlib.metadata`` reads to find entry points, so a
directory holding one, put on ``sys.path`` (or a subprocess's PYTHONPATH),
is an installed plugin as far as repoherald can tell, with no network and
no build step. The entry points are read from the plugin's own
``pyproject.toml``, so the test uses what ``pip install`` would install.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

EXAMPLE = Path(__file__).parent / "data" / "plugin_example"
"""The example plugin package: an ``example:`` source and an ``example`` publisher."""


def write_dist(
    site: Path, name: str, version: str, entry_points: Mapping[str, Mapping[str, str]]
) -> Path:
    """A ``<name>-<version>.dist-info`` under ``site`` declaring ``entry_points`` by group."""
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in points.items()]
        lines.append("")
    (dist / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return dist


def install_example(site: Path) -> list[Path]:
    """Make the example plugin importable; the paths to put first on PYTHONPATH."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    write_dist(site, project["name"], project["version"], project["entry-points"])
    return [site, EXAMPLE]
