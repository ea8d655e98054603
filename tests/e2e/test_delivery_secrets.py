"""Delivery secrets are needed by the commands that deliver (`run`, `publish`), not `report`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.gitfixture import GitFixture, run_repoherald

DAY = "2025-06-10"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    fx = GitFixture.init(tmp_path / "proj")
    fx.write("app.py", "def app():\n    pass\n")
    fx.commit("Add app", when=datetime(2025, 6, 10, 9, tzinfo=UTC))
    (tmp_path / "repoherald.toml").write_text(
        '[report]\ntz = "UTC"\n\n[[repos]]\nsource = "proj"\n\n'
        '[[publish]]\ntype = "webhook"\nkind = "slack"\nurl_env = "REPOHERALD_TEST_UNSET_HOOK"\n',
        encoding="utf-8",
    )
    return tmp_path


def test_report_writes_without_the_delivery_secrets(workspace: Path) -> None:
    proc = run_repoherald("report", "--date", DAY, "--home", str(workspace / "h"), cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "reports/2025/proj" / f"{DAY}.md").is_file()
    assert "REPOHERALD_TEST_UNSET_HOOK" not in proc.stderr


def test_report_still_validates_the_publish_tables(workspace: Path) -> None:
    toml = workspace / "repoherald.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + 'urll = "x"\n', encoding="utf-8")
    proc = run_repoherald("report", "--date", DAY, "--home", str(workspace / "h"), cwd=workspace)
    assert proc.returncode == 2
    assert "publish.0 (webhook): urll" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", ["run", "publish"])
def test_delivering_commands_check_the_secrets_up_front(workspace: Path, command: str) -> None:
    proc = run_repoherald(command, "--date", DAY, "--home", str(workspace / "h"), cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "repoherald: error: publish.0 (webhook): environment variable"
        " REPOHERALD_TEST_UNSET_HOOK is not set: export it"
    )
    assert not (workspace / "reports").exists()
