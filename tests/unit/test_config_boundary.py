"""Configuration sits at the bottom of the house: it does not import sources or publishers.

The parsing of a ``source`` string and the path-template check live in
``config/`` (``locations.py``, ``templates.py``); ``sources`` and ``publish``
import them from there.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest

import repoherald
from repoherald.config import build_settings

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


def test_config_does_not_import_publish_even_lazily() -> None:
    """A function-level ``from repoherald.publish ... import`` reaches up just the same."""
    above = {
        f"{path.name}: {node.module}"
        for path in sorted(CONFIG.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith(("repoherald.sources", "repoherald.publish"))
    }
    assert above == set()


def test_settings_hold_publish_targets_as_plain_frozen_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK", "https://example.com/hook")
    (tmp_path / "repoherald.toml").write_text(
        '[[repos]]\nsource = "."\n\n[[publish]]\ntype = "email"\nhost = "smtp.example.com"\n'
        'from_addr = "a@example.com"\nto = ["b@example.com"]\n\n'
        '[[publish]]\ntype = "webhook"\nkind = "slack"\nurl_env = "HOOK"\n',
        encoding="utf-8",
    )
    settings = build_settings(cwd=tmp_path, config=str(tmp_path / "repoherald.toml"))
    assert [t.type for t in settings.publish] == ["email", "webhook"]
    for target in settings.publish:
        assert _plain(target), f"{target.name} holds a live object"
        with pytest.raises(dataclasses.FrozenInstanceError):
            target.name = "other"  # type: ignore[misc]
        with pytest.raises(TypeError):
            target.options["kind"] = "wecom"  # type: ignore[index]
    assert settings.publish[0].table()["to"] == ["b@example.com"]


def _plain(value: object) -> bool:
    """True for a value made only of data: scalars, containers of them, frozen dataclasses."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, Mapping):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(_plain(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False
