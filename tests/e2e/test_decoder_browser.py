"""The explore page's decoder views in Chromium on a GPT-2 the test builds: each view draws with no
script error at 1280x800, and in presenter mode at 1920x1080 it fits one screen with its charts in
view; in the generate view a clicker's → / PageDown and ← / PageUp walk the steps; a typed payload
never runs. Screenshots: /tmp/shots/decoder-*.png."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import press, send_text, wait_charts, wait_settled
from tests.e2e.test_cost_browser import OVERFLOW_JS
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran
from tests.e2e.test_pages_browser import assert_clean
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
TEXT = "The trophy would not fit in the suitcase because it was too large."
CHARTS = {"nextword": 1, "generate": 2, "lens": 1, "sinks": 1, "induction": 2}
OPTIONS = {"generate": {"tokens": "8", "step": "3"}, "induction": {"length": "24"}}


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(
        tmp_path_factory.mktemp("browser_gpt2"), n_layer=3, n_head=4, n_embd=32, n_positions=128
    )


def _url(app_server, gpt2_dir, view: str, **params) -> str:
    query = {"model": str(gpt2_dir), "text": TEXT, "view": view, **OPTIONS.get(view, {}), **params}
    return f"{app_server.url}/explore?" + urlencode(query)


@pytest.mark.parametrize("view", list(CHARTS))
def test_each_view_draws_at_1280(sized_page, app_server, gpt2_dir, view):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    page.goto(_url(app_server, gpt2_dir, view))
    wait_charts(page, CHARTS[view], BROWSER_DEADLINE_MS)
    wait_settled(page, CHARTS[view])
    assert_clean(page)
    page.screenshot(path=SHOTS / f"decoder-{view}-1280x800.png")


@pytest.mark.parametrize("view", list(CHARTS))
def test_each_view_fits_a_projector(sized_page, app_server, gpt2_dir, view):
    page = sized_page((1920, 1080))
    page.goto(_url(app_server, gpt2_dir, view, present="1"))
    wait_charts(page, CHARTS[view], BROWSER_DEADLINE_MS)
    wait_settled(page, CHARTS[view])
    assert page.evaluate(OVERFLOW_JS) <= 0, "the view runs past the bottom of a 1080-pixel screen"
    for chart in page.locator(".js-plotly-plot").all():
        expect(chart).to_be_in_viewport(ratio=0.95)
    assert_clean(page)
    page.screenshot(path=SHOTS / f"decoder-{view}-1920x1080.png")


def test_a_clicker_walks_the_generation(sized_page, app_server, gpt2_dir):
    page = sized_page((1920, 1080))
    page.goto(_url(app_server, gpt2_dir, "generate", present="1", step="1"))
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    for key, step in (("ArrowRight", 2), ("PageDown", 3), ("ArrowLeft", 2), ("PageUp", 1)):
        stepped = partial(  # step 1 is the default: the link drops it
            page.wait_for_function,
            "(s) => (new URLSearchParams(location.search).get('step') || '1') === s",
            arg=str(step),
            timeout=BROWSER_DEADLINE_MS,
        )
        press(page, key, stepped)  # once the page listens: a key pressed during a rerun may be lost
        expect(page.get_by_text(f"Step {step} of 8:")).to_have_count(1)
    assert_clean(page)


@pytest.mark.parametrize("group", list(SENTENCES))
def test_a_typed_payload_never_runs(sized_page, app_server, gpt2_dir, group):
    page = sized_page((1280, 800))
    page.goto(_url(app_server, gpt2_dir, "generate"))
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    box = page.locator("[data-testid='stTextArea'] textarea >> nth=0")
    send_text(page, box, SENTENCES[group])
    wait_charts(page, 2)
    assert_nothing_ran(page)
