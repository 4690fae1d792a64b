"""The cost page's part 4 on a decoder, in Chromium: a tiny random GPT-2 with GPT-2's 1,024 positions
(the test builds it; narrow, so the sweep up to n = 1,023 takes a moment) draws one more token's
curves and the KV cache's size at 1280x800, and in presenter mode at 1920x1080 the part fits one
screen, nothing cut, the chart in view. Screenshots: /tmp/shots/cost-next-*.png."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, wait_charts, wait_settled
from tests.e2e.test_cost_browser import OVERFLOW_JS
from tests.e2e.test_layout import CUT_TEXT_JS
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.slow
SHOTS = Path("/tmp/shots")
MEASURE = re.compile(r"^Measure n = 16 … 1023")
# the chart's box, and how far the page reaches past the window's right edge
CHART_JS = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter((p) => p._fullLayout
    && p._fullData.some((t) => (t.name || '').startsWith('with the KV cache')));
  if (plots.length !== 1) return null;
  const box = plots[0].getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, left: box.left, right: box.right,
          wider: document.documentElement.scrollWidth - innerWidth};
}"""


@pytest.fixture(scope="module")
def decoder_dir(tmp_path_factory):
    # width 16 and 2 heads, as the AppTests' tiny models (the price curves of that shape are small)
    return make_tiny_gpt2(
        tmp_path_factory.mktemp("browser_cost_gpt2"), n_layer=2, n_head=2, n_embd=16, n_positions=1024
    )


def open_part(page, url: str, n_charts: int) -> None:
    """Open the page; if the sweep is long for this machine, press its button (measured once per
    server), and wait until the charts are drawn and still."""
    page.goto(url)
    button = page.get_by_role("button", name=MEASURE)
    chart = page.locator(".js-plotly-plot").nth(n_charts - 1)
    expect(button.or_(chart)).to_be_visible(timeout=BROWSER_DEADLINE_MS)
    drawn = partial(wait_charts, page, n_charts, BROWSER_DEADLINE_MS)
    if button.is_visible():
        click(page, button, drawn)
    else:
        drawn()
    wait_settled(page, n_charts)


def test_one_more_token_draws(sized_page, app_server, decoder_dir):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    open_part(page, f"{app_server.url}/cost?" + urlencode({"model": str(decoder_dir), "n": "512"}), 2)
    expect(page.get_by_role("heading", name=re.compile("Generating one more token"))).to_have_count(1)
    expect(page.get_by_text("KV cache at n = 512")).to_be_visible()
    expect(page.get_by_text("the efficient variants, run inside the NumPy BERT engine")).to_have_count(1)
    found = page.evaluate(CHART_JS)
    assert found is not None and found["wider"] <= 0, found
    assert not page.js_errors, page.js_errors
    assert page.locator("[data-testid='stException']").count() == 0
    page.locator(".js-plotly-plot").nth(1).scroll_into_view_if_needed()
    wait_settled(page, 2)
    page.screenshot(path=SHOTS / "cost-next-1280x800.png")


def test_presenter_part_fits_one_screen(sized_page, app_server, decoder_dir):
    page = sized_page((1920, 1080))
    params = {"model": str(decoder_dir), "present": "1", "part": "next", "n": "1024"}
    open_part(page, f"{app_server.url}/cost?" + urlencode(params), 1)
    page.screenshot(path=SHOTS / "cost-next-present-1920x1080.png")
    assert page.evaluate(CUT_TEXT_JS) == []
    overflow = page.evaluate(OVERFLOW_JS)
    assert overflow <= 0, f"the part runs {overflow:.0f} px past 1920x1080"
    found = page.evaluate(CHART_JS)
    assert found is not None, "the chart is drawn"
    assert found["wider"] <= 0 and found["right"] <= 1920, found  # no horizontal scrolling
    assert found["top"] >= 0 and found["bottom"] <= 1080, found  # the whole chart in view
    expect(page.get_by_text("KV cache at n = 1,024")).to_be_visible()
    assert not page.js_errors, page.js_errors
