"""The ``email`` table is checked when the config is read, and its HTML is safe by construction."""

from __future__ import annotations

from typing import Any

import pytest

from repoherald.emails import is_address
from repoherald.errors import ConfigError
from repoherald.publish import registry
from repoherald.publish.email.html import render_fragment
from repoherald.publish.email.publisher import EmailOptions, EmailPublisher

BASE: dict[str, Any] = {
    "type": "email",
    "host": "smtp.example.com",
    "from": "herald@example.com",
    "to": ["dev@example.com"],
}


def _create(**changes: Any) -> registry.Target:
    table = {**BASE, **changes}
    return registry.create({k: v for k, v in table.items() if v is not None}, "publish.1")


def test_ports_follow_security_and_the_label_names_the_server() -> None:
    for security, port in (("starttls", 587), ("ssl", 465), ("none", 25)):
        publisher = _create(security=security).publisher
        assert isinstance(publisher, EmailPublisher)
        assert publisher.label == f"email smtp.example.com:{port}"
    assert _create(port=2525).publisher.label == "email smtp.example.com:2525"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"subject": "{name} {when}"}, "the subject field {when} is not allowed"),
        ({"subject": "{name.__class__}"}, "is not allowed"),
        ({"subject": "{name"}, "subject"),
        ({"subject": "a\r\nBcc: x@evil.com"}, "one line"),
        ({"to": []}, "to"),
        ({"to": ["not an address"]}, "'not an address' is not an e-mail address"),
        ({"cc": ["a@b.com\r\nBcc: x@evil.com"]}, "is not an e-mail address"),
        ({"from": None}, "from"),
        ({"from": "Ann <ann@example.com"}, "is not an e-mail address"),
        ({"username_env": "SMTP_USER"}, "set both username_env and password_env, or neither"),
        ({"password_env": "SMTP_PASSWORD"}, "set both username_env and password_env"),
        ({"password_env": "pw=secret", "username_env": "U"}, "password_env"),
        ({"security": "tls"}, "security"),
        ({"host": "smtp.example.com/evil"}, "host"),
        ({"sender": "a@b.com"}, "sender"),  # the key is `from`
    ],
)
def test_a_bad_table_is_a_config_error(changes: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError) as exc:
        _create(**changes)
    assert says in str(exc.value) and str(exc.value).startswith("publish.1 (email)")


def test_login_variables_must_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SMTP_PASSWORD", raising=False)
    monkeypatch.setenv("SMTP_USER", "u")
    with pytest.raises(ConfigError, match="environment variable SMTP_PASSWORD is not set"):
        _create(username_env="SMTP_USER", password_env="SMTP_PASSWORD")
    monkeypatch.setenv("SMTP_PASSWORD", "pw-123456")
    target = _create(username_env="SMTP_USER", password_env="SMTP_PASSWORD")
    assert EmailPublisher.env_vars(target.publisher.options) == ("SMTP_USER", "SMTP_PASSWORD")  # type: ignore[attr-defined]


def test_addresses() -> None:
    assert is_address("ann@example.com") and is_address("Ann Lee <ann@example.com>")
    assert not is_address("ann@example") and not is_address("<ann@example.com>\nBcc: x@y.z")
    assert not is_address("安@例子.中国")  # SMTPUTF8 is not assumed
    table = {k: v for k, v in BASE.items() if k != "type"}
    opts = EmailOptions.model_validate({**table, "to": [" dev@example.com "]})
    assert opts.to == ["dev@example.com"]


def test_html_keeps_no_raw_html_and_no_unsafe_link() -> None:
    md = (
        "# Title\n\n<div onclick=x>hi</div>\n\n[a](javascript:alert(1)) [b](vbscript:x)"
        " [c](data:text/html,x) [d](file:///etc/passwd) [e](https://ok.example/x?a=1&b=2)"
        " [f](mailto:a@b.com) [g](#title) ![img](https://tracker.example/p.gif)\n"
    )
    html = render_fragment(md)
    assert "<div" not in html and "&lt;div onclick=x&gt;" in html
    hrefs = [part.split('"', 1)[0] for part in html.split('href="')[1:]]
    assert hrefs == [
        "https://ok.example/x?a=1&amp;b=2",
        "mailto:a@b.com",
        "#title",
        "https://tracker.example/p.gif",  # an image becomes a link: nothing loads by itself
    ]
    assert "<img" not in html
    assert '<h1 id="title" style="' in html


def test_prefixed_anchors_and_their_links_move_together() -> None:
    html = render_fragment("## 📊 统计\n\n[go](#-统计)\n", prefix="app-2026-04-01--")
    assert 'id="app-2026-04-01---统计"' in html and 'href="#app-2026-04-01---统计"' in html
