"""Configuration sits at the bottom of the house: it does not import sources or publishers.

The parsing of a ``source`` string and the path-template check live in
``config/`` (``locations.py``, ``templates.py``); ``sources`` and ``publish``
import them from there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import repoherald

CONFIG = Path(repoherald.__file__).parent / "config"


def _module_imports(path: Path) -> list[str]:
    """The modules a file imports when it is loaded (its top-level import statements)."""
    names: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def test_config_imports_no_source_or_publisher() -> None:
    above = {
        f"{path.name}: {module}"
        for path in sorted(CONFIG.glob("*.py"))
        for module in _module_imports(path)
        if module.startswith(("repoherald.sources", "repoherald.publish"))
    }
    assert above == set()
