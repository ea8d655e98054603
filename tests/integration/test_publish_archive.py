"""``publish`` delivers the configured archive's report, not whichever one the store names.

The store keeps one report path per repository-day, whatever ``--out`` wrote
it: a ``report --out elsewhere`` of a day used to make ``publish`` send that
other archive's page.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.gitfixture import GitFixture, run_repoherald
from tests.webhook_server import webhook_server

SECRET = "s3cr3t-signing-key-XYZ"
TOKEN = "tok-9f8e7d6c5b4a"
DAY = "2025-06-10"


def _workspace(tmp: Path) -> Path:
    fx = GitFixture.init(tmp / "alpha")
    fx.write("mod.py", "def f():\n    return 1\n")
    fx.commit("Fix a crash in the scheduler", when=datetime(2025, 6, 10, 12, tzinfo=UTC))
    (tmp / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\n\n[[repos]]\nsource = "alpha"\n\n'
        '[[publish]]\ntype = "webhook"\nname = "hook"\nkind = "json"\n'
        'url_env = "HOOK_URL"\nsecret_env = "HOOK_SECRET"\nretry_delay = 0\n',
        encoding="utf-8",
    )
    return tmp


def _cli(ws: Path, *args: str) -> tuple[int, str, str]:
    proc = run_repoherald(*args, "--home", str(ws / "home"), cwd=ws)
    return proc.returncode, proc.stdout, proc.stderr


def test_publish_sends_the_configured_archive_and_says_the_store_disagrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path)
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        monkeypatch.setenv("HOOK_URL", f"{server.url}/json/{TOKEN}")
        code, _, err = _cli(ws, "report", "--date", DAY)
        assert code == 0, err
        # The same day into another archive, with other links: the store's record moves there.
        code, _, err = _cli(
            ws, "report", "--date", DAY, "--repo", "alpha", "--out", "elsewhere",
            "--web-url", "https://github.com/acme/alpha",
        )  # fmt: skip
        assert code == 0, err
        ours = ws / f"reports/2025/alpha/{DAY}"
        theirs = ws / f"elsewhere/2025/alpha/{DAY}"
        assert "github.com/acme/alpha" in theirs.with_suffix(".json").read_text()

        code, out, err = _cli(ws, "publish", "--date", DAY)
        assert code == 0, err
        [received] = server.accepted("json")
        assert received.data == json.loads(ours.with_suffix(".json").read_text())
        notes = [ln for ln in err.splitlines() if "another archive" in ln]
        assert notes == [
            f"alpha {DAY}: the store's record points at {theirs}.md, another archive;"
            f" delivering {ours}.md from the configured archive"
        ], err

        # --out names the other archive: its page is read (the ledger finds it differs from
        # what was sent), and the store's record agrees, so there is no note.
        code, out, err = _cli(ws, "publish", "--date", DAY, "--out", "elsewhere", "--dry-run")
        assert code == 0, err
        assert "another archive" not in err and "outside the configured archive" not in err
        assert "hook: alpha 2025-06-10: changed" in out, out


def test_a_day_missing_from_the_configured_archive_fails_naming_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path)
    with webhook_server(SECRET) as server:
        monkeypatch.setenv("HOOK_SECRET", SECRET)
        monkeypatch.setenv("HOOK_URL", f"{server.url}/json/{TOKEN}")
        code, _, err = _cli(ws, "report", "--date", DAY, "--out", "elsewhere")
        assert code == 0, err
        code, _, err = _cli(ws, "publish", "--date", DAY)
        assert code == 1, err
        assert server.accepted("json") == []
        assert "hook: alpha 2025-06-10: failed" in err and "is missing" in err
        assert f"outside the configured archive {ws / 'reports'}" in err
        assert "--out" in err
        assert "Traceback" not in err
