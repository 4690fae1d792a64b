"""Each page opened by its own link (`/explore`, `/cost`, …, every url_path in dashboard/app.py) logs
no 404 in the console but Streamlit's two probes for where its server is: `/<page>/_stcore/health`
and `/<page>/_stcore/host-config`, which the frontend asks before the app's own path answers
(streamlit/streamlit#7074; docs/hosting.md, "Two 404s in the browser's console"). Any other 404 is a
resource the app lacks; if a Streamlit release stops the probes, the test says so."""

from __future__ import annotations

import re
import time

import pytest

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import ROOT

PROBES = ("_stcore/health", "_stcore/host-config")
PAGES = sorted(set(re.findall(r'url_path="([^"]+)"', (ROOT / "dashboard" / "app.py").read_text())))


def test_every_page_of_the_app_is_listed():
    assert {"learn", "explore", "compare", "atlas", "cost", "train", "deck"} <= set(PAGES)


@pytest.mark.parametrize("path", ["", *PAGES])
def test_a_page_opened_by_its_own_link_logs_no_other_404(page, app_server, path):
    missing: list[str] = []  # the resource of each "Failed to load resource: … 404" in the console
    page.on(
        "console",
        lambda m: (
            missing.append(m.location.get("url", "")) if m.type == "error" and " 404 " in m.text else None
        ),
    )
    with page.expect_response(
        lambda r: r.url == f"{app_server.url}/_stcore/host-config" and r.ok, timeout=BROWSER_DEADLINE_MS
    ):
        page.goto(f"{app_server.url}/{path}")  # connected once the app's own host-config answers
    page.locator("[data-testid='stMain']").wait_for(timeout=BROWSER_DEADLINE_MS)
    probes = [f"{app_server.url}/{path}/{probe}" for probe in PROBES] if path else []
    deadline = time.monotonic() + 5  # the console's messages can trail the responses a little
    while len(missing) < len(probes) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    other = [url for url in missing if url not in probes]
    assert not other, f"404s other than Streamlit's probes: {other}"
    assert sorted(missing) == sorted(probes), (
        "Streamlit no longer probes the page's own path: update docs/hosting.md and this test"
        if path and not missing
        else missing
    )
