"""Provider presets: one word fills the endpoint; explicit keys win; a typo is a did-you-mean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repoherald.config import build_settings
from repoherald.errors import ConfigError, UsageError
from repoherald.llm.providers import PROVIDERS


def settings(tmp_path: Path, toml: str = "", **kw: Any) -> Any:
    config = tmp_path / "repoherald.toml"
    config.write_text(toml, encoding="utf-8")
    return build_settings(repos=("x",), cwd=tmp_path, config=str(config), **kw)


@pytest.mark.parametrize(
    ("name", "url", "model", "key"),
    [
        ("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY"),
        ("openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
        (
            "dashscope",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            "DASHSCOPE_API_KEY",
        ),
    ],
)
def test_a_hosted_provider_fills_url_model_and_key_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, url: str, model: str, key: str
) -> None:
    monkeypatch.setenv(key, "secret-value-1234")
    llm = settings(tmp_path, f'[llm]\nprovider = "{name}"\n').llm
    assert (llm.base_url, llm.model, llm.api_key_env, llm.provider) == (url, model, key, name)


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("ollama", "http://localhost:11434/v1"),
        ("vllm", "http://localhost:8000/v1"),
        ("sglang", "http://localhost:30000/v1"),
    ],
)
def test_a_local_server_needs_no_key_but_a_model(tmp_path: Path, name: str, url: str) -> None:
    llm = settings(tmp_path, llm_provider=name, llm_model="Qwen/Qwen2.5-7B-Instruct").llm
    assert (llm.base_url, llm.api_key_env) == (url, None)
    with pytest.raises(UsageError, match=f"the {name} provider has no default model"):
        settings(tmp_path, llm_provider=name)


def test_explicit_keys_beside_a_file_provider_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_KEY", "secret-value-1234")
    toml = '[llm]\nprovider = "deepseek"\nmodel = "deepseek-reasoner"\napi_key_env = "TEAM_KEY"\n'
    llm = settings(tmp_path, toml).llm
    assert (llm.base_url, llm.model, llm.api_key_env) == (
        "https://api.deepseek.com/v1",
        "deepseek-reasoner",
        "TEAM_KEY",
    )
    assert settings(tmp_path, toml, llm_model="deepseek-chat").llm.model == "deepseek-chat"


def test_the_provider_flag_switches_the_whole_endpoint_of_the_file(tmp_path: Path) -> None:
    toml = '[llm]\nbase_url = "https://api.deepseek.com/v1"\nmodel = "deepseek-chat"\n'
    llm = settings(tmp_path, toml, llm_provider="ollama", llm_model="qwen2.5:7b").llm
    assert (llm.base_url, llm.model, llm.api_key_env) == (
        "http://localhost:11434/v1",
        "qwen2.5:7b",
        None,
    )


def test_an_unset_key_variable_of_a_provider_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    with pytest.raises(UsageError, match=r"DASHSCOPE_API_KEY is not set.*dashscope API key"):
        settings(tmp_path, llm_provider="dashscope")


def test_an_unknown_provider_gets_a_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="provider 'deepseak': did you mean 'deepseek'"):
        settings(tmp_path, llm_provider="deepseak")
    with pytest.raises(ConfigError, match=r"llm\.provider: .*did you mean 'dashscope'"):
        settings(tmp_path, '[llm]\nprovider = "dashscop"\n')


def test_an_unknown_provider_flag_exits_2_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "repoherald", "report", "--repo", str(tmp_path),
         "--llm-provider", "olama"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
        env={**os.environ, "REPOHERALD_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "repoherald: error: unknown LLM provider 'olama': did you mean 'ollama'? use one of"
        f" {', '.join(PROVIDERS)} (or set base_url and model for any other OpenAI-compatible"
        " endpoint)"
    ]
