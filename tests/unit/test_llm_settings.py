"""LLM settings: where they live, which key-variable names pass, which numbers are refused."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import repoherald.llm
from repoherald import redact
from repoherald.config import build_settings
from repoherald.errors import ConfigError, UsageError
from repoherald.llm.settings import LlmSettings

URL = "http://127.0.0.1:9/v1"


def settings(tmp_path: Path, **kw: Any) -> Any:
    return build_settings(repos=("x",), cwd=tmp_path, **kw)


def test_llm_package_does_not_import_the_configuration() -> None:
    """The dependency points config -> llm; ``repoherald/__init__`` loads both, so read the
    import statements themselves."""
    package = Path(repoherald.llm.__file__).parent
    imported = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    assert "repoherald.llm.settings" in imported, "the scan sees llm's own imports"
    assert not [m for m in imported if m.startswith("repoherald.config")]


def test_configuration_builds_the_llm_settings(tmp_path: Path) -> None:
    built = settings(tmp_path, llm_base_url=URL + "/", llm_model="m", llm_concurrency=8)
    assert built.llm == LlmSettings(base_url=URL, model="m", concurrency=8)


@pytest.mark.parametrize(
    "name",
    [
        "DEEPSEEK_API_KEY",
        "OPENAI_API_KEY",
        "my_key",
        "hf_token",
        "A_VERY_LONG_VARIABLE_NAME_FOR_THE_KEY_2024",
        "OpenAiApiKeyForTeam2024Prod",
        "dashscope_api_key_v2_prod_2024",
        "team_LLM_API_KEY_v2_backup",
    ],
)
def test_variable_names_are_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "value-of-the-key")
    try:
        built = settings(tmp_path, llm_base_url=URL, llm_model="m", llm_api_key_env=name)
        assert built.llm.api_key_env == name
        assert built.llm.api_key() == "value-of-the-key"
        assert redact.redact("x value-of-the-key y") == "x *** y", "reading it registers it"
    finally:
        redact._forget_all()


@pytest.mark.parametrize(
    "pasted",
    [
        "gsk_Q7xK2mP9vL4nR8sT1wY6zB3cD5fG0hJ",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "xoxb-1234567890-abcdefghij",
        "sk-Q7xK2mP9vL4nR8sT1wY6",
        "hf_Q7xK2mP9vL4nR8sT1wY6zB3",
        "Q7xK2mP9vL4nR8sT1wY6zB3cD5fG0hJ",
        "a3f9c2d18b7e4f6a9c0d1e2f3a4b5c6d",
    ],
)
def test_keys_pasted_as_names_are_refused_without_echo(tmp_path: Path, pasted: str) -> None:
    try:
        with pytest.raises(UsageError) as err:
            settings(tmp_path, llm_base_url=URL, llm_model="m", llm_api_key_env=pasted)
        message = str(err.value)
        assert "this looks like a key, not a variable name" in message
        assert pasted[3:12] not in message
        assert redact.redact(f"echo {pasted}") == "echo ***", "a pasted key is masked from then on"
    finally:
        redact._forget_all()


def test_unset_variable_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RH_UNSET_VAR", raising=False)
    with pytest.raises(UsageError, match="environment variable RH_UNSET_VAR is not set"):
        settings(tmp_path, llm_base_url=URL, llm_model="m", llm_api_key_env="RH_UNSET_VAR")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"llm_concurrency": 0}, "--llm-concurrency 0 is out of range"),
        ({"llm_concurrency": 65}, "--llm-concurrency 65 is out of range"),
        ({"llm_token_budget": -5}, "--llm-token-budget must be a positive number"),
        ({"llm_token_budget": 0}, "--llm-token-budget must be a positive number"),
    ],
)
@pytest.mark.parametrize(
    "llm",
    [{}, {"no_llm": True}, {"llm_base_url": URL, "llm_model": "m"}],
    ids=["no-llm-configured", "no-llm-flag", "llm"],
)
def test_llm_numbers_are_checked_always(
    tmp_path: Path, flags: dict[str, int], message: str, llm: dict[str, Any]
) -> None:
    with pytest.raises(UsageError, match=message):
        settings(tmp_path, **flags, **llm)


@pytest.mark.parametrize(
    ("key", "value"),
    [("concurrency", 0), ("concurrency", 1), ("concurrency", 64), ("concurrency", 65),
     ("token_budget", 0), ("token_budget", 1)],
)  # fmt: skip
def test_a_flag_and_its_key_obey_the_same_bounds(tmp_path: Path, key: str, value: int) -> None:
    """``--llm-concurrency`` and ``[llm] concurrency`` are checked by one model's bounds."""
    config = tmp_path / "llm.toml"  # not ./repoherald.toml: the flags' run must not read it
    config.write_text(f'[llm]\nbase_url = "{URL}"\nmodel = "m"\n{key} = {value}\n')
    outcomes = []
    for kwargs in ({}, {"llm_base_url": URL, "llm_model": "m", f"llm_{key}": value}):
        try:
            built = settings(tmp_path, config=str(config) if not kwargs else None, **kwargs)
            outcomes.append(getattr(built.llm, key) == value)
        except (UsageError, ConfigError):
            outcomes.append(False)
    assert outcomes[0] == outcomes[1] == (value >= 1 and value <= 64)
