"""The explore page on the shipped translator in Chromium: each view (head, lines, model, step by
step) draws with no script error at 1280x800, and in presenter mode at 1920x1080 fits one screen with
its charts in view; a clicker walks the translation step by step; a click on a thumbnail of the model
view opens that head; a typed payload never runs. Screenshots: /tmp/shots/translator-*.png."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, press, send_text, wait_charts, wait_settled
from tests.e2e.test_cost_browser import OVERFLOW_JS
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran
from tests.e2e.test_pages_browser import assert_clean

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
CHARTS = {"head": 2, "lines": 1, "model": 1, "generate": 2}  # head: the matrix beside every head's share


def _url(app_server, view: str, **params) -> str:
    return f"{app_server.url}/explore?" + urlencode({"model": "translator", "view": view, **params})


@pytest.mark.parametrize("view", list(CHARTS))
def test_each_view_draws_at_1280_and_fits_a_projector(sized_page, app_server, view):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    page.goto(_url(app_server, view))
    wait_charts(page, CHARTS[view], BROWSER_DEADLINE_MS)
    wait_settled(page, CHARTS[view])
    assert_clean(page)
    page.screenshot(path=SHOTS / f"translator-{view}-1280x800.png")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(_url(app_server, view, present="1"))
    wait_charts(page, CHARTS[view], BROWSER_DEADLINE_MS)
    wait_settled(page, CHARTS[view])
    assert page.evaluate(OVERFLOW_JS) <= 0, "the view runs past the bottom of a 1080-pixel screen"
    for chart in page.locator(".js-plotly-plot").all():
        expect(chart).to_be_in_viewport(ratio=0.95)
    assert_clean(page)
    page.screenshot(path=SHOTS / f"translator-{view}-1920x1080.png")


def test_a_clicker_walks_the_translation(sized_page, app_server):
    page = sized_page((1920, 1080))
    page.goto(_url(app_server, "generate", present="1"))
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    expect(page.get_by_text("it writes le", exact=False)).to_have_count(1)
    for key, step in (("ArrowRight", 2), ("PageDown", 3), ("PageUp", 2)):
        stepped = partial(  # step 1 is the default: the link drops it
            page.wait_for_function,
            "(s) => (new URLSearchParams(location.search).get('step') || '1') === s",
            arg=str(step),
            timeout=BROWSER_DEADLINE_MS,
        )
        press(page, key, stepped)
        expect(page.get_by_text(f"Step {step} of 13.")).to_have_count(1)
    expect(page.get_by_text("Written so far: le → it writes chat")).to_have_count(1)
    assert_clean(page)


def test_a_thumbnail_click_opens_that_head(sized_page, app_server):
    page = sized_page((1280, 800))
    page.goto(_url(app_server, "model", layer="0", head="0"))
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    wait_settled(page, 1)
    point = page.locator(".js-plotly-plot .scatterlayer .point").nth(5)  # layer 2, head 2
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    opened = partial(
        page.wait_for_function,
        "() => { const q = new URLSearchParams(location.search);"
        " return q.get('view') === 'head' && q.get('layer') === '1' && q.get('head') === '1'; }",
        timeout=BROWSER_DEADLINE_MS,
    )
    click(page, (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2), opened)
    expect(page.get_by_text("Layer 2, head 2: from each French word")).to_have_count(1)


@pytest.mark.parametrize("group", list(SENTENCES))
def test_a_typed_payload_never_runs(sized_page, app_server, group):
    page = sized_page((1280, 800))
    page.goto(_url(app_server, "head"))
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    box = page.locator("[data-testid='stTextInput'] input")
    send_text(page, box, SENTENCES[group], key="Enter")
    expect(page.get_by_text("The translator cannot read this")).to_have_count(1)
    assert_nothing_ran(page)
