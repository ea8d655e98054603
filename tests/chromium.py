"""Debian's Chromium, driven through its own chromedriver, for the browser tests and benchmark.

Nothing here downloads a browser: the binaries are found on ``PATH`` (``.ci/run``
installs ``chromium`` and ``chromium-driver``) and handed to Selenium explicitly,
so Selenium Manager is never asked. A missing browser is :class:`BrowserMissing`
with one line saying what to install; the tests turn it into a failure, never a
skip, so CI cannot pass without having looked at the site.

What a page is checked for lives here too, so the tests and the benchmark share
it: the console errors it logged (:meth:`Chromium.console_errors`), what axe-core
(vendored in ``tests/data/axe``) finds serious or critical (:meth:`Chromium.axe`),
whether it scrolls sideways (:meth:`Chromium.overflows`), and the dialogs a
script opened (:meth:`Chromium.dialogs`, recorded by a hook installed before any
of the page's own scripts run).
"""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

AXE = Path(__file__).parent / "data" / "axe" / "axe.min.js"
DESKTOP = (1280, 800)
PHONE = (390, 844)
INSTALL_HINT = "install them with: apt-get install chromium chromium-driver"

# Runs in every document before its own scripts: remember, instead of showing,
# any dialog a script opens, so a test can ask whether hostile text ran.
_DIALOG_HOOK = """
window.__dialogs = [];
for (const name of ["alert", "confirm", "prompt"]) {
  window[name] = (message) => { window.__dialogs.push(name + ":" + String(message)); };
}
"""


class BrowserMissing(RuntimeError):
    """Chromium or its driver is not installed; the message says what to install."""


@dataclass(frozen=True)
class Binaries:
    chromium: str
    chromedriver: str


def find_binaries(search_path: str | None = None) -> Binaries:
    """The system Chromium and chromedriver on ``search_path`` (default ``$PATH``)."""
    chromium = shutil.which("chromium", path=search_path) or shutil.which(
        "chromium-browser", path=search_path
    )
    driver = shutil.which("chromedriver", path=search_path)
    missing = [
        name for name, found in (("chromium", chromium), ("chromedriver", driver)) if not found
    ]
    if chromium is None or driver is None:
        raise BrowserMissing(f"{' and '.join(missing)} not found on PATH: {INSTALL_HINT}")
    return Binaries(chromium, driver)


@dataclass(frozen=True)
class Violation:
    """One axe-core rule a page breaks, at ``impact`` (minor … critical)."""

    rule: str
    impact: str
    help: str
    targets: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.impact} {self.rule}: {self.help} at {', '.join(self.targets[:3])}"


class Chromium:
    """One headless Chromium session with the checks every page of the site must pass."""

    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver
        self._axe_source = AXE.read_text("utf-8")

    def open(self, url: str) -> None:
        """Load ``url`` and wait for it (WebDriver returns once the document has loaded)."""
        self.driver.get(url)

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        """Emulate a ``width``×``height`` CSS-pixel viewport (a phone's with ``mobile``)."""
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    def color_scheme(self, scheme: str) -> None:
        """Emulate ``prefers-color-scheme: scheme`` (``light`` or ``dark``)."""
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )

    def run(self, script: str, *args: Any) -> Any:
        """``execute_script``: the value the script returns."""
        return self.driver.execute_script(script, *args)

    def console_errors(self) -> list[str]:
        """The console errors logged since the last call (uncaught exceptions, failed loads)."""
        entries = self.driver.get_log("browser")
        return [str(e["message"]) for e in entries if e.get("level") == "SEVERE"]

    def dialogs(self) -> list[str]:
        """The dialogs (``alert``, ``confirm``, ``prompt``) the current page's scripts opened."""
        return list(self.run("return window.__dialogs || [];"))

    def axe(self, *, impacts: tuple[str, ...] = ("serious", "critical")) -> list[Violation]:
        """What axe-core finds on the current page at one of ``impacts``."""
        self.run(self._axe_source)
        found = self.driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            axe.run(document, {resultTypes: ["violations"]}).then(
              (r) => done(r.violations.map((v) => ({
                rule: v.id, impact: v.impact || "", help: v.help,
                targets: v.nodes.map((n) => n.target.join(" ")),
              }))),
              (e) => done([{rule: "axe-error", impact: "critical", help: String(e), targets: []}]),
            );
            """
        )
        return [
            Violation(v["rule"], v["impact"], v["help"], tuple(v["targets"]))
            for v in found
            if v["impact"] in impacts
        ]

    def overflows(self, width: int) -> int:
        """How many CSS pixels the page is wider than ``width`` (0 when it fits).

        Compared with the emulated width, not ``innerWidth``: a phone zooms out
        to show a page that is too wide, which stretches ``innerWidth`` with it.
        """
        return max(
            0,
            int(
                self.run(
                    "return Math.max(document.documentElement.scrollWidth,"
                    " document.body ? document.body.scrollWidth : 0);"
                )
            )
            - width,
        )

    def screenshot(self, path: Path, *, max_height: int = 3000) -> None:
        """A PNG of the page at the current viewport width, down to ``max_height`` CSS pixels.

        Beyond the viewport (a person sees more than one screen of it), but
        capped: a year's day page on a phone is many metres long.
        """
        width, height = self.run(
            "return [window.innerWidth, document.documentElement.scrollHeight];"
        )
        clip = {"x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1}
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": clip},
        )
        path.write_bytes(base64.b64decode(shot["data"]))


@contextmanager
def chromium(binaries: Binaries | None = None) -> Iterator[Chromium]:
    """A headless Chromium at desktop size, closed on exit.

    Raises :class:`BrowserMissing` when the browser or its driver is absent or
    will not start.
    """
    found = binaries or find_binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = found.chromium
    for arg in (
        "--headless=new",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ):
        options.add_argument(arg)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium refuses to sandbox as root (CI)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.set_capability("unhandledPromptBehavior", "ignore")
    try:
        driver = webdriver.Chrome(
            options=options, service=Service(executable_path=found.chromedriver)
        )
    except WebDriverException as exc:
        first = (exc.msg or str(exc)).strip().splitlines()[0]
        raise BrowserMissing(f"Chromium would not start ({first}): {INSTALL_HINT}") from exc
    try:
        driver.set_script_timeout(60)
        driver.set_page_load_timeout(60)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _DIALOG_HOOK})
        browser = Chromium(driver)
        browser.viewport(*DESKTOP)
        yield browser
    finally:
        driver.quit()
