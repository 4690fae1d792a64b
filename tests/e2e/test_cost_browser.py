"""The cost page in Chromium: every part draws with no script error, the variant maps are real
heatmaps beside each other, a sentence typed with markup never runs, and in presenter mode at
1920x1080 each part fits one screen with nothing cut. Screenshots: /tmp/shots/cost-*.png."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import send_text, wait_charts, wait_settled
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran
from tests.e2e.test_layout import CUT_TEXT_JS

pytestmark = pytest.mark.slow
SHOTS = Path("/tmp/shots")
# the part's last element ends above the fold: no scrolling on a projector (Streamlit pads the
# main section's bottom, so its scrollHeight is not the measure)
OVERFLOW_JS = """() => {
  const shown = [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stElementContainer']")]
    .filter((e) => e.checkVisibility() && e.getBoundingClientRect().height > 1);
  return Math.max(...shown.map((e) => e.getBoundingClientRect().bottom)) - innerHeight;
}"""


def test_every_part_draws(sized_page, app_server):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    page.goto(app_server.url + "/cost?variant=bigbird&layer=5&head=5")
    wait_charts(page, 7, BROWSER_DEADLINE_MS)  # the first visit measures the price
    # at least two heatmaps drawn: the two maps
    expect(page.locator(".js-plotly-plot .main-svg :is(g.hm, image)").nth(1)).to_be_attached()
    expect(page.get_by_text("How small can the window be?", exact=False)).to_have_count(1)
    assert not page.js_errors, page.js_errors
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=SHOTS / "cost-1280x800.png")


@pytest.mark.parametrize("group", list(SENTENCES))
def test_a_typed_payload_never_runs(sized_page, app_server, group):
    page = sized_page((1280, 800))
    page.goto(app_server.url + "/cost")
    wait_charts(page, 7, BROWSER_DEADLINE_MS)
    box = page.locator("[data-testid='stTextArea'] textarea >> nth=0")
    send_text(page, box, SENTENCES[group])
    wait_charts(page, 7)
    assert_nothing_ran(page)


@pytest.mark.parametrize("part", ["price", "head", "model"])
def test_presenter_parts_fit_one_screen(sized_page, app_server, part):
    page = sized_page((1920, 1080))
    page.goto(app_server.url + f"/cost?present=1&part={part}&variant=window&w=3")
    n_charts = {"price": 1, "head": 2, "model": 2}[part]
    wait_charts(page, n_charts, BROWSER_DEADLINE_MS)
    wait_settled(page, n_charts)  # every part laid out at its final size before it is measured
    page.screenshot(path=SHOTS / f"cost-present-{part}.png")
    assert page.evaluate(CUT_TEXT_JS) == []
    overflow = page.evaluate(OVERFLOW_JS)
    assert overflow <= 0, f"the part runs {overflow:.0f} px past 1920x1080"
    assert not page.js_errors, page.js_errors
