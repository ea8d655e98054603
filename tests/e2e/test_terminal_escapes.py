"""Remote text never drives the terminal: escape sequences in it are dropped from stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from repoherald.cli.terminal import printable
from tests.gitfixture import GitFixture, run_repoherald
from tests.github_day import DAY, TZ_NAME, mixed_day
from tests.github_server import FakeGitHub

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mForbidden\x1b[0m\x9b2J\x9d0;x\x9c by\x08\x7f policy\r"


def test_a_403_message_with_escapes_reaches_stderr_as_plain_text(tmp_path: Path) -> None:
    widget = GitFixture.init(tmp_path / "widget-src")
    mixed_day(widget)
    with FakeGitHub() as gh:
        gh.add_repo("acme/widget", widget.path)
        gh.fault(r"^/repos/acme/widget$", "status", status=403, message=HOSTILE)
        (tmp_path / "repoherald.toml").write_text(
            f'[report]\ntz = "{TZ_NAME}"\n\n[github]\napi_url = "{gh.api_url}"\n\n'
            '[[repos]]\nsource = "github:acme/widget"\n',
            encoding="utf-8",
        )
        proc = run_repoherald(
            "run", "--date", str(DAY), "--home", str(tmp_path / "h"), cwd=tmp_path
        )
    assert proc.returncode == 1
    (line,) = [ln for ln in proc.stderr.splitlines() if "failed:" in ln]
    assert "(HTTP 403: ]0;pwnedForbidden by policy)" not in line  # OSC text dropped whole
    assert "(HTTP 403: Forbidden by policy)" in line
    for control in ("\x1b", "\x9b", "\x9d", "\x9c", "\x07", "\x08", "\x7f", "\r"):
        assert control not in proc.stderr


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]0;title\x07ok", "ok"),
        ("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b[2Jclear\x1b[1;31mred", "clearred"),
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),
        ("\x9b31mc1\x9d0;t\x9c", "c1"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("\x00nul\x1b", "nul"),
        ("中文 ✓ émoji 🙂", "中文 ✓ émoji 🙂"),
    ],
)
def test_printable_drops_sequences_and_controls_and_keeps_text(text: str, shown: str) -> None:
    assert printable(text) == shown
