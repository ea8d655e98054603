"""The library API stays what ``__all__`` says: importable, documented, and nothing private."""

from __future__ import annotations

import inspect

import repoherald


def test_every_exported_name_exists_and_is_public() -> None:
    for name in repoherald.__all__:
        assert hasattr(repoherald, name), name
        assert not name.startswith("_") or name == "__version__", name


def test_exported_callables_and_classes_have_docstrings() -> None:
    for name in repoherald.__all__:
        obj = getattr(repoherald, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_all_errors_share_one_root() -> None:
    errors = [getattr(repoherald, n) for n in repoherald.__all__ if n.endswith("Error")]
    assert errors
    for err in errors:
        assert issubclass(err, repoherald.RepoheraldError), err


def test_run_accepts_event_subscribers() -> None:
    params = inspect.signature(repoherald.run).parameters
    assert "events" in params
    assert params["events"].kind is inspect.Parameter.KEYWORD_ONLY
