"""A headless Chromium for the report's browser tests and benchmark: Debian's `chromium` and
`chromium-driver`, driven by selenium, with a fresh profile and nothing that reaches the network
(the machines that run these have none, and a report must not need it).

selenium is a test dependency (the `test` extra), imported only when a browser is started.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Where Debian installs them (apt-get install chromium chromium-driver).
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = ("chromedriver",)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000")


def missing() -> str | None:
    """Why no browser can be started here (None: one can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if _which(CHROMIUM) is None or _which(DRIVER) is None:
        return "chromium and chromedriver are not installed (apt-get install chromium " \
               "chromium-driver; .ci/run installs them)"
    return None


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """A selenium WebDriver of a headless Chromium that records the page's console, quit and
    its profile removed at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    reason = missing()
    if reason:
        raise RuntimeError(reason)
    with tempfile.TemporaryDirectory(prefix="clmgit-chromium-") as profile:
        options = Options()
        options.binary_location = str(_which(CHROMIUM))
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # An explicit driver path: selenium would otherwise try to download one.
        driver = webdriver.Chrome(service=Service(str(_which(DRIVER))), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def _which(names: tuple[str, ...]) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)
