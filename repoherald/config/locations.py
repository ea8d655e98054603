"""What a ``source`` string is: a local path, a clone URL, or a backend scheme like ``github:``.

One definition, used by the configuration (which resolves local paths
relative to the config file) and by the backends (which decide how to read).
It lives in ``config/`` because the configuration is the bottom of the house:
the sources import it from here, the configuration never imports a source.
"""

from __future__ import annotations

import re

SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
"""``git@host:owner/name``: scp-like syntax that git treats as ssh."""
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(?!//)[^\\/]")
"""``github:owner/name``: a backend scheme (not ``C:\\`` nor ``https://``)."""


def is_clone_url(source: str) -> bool:
    """True for clone URLs (``https://…``, ``file://…``, ``git@host:path``)."""
    return "://" in source or bool(SCP_LIKE.match(source))


def backend_scheme(source: str) -> str | None:
    """``github:owner/name`` -> ``github``; None for local paths and clone URLs."""
    if is_clone_url(source) or not _SCHEME.match(source):
        return None
    return source.split(":", 1)[0]


def is_local_path(source: str) -> bool:
    """True when ``source`` names a directory on this machine (resolve it, don't fetch it)."""
    return not is_clone_url(source) and not _SCHEME.match(source)
