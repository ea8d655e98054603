"""Which links the site makes: plain http(s) to a known host, nothing else.

Every URL on a page comes from a twin, and a twin's URLs come from servers
and configuration (a ``web_url``, a pull request's ``html_url``). A URL that
is not plain http(s) (``javascript:``, ``data:``), or that points at a host
the report did not name, is shown as text, never as a link.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from repoherald.render import escape

FORGES = frozenset({"github.com", "gitlab.com", "codeberg.org"})
"""Hosts every report may link to: the forges repoherald derives web pages for."""


def host_of(url: str | None) -> str | None:
    """The lower-case host of a plain http(s) URL, else None."""
    if not url or escape.url(url) is None:
        return None
    try:
        return (urlsplit(url).hostname or "").lower() or None
    except ValueError:
        return None


def safe_link(url: object, hosts: frozenset[str]) -> str | None:
    """``url`` when it may be a link target on the page (see the module), else None."""
    if not isinstance(url, str):
        return None
    host = host_of(url)
    return url if host is not None and (host in FORGES or host in hosts) else None
