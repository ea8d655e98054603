"""``[github]`` and ``github = "owner/name"`` in repoherald.toml, and ``github:`` sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoherald.config import GitHubSettings, Settings, build_settings
from repoherald.errors import ConfigError


def settings_from(tmp_path: Path, text: str) -> Settings:
    cfg = tmp_path / "repoherald.toml"
    cfg.write_text(text, encoding="utf-8")
    return build_settings(config=str(cfg), home=str(tmp_path / "home"))


def test_defaults_when_there_is_no_github_table(tmp_path: Path) -> None:
    s = settings_from(tmp_path, '[[repos]]\nsource = "github:vllm-project/vllm"\n')
    assert s.github == GitHubSettings()
    assert s.github.api_url == "https://api.github.com" and s.github.token_env == "GITHUB_TOKEN"
    assert not s.github.token_env_explicit
    assert s.repos[0].source == "github:vllm-project/vllm"


def test_the_github_table_is_read(tmp_path: Path) -> None:
    s = settings_from(
        tmp_path,
        '[github]\napi_url = "https://ghe.example.com/api/v3/"\ntoken_env = "GHE_TOKEN"\n'
        "concurrency = 2\nmax_wait_seconds = 60\n\n"
        '[[repos]]\nsource = "https://ghe.example.com/team/tool.git"\ngithub = "team/tool"\n',
    )
    assert s.github.api_url == "https://ghe.example.com/api/v3"
    assert (s.github.token_env, s.github.token_env_explicit) == ("GHE_TOKEN", True)
    assert (s.github.concurrency, s.github.max_wait_seconds) == (2, 60)
    assert s.repos[0].github == "team/tool"


def test_github_sources_on_the_command_line_are_not_paths(tmp_path: Path) -> None:
    s = build_settings(repos=("github:acme/widget",), home=str(tmp_path), cwd=tmp_path)
    assert s.repos[0].source == "github:acme/widget"
    local = build_settings(repos=("some/dir",), home=str(tmp_path), cwd=tmp_path)
    assert local.repos[0].source == str((tmp_path / "some/dir").resolve())


def test_a_token_pasted_as_token_env_is_refused_without_echoing_it(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4" * 5
    with pytest.raises(ConfigError) as info:
        settings_from(tmp_path, f'[github]\ntoken_env = "{token}"\n\n[[repos]]\nsource = "."\n')
    assert "NAME of an environment variable" in str(info.value)
    assert token not in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[github]\ntokn_env = "X"\n', "did you mean 'token_env'"),
        ("[github]\nconcurrency = 0\n", "github.concurrency"),
        ("[github]\nmax_wait_seconds = -1\n", "github.max_wait_seconds"),
        ('[[repos]]\nsource = "."\ngithub = "not a repo"\n', "must be owner/name"),
    ],
)
def test_typos_and_bad_values_are_config_errors(tmp_path: Path, text: str, message: str) -> None:
    if "[[repos]]" not in text:
        text += '\n[[repos]]\nsource = "."\n'
    with pytest.raises(ConfigError, match=message):
        settings_from(tmp_path, text)
