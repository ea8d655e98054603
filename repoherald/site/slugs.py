"""Where the site's own pages live (relative to its root, with ``/``)."""

from __future__ import annotations

from repoherald.publish.layout import safe_component


def repo_page(name: str) -> str:
    """The page of one repository's history."""
    return f"repos/{safe_component(name)}.html"


def repo_trends_page(name: str) -> str:
    """The trends of one repository."""
    return f"repos/{safe_component(name)}.trends.html"
