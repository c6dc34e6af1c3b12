"""Browser tests: Playwright for Python driving Debian's Chromium, headless, 1280x800.

Screenshots go to test-artifacts/screenshots/ (kept by CI as the tests' artifacts). Without
/usr/bin/chromium (a machine where `make browser` could not install it), the tests skip and
say so.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: run `make browser` as root to install it")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread, and Django then takes
    # every ORM call of the test for one made from async code. The test is synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request) -> Iterator[object]:
    """A fresh browser page; a screenshot of it is saved under the test's name at the end."""
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    yield tab
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.replace("/", "_")[:120]
    try:
        tab.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    finally:
        context.close()


def screenshot(tab: Page, name: str) -> Path:
    """Save a named screenshot now (for pages a test visits on its way)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    return path


def sign_in(tab: Page, live_server_url: str, username: str, password: str) -> None:
    tab.goto(f"{live_server_url}/admin/login/?next=/")
    tab.fill("#id_username", username)
    tab.fill("#id_password", password)
    tab.click("input[type=submit]")
