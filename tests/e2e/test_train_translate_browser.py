"""The train page's translator task in Chromium, on the recorded run that ships (models/translator):
at 1280x800 its curves and every head's cross-attention map are drawn and the task picker switches
to the letter task; in presenter mode at 1920x1080 the whole view (curves, maps, findings) fits the
screen without scrolling either way, and a clicker's key steps back a snapshot. Screenshots:
/tmp/shots/train-translate-*.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.translate.engine import TRANSLATOR_DIR
from core.translate.record import load_record
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, press, wait_charts, wait_settled
from tests.e2e.test_cost_browser import OVERFLOW_JS
from tests.e2e.test_pages_browser import assert_clean

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
WIDER_JS = "() => document.documentElement.scrollWidth - innerWidth"
# the traces of the translator's curves, and the heat maps drawn in the cross-attention grid
DRAWN_JS = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter((p) => p._fullLayout);
  const curves = plots.find((p) => p._fullData.some((t) => t.name === 'exact match'));
  const maps = plots.find((p) => p._fullData.filter((t) => t.type === 'heatmap').length > 1);
  return {curves: curves ? curves._fullData.length : 0,
          maps: maps ? maps.querySelectorAll('.main-svg :is(g.hm, image)').length : 0};
}"""


@pytest.fixture(scope="module")
def recorded():
    record = load_record(TRANSLATOR_DIR)
    if record is None:
        pytest.skip("this copy holds no recorded translator")
    return record


def test_the_recorded_translator_draws_and_the_picker_switches_task(sized_page, app_server, recorded):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    page.goto(f"{app_server.url}/train?task=translate")
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    wait_settled(page, 2)
    expect(page.get_by_role("heading", name="Watch heads align")).to_have_count(1)
    layers, heads = recorded.alignment.shape[1:]
    drawn = page.evaluate(DRAWN_JS)
    assert drawn["curves"] >= 2 + layers * heads, drawn  # the loss, the exact match, every head
    assert drawn["maps"] >= layers * heads, drawn
    expect(page.get_by_text("What happened, measured at step", exact=False)).to_have_count(1)
    assert_clean(page)
    page.screenshot(path=SHOTS / "train-translate-1280x800.png", full_page=True)
    click(
        page,
        page.get_by_text("Induction (letter GPT-2)"),
        lambda: expect(page.get_by_role("heading", name="Watch heads form")).to_have_count(
            1, timeout=BROWSER_DEADLINE_MS
        ),
    )
    # the default task leaves the link
    page.wait_for_url(lambda url: "task=" not in url, timeout=BROWSER_DEADLINE_MS)
    assert_clean(page)


def test_the_translator_fits_a_projector(sized_page, app_server, recorded):
    page = sized_page((1920, 1080))
    last, before = int(recorded.steps[-1]), int(recorded.steps[-2])
    page.goto(f"{app_server.url}/train?task=translate&present=1")
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    wait_settled(page, 2)
    expect(page.get_by_text(f"cross-attention on the probe at step {last}")).to_have_count(1)
    overflow, wider = page.evaluate(OVERFLOW_JS), page.evaluate(WIDER_JS)
    page.screenshot(path=SHOTS / "train-translate-presenter-1920x1080.png")
    for chart in page.locator(".js-plotly-plot").all()[:2]:
        expect(chart).to_be_in_viewport(ratio=0.95)
    assert overflow <= 0, f"the translator's view runs {overflow:.0f} px past 1920x1080"
    assert wider <= 0, f"the translator's view is {wider:.0f} px wider than 1920"
    press(page, "ArrowLeft", lambda: page.wait_for_url(f"**step={before}**", timeout=BROWSER_DEADLINE_MS))
    expect(page.get_by_text(f"cross-attention on the probe at step {before}")).to_have_count(1)
    expect(page.get_by_text(f"What happened, measured at step {before}")).to_have_count(1)
    assert_clean(page)
