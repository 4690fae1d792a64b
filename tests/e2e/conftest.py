"""Fixtures for the real-browser tests: one app server, one chromium and one browser tab for the whole
session.

Opening a URL in a new browser context costs about 2.4 s, in a new page of an open context about 1.9 s,
and a `goto` on an open page about 0.9 s: so the tests share one tab (`page`, `sized_page`), reset
before each test, and every test still starts with its own `page.goto(...)`, a fresh Streamlit session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import StreamlitServer, browser, chromium_available

SCREENSHOTS = __import__("pathlib").Path(__file__).parent / "screenshots"
DEFAULT_SIZE = (1400, 1000)

# expect(...) waits for the element it asserts; a loaded machine (2 cores, a second test run beside
# this one) can take longer than Playwright's 5 s default to send it
expect.set_options(timeout=BROWSER_DEADLINE_MS)


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


class SharedTab:
    """The session's one browser tab, handed to each test as if new.

    `open(size)` resets it: any other page of its context closed (a link a test followed into a new
    tab), the app's local and session storage and the cookies cleared (what a new context would not
    have), the tab on about:blank (the previous test's Streamlit session closed, so none of its late
    errors lands in the next test's list), the viewport set, the mouse at the corner, `js_errors` (every
    `pageerror`) emptied and the event listeners the previous test added removed. A closed or crashed
    tab is replaced by a new one.

    `kept(key, size, setup)` is for tests that go on in one Streamlit session, one after the other (the
    injection tests that type payload after payload into one text box): the tab as the last test with
    the same key left it, or, when another test has used the tab since, a reset tab that `setup(page)`
    opens. Its `js_errors` then gathers over all those tests, as on a page of their own.
    """

    def __init__(self, chromium):
        self._chromium = chromium
        self._context = None
        self._page = None
        self._added: list[tuple[str, Callable]] = []
        self._kept: object = None

    def _new_tab(self):
        if self._context is not None:
            with contextlib.suppress(Exception):
                self._context.close()
        width, height = DEFAULT_SIZE
        self._context = self._chromium.new_context(viewport={"width": width, "height": height})
        page = self._context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.js_errors = errors
        # what a test adds with page.on / page.once is noted, to be removed before the next test
        page.on, page.once = self._noted(page.on), self._noted(page.once)
        self._page, self._added = page, []

    def _noted(self, add: Callable) -> Callable:
        def noted(event: str, f: Callable) -> None:
            self._added.append((event, f))
            add(event, f)

        return noted

    def open(self, size: tuple[int, int] = DEFAULT_SIZE):
        self._kept = None
        if self._page is None or self._page.is_closed():
            self._new_tab()
        try:
            return self._reset(size)
        except PlaywrightError:  # a crashed tab
            self._new_tab()
            return self._reset(size)

    def _reset(self, size: tuple[int, int]):
        page = self._page
        for other in self._context.pages:
            if other is not page:
                other.close()
        for event, f in self._added:
            page.remove_listener(event, f)  # a listener that already went (once) is skipped
        self._added.clear()
        if page.url.startswith("http"):
            with contextlib.suppress(Exception):  # a page that never loaded has no storage to clear
                page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        self._context.clear_cookies()
        page.goto("about:blank")
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.mouse.move(0, 0)
        page.js_errors.clear()
        return page

    def kept(self, key: object, size: tuple[int, int], setup: Callable) -> object:
        if self._kept != key or self._page is None or self._page.is_closed():
            page = self.open(size)
            setup(page)
            self._kept = key
        return self._page

    def close(self) -> None:
        if self._context is not None:
            self._context.close()


@pytest.fixture(scope="session")
def shared_tab(chromium):
    tab = SharedTab(chromium)
    yield tab
    tab.close()


@pytest.fixture
def sized_page(shared_tab):
    """`sized_page((width, height))`: the shared tab, reset, at that viewport size."""
    return shared_tab.open


@pytest.fixture
def page(shared_tab):
    """The shared tab, reset, at 1400x1000; `page.js_errors` lists the page's JavaScript errors."""
    return shared_tab.open(DEFAULT_SIZE)


@pytest.fixture(scope="session")
def screenshot_dir():
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
