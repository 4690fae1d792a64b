"""Offline, every page still has its tab icon: the icon ships with the app (dashboard/assets/icon.svg)
instead of a Material icon that the browser fetches from a font server, and nothing else a page loads
(the sidebar's icon font included) leaves the machine. Classrooms and a laptop on a train are offline."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import wait_settled

PAGES = ("/", "/explore")
ICON = "link[rel='shortcut icon']"
# True once the app's page config has replaced Streamlit's placeholder icon (./favicon.png).
ICON_SET_JS = f"() => !document.querySelector(\"{ICON}\").href.endsWith('/favicon.png')"
# Resolves to what became of the page's icon when loaded as an image: "loaded" or "failed".
ICON_LOADS_JS = """(href) => new Promise((done) => {
  const img = new Image();
  img.onload = () => done('loaded');
  img.onerror = () => done('failed');
  img.src = href;
})"""


def _off_machine(url: str) -> bool:
    return urlsplit(url).hostname not in (None, "127.0.0.1", "localhost")  # data: and blob: have none


@pytest.mark.parametrize("path", PAGES)
def test_the_tab_icon_ships_with_the_app(page, app_server, path):
    requests, errors = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda m: m.type == "error" and errors.append((m.text, m.location.get("url") or "")))
    page.goto(app_server.url + path)
    page.wait_for_function(ICON_SET_JS, timeout=BROWSER_DEADLINE_MS)
    wait_settled(page, 1)
    href = page.locator(ICON).get_attribute("href")
    assert not _off_machine(href), f"the tab icon is fetched from {urlsplit(href).hostname}"
    assert page.evaluate(ICON_LOADS_JS, href) == "loaded"
    away = sorted({urlsplit(url).hostname for url in requests if _off_machine(url)})
    assert not away, f"the page sent requests off the machine, to {away}"
    # offline, a fetched icon's failure is logged as "Failed to load resource" with the icon's address
    about_icon = [f"{text} ({url})" for text, url in errors if _off_machine(url) or url == href]
    assert not about_icon, about_icon
