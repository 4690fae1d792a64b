"""Fixtures for the real-browser tests: one app server and one chromium for the whole session."""

from __future__ import annotations

import pytest

from tests.e2e.harness import StreamlitServer, browser, chromium_available

SCREENSHOTS = __import__("pathlib").Path(__file__).parent / "screenshots"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def app_server():
    with StreamlitServer() as server:
        yield server


@pytest.fixture(scope="session")
def chromium():
    if not chromium_available():
        pytest.fail(
            "no Chromium: `apt-get install chromium` or `.venv/bin/playwright install chromium` "
            "(`make test` does one of them)"
        )
    with browser() as b:
        yield b


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.js_errors = errors
    yield p
    context.close()


@pytest.fixture(scope="session")
def screenshot_dir():
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
