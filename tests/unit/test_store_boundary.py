"""The store is the only code that opens the database: no other module imports sqlite3
or psycopg."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import repoherald

PACKAGE = Path(repoherald.__file__).parent


def _imports(path: Path, module: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == module for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == module:
            return True
    return False


@pytest.mark.parametrize("driver", ["sqlite3", "psycopg"])
def test_only_the_store_package_imports_a_database_driver(driver: str) -> None:
    outside = [
        str(p.relative_to(PACKAGE))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] != "store" and _imports(p, driver)
    ]
    assert outside == []
