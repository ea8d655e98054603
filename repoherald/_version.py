"""The package's version, in a module of its own.

Modules that stamp it (reports, the User-Agent, ``--version``) import it from
here, so importing them never depends on the order of ``repoherald/__init__.py``.
"""

from __future__ import annotations

__version__ = "0.1.0"
