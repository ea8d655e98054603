"""The store is the only code that opens the database: no other module imports sqlite3."""

from __future__ import annotations

import ast
from pathlib import Path

import repoherald

PACKAGE = Path(repoherald.__file__).parent


def _imports_sqlite(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "sqlite3":
            return True
    return False


def test_only_the_store_package_imports_sqlite3() -> None:
    outside = [
        str(p.relative_to(PACKAGE))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] != "store" and _imports_sqlite(p)
    ]
    assert outside == []
