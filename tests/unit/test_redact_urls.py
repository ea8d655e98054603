"""Every secret-bearing part of a webhook URL is masked, registered or not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from repoherald.redact import _forget_all, redact, register


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    _forget_all()
    yield
    _forget_all()


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("no hook at /services/T0001/B0002/Zq8xW3vK9mN2pL5rT7yU1aB4", "Zq8xW3vK9mN2pL5rT7yU1aB4"),
        ("https://open.feishu.cn/open-apis/bot/v2/hook/2f1c-99ab-77de", "2f1c-99ab-77de"),
        ("https://open.larksuite.com/open-apis/bot/v2/hook/abcdef123456", "abcdef123456"),
        ("https://oapi.dingtalk.com/robot/send?access_token=9a8b7c6d5e", "9a8b7c6d5e"),
        ("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7xxx", "693a91f6-7xxx"),
        ("https://discord.com/api/webhooks/1234567/AbCdEf-gh_ij", "AbCdEf-gh_ij"),
    ],
)
def test_known_webhook_shapes_are_masked_without_registration(text: str, secret: str) -> None:
    assert secret not in redact(text) and "***" in redact(text)


def test_a_registered_url_masks_its_path_and_query_values_wherever_they_appear() -> None:
    register("https://hooks.example.com/in/a1b2c3d4e5f6?sig=Kx7Lm9Np2Q&format=json")
    said = redact("400: no route /in/a1b2c3d4e5f6 (sig Kx7Lm9Np2Q) format json")
    assert "a1b2c3d4e5f6" not in said and "Kx7Lm9Np2Q" not in said
    assert "format json" in said  # a short flag is not a secret to mask everywhere


def test_ordinary_paths_in_reports_are_left_alone() -> None:
    text = "src/services/billing.py and /hooks/pre-commit and docs/open-apis.md"
    assert redact(text) == text
