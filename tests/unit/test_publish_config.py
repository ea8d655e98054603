"""``[[publish]]`` tables: named by the config, validated by the publisher's options when the
registry builds them, secrets by name only."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoherald.config import Settings, build_settings
from repoherald.errors import ConfigError
from repoherald.publish import registry


def _settings(tmp_path: Path, publish: str) -> Settings:
    (tmp_path / "repoherald.toml").write_text(
        '[[repos]]\nsource = "."\n\n' + publish, encoding="utf-8"
    )
    return build_settings(cwd=tmp_path, config=str(tmp_path / "repoherald.toml"))


def test_targets_are_validated_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK", "https://example.com/hook")
    s = _settings(
        tmp_path,
        '[[publish]]\ntype = "webhook"\nkind = "wecom"\nurl_env = "HOOK"\n'
        '[[publish]]\ntype = "webhook"\nname = "team"\nkind = "slack"\nurl_env = "HOOK"\n'
        'repos = ["vllm"]\n',
    )
    for targets in (s.publish, registry.build_all(s.publish)):
        assert [t.name for t in targets] == ["webhook-wecom", "team"]
        assert targets[1].takes("vllm") and not targets[1].takes("sglang")
        assert targets[0].takes("anything")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('type = "webhook"\nkind = "teams"\nurl_env = "HOOK"', "publish.0 (webhook): kind"),
        ('type = "pigeon"', "unknown publisher type 'pigeon'"),
        ('type = "webhook"\nkind = "slack"\nurl_env = "UNSET_HOOK_X"', "UNSET_HOOK_X is not set"),
        (
            'type = "webhook"\nkind = "slack"\nurl_env = "https://x/y"',
            "publish.0 (webhook): url_env",
        ),
        ('type = "archive"', "the archive is written by `run` itself"),
        ('type = "webhook"\nkind = "slack"\nurl_env = "HOOK"\nurl = "x"', "url: Extra inputs"),
        (
            'type = "webhook"\nkind = "slack"\nurl_evn = "HOOK"',
            "publish.0 (webhook): url_evn: Extra inputs are not permitted: did you mean 'url_env'?",
        ),
        (
            'type = "webhook"\nkind = "slack"\nurl_env = "HOOK"\nsecret_evn = "S"',
            "publish.0 (webhook): secret_evn: Extra inputs are not permitted:"
            " did you mean 'secret_env'?",
        ),
    ],
)
def test_bad_tables_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, message: str
) -> None:
    monkeypatch.setenv("HOOK", "https://example.com/hook")
    with pytest.raises(ConfigError) as exc:
        registry.build_all(_settings(tmp_path, "[[publish]]\n" + table + "\n").publish)
    assert message in str(exc.value)
    assert "example.com/hook" not in str(exc.value)


def test_two_targets_with_one_name_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK", "https://example.com/hook")
    table = '[[publish]]\ntype = "webhook"\nkind = "slack"\nurl_env = "HOOK"\n'
    with pytest.raises(ConfigError, match="two targets are named 'webhook-slack'"):
        _settings(tmp_path, table + table)
