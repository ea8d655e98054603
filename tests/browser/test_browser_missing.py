"""Without Chromium the browser tests fail with one line saying what to install, never skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chromium import BrowserMissing, find_binaries


def test_a_machine_without_chromium_is_told_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(BrowserMissing) as caught:
        find_binaries(str(tmp_path))
    message = str(caught.value)
    assert "\n" not in message
    assert "chromium and chromedriver not found" in message
    assert "apt-get install chromium chromium-driver" in message


def test_a_driver_without_its_browser_is_named_alone(tmp_path: Path) -> None:
    driver = tmp_path / "chromedriver"
    driver.write_text("#!/bin/sh\n")
    driver.chmod(0o755)
    with pytest.raises(BrowserMissing, match=r"^chromium not found on PATH"):
        find_binaries(str(tmp_path))
