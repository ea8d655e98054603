"""Display names of git repositories and the parts of a clone URL that may be shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repoherald import redact
from repoherald.errors import UsageError
from repoherald.sources.git.mirror import mirror_path, parse_remote
from repoherald.sources.git.naming import derive_name, identity_from_url, name_from_path


@pytest.fixture(autouse=True)
def no_secrets() -> Iterator[None]:
    redact._forget_all()
    yield
    redact._forget_all()


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/srv/mirrors/foo/repo", "foo"),
        ("/home/me/X/.git", "X"),
        ("/home/me/X/.git/", "X"),
        ("/srv/git/vllm.git", "vllm"),
        ("/srv/git/foo/repo.git", "foo"),
        ("/srv/x/repo/.git", "x"),
        ("/srv/repos", "repos"),
        ("/srv/x/REPO", "x"),
        ("/home/me/vue.js", "vue.js"),
    ],
)
def test_name_from_path_skips_components_that_name_no_project(path: str, name: str) -> None:
    assert name_from_path(path) == name


@pytest.mark.parametrize("path", ["/", "", ".git", "/repo/.git", "repo"])
def test_name_from_path_is_never_empty(path: str) -> None:
    assert name_from_path(path).strip()


@pytest.mark.parametrize(
    ("url", "name", "web"),
    [
        ("https://github.com/o/r.git", "o/r", "https://github.com/o/r"),
        ("https://user:tok@github.com/o/r.git", "o/r", "https://github.com/o/r"),
        ("git@gitlab.com:grp/sub/r.git", "sub/r", "https://gitlab.com/grp/sub/r"),
        ("https://user:tok@example.com", "example.com", None),
        ("file:///srv/x/.git", "srv/x", None),
        ("file:///", "repository", None),
        ("ssh://git@example.com/r", "r", None),
    ],
)
def test_identity_from_url(url: str, name: str, web: str | None) -> None:
    ident = identity_from_url(url)
    assert (ident.name, ident.web_url) == (name, web)
    assert "tok" not in ident.name


def test_precedence_configured_then_origin_then_path() -> None:
    origin = "https://github.com/org/foo.git"
    assert derive_name("mine", origin, "/srv/mirrors/foo/repo") == "mine"
    assert derive_name(None, origin, "/srv/mirrors/bar/repo") == "org/foo"
    assert derive_name(None, None, "/srv/mirrors/bar/repo") == "bar"
    assert derive_name("", None, "/x/.git") == "x"


def test_credentials_leave_the_url_and_are_registered_for_redaction() -> None:
    remote = parse_remote("https://alice:s3cr%2Ft-value@git.example.com:8443/o/r.git")
    assert remote.url == remote.display == "https://git.example.com:8443/o/r.git"
    assert (remote.username, remote.password) == ("alice", "s3cr/t-value")
    assert "s3cr" not in repr(remote)
    assert redact.redact("echo s3cr/t-value and s3cr%2Ft-value") == "echo *** and ***"
    assert redact.redact("alice") == "alice", "a user name with a password is not a secret"


def test_a_long_user_name_without_password_is_a_token() -> None:
    remote = parse_remote("https://tok0123456789abcdef@github.com/o/r")
    assert remote.url == "https://github.com/o/r"
    assert remote.username == "tok0123456789abcdef" and remote.password == ""
    assert redact.redact("bad tok0123456789abcdef") == "bad ***"


def test_ssh_user_is_kept_password_dropped() -> None:
    remote = parse_remote("ssh://git:pw-dropped@example.com/o/r.git")
    assert remote.url == "ssh://git@example.com/o/r.git"
    assert remote.display == "ssh://example.com/o/r.git"
    assert not remote.has_credentials
    assert redact.redact("pw-dropped") == "***"


@pytest.mark.parametrize(
    ("source", "transport"),
    [
        ("https://example.com/r", "https"),
        ("HTTP://example.com/r", "http"),
        ("git+ssh://example.com/r", "ssh"),
        ("git@example.com:r.git", "ssh"),
        ("git://example.com/r", "git"),
        ("file:///srv/r.git", "file"),
        ("./odd;x://path", "file"),
    ],
)
def test_transports(source: str, transport: str) -> None:
    remote = parse_remote(source)
    assert remote.transport == transport
    assert remote.url == source and not remote.has_credentials


def test_line_break_in_credentials_is_refused() -> None:
    with pytest.raises(UsageError, match="line break"):
        parse_remote("https://a:b%0Ac@example.com/r")


def test_mirror_is_keyed_without_credentials() -> None:
    root = Path("/m")
    one = parse_remote("https://u:one-token@example.com/o/r.git")
    two = parse_remote("https://u:two-token@example.com/o/r.git")
    assert mirror_path(root, one.url) == mirror_path(root, two.url)
    assert mirror_path(root, one.url) == mirror_path(root, "https://example.com/o/r.git")
    assert "token" not in str(mirror_path(root, one.url))
