"""The learn page's decoder mode in a real browser: the causal-mask stop of a tiny GPT-2 (saved here
as a local folder; the Hub is out of reach) at 1280x800 and in presenter mode at 1920x1080. The
masked cells read "−∞" and the softmax's cells above the diagonal "0"; on the projector the three
matrices are on screen without scrolling, and the clicker's keys walk in and out of the stop."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import press, wait_scrolled_to, wait_settled, watch_scrolls
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn
from tests.tiny_gpt2 import make_tiny_gpt2

SENTENCE = "The trophy would not fit in the suitcase"


@pytest.fixture(scope="module")
def decoder_url(tmp_path_factory):
    folder = make_tiny_gpt2(tmp_path_factory.mktemp("gpt2"), n_layer=2, n_head=4, n_embd=32)
    return f"/learn?example=decoder&model={quote(str(folder), safe='')}&text={quote(SENTENCE)}"


def _cell_texts(page, n_chart: int) -> list[str]:
    """The texts printed in the cells of the n-th chart on the page."""
    return page.evaluate(
        "(n) => [...document.querySelectorAll('.js-plotly-plot')[n].querySelectorAll('.heatmap-label text')]"
        ".map((t) => t.textContent)",
        n_chart,
    )


def _mask_heading(page):
    return page.get_by_role("heading", name="Causal mask")


def test_the_causal_mask_stop_at_1280(sized_page, app_server, decoder_url, screenshot_dir):
    page = sized_page((1280, 800))
    page.goto(app_server.url + decoder_url + "&step=mask")
    wait_all_drawn(page, 3)
    heading = _mask_heading(page)
    expect(heading).to_have_count(1)
    expect(page.get_by_text("S' masked: −∞ above the diagonal")).to_be_visible()
    assert "−∞" in _cell_texts(page, 1) and "0" in _cell_texts(page, 2)
    assert not any(t.startswith("-1e") or "inf" in t for t in _cell_texts(page, 1))  # never a number
    heading.evaluate("(h) => h.scrollIntoView({block: 'start'})")  # the stop at the top, for the picture
    wait_settled(page, 3)
    page.screenshot(path=screenshot_dir / "learn-decoder-mask-1280x800.png")
    assert_clean(page)


def test_the_causal_mask_stop_on_a_projector(sized_page, app_server, decoder_url, screenshot_dir):
    page = sized_page((1920, 1080))
    page.goto(app_server.url + decoder_url + "&step=4&present=1")
    wait_all_drawn(page, 1)
    watch_scrolls(page)
    heading = _mask_heading(page)
    # the clicker: from step 4 to the causal mask, pressed once the page listens for it
    press(page, "PageDown", lambda: heading.wait_for(timeout=BROWSER_DEADLINE_MS))
    wait_all_drawn(page, 3)
    wait_scrolled_to(page, heading)
    wait_settled(page, 3)
    assert "step=mask" in page.url
    assert heading.bounding_box()["y"] >= 0
    for chart in page.locator(".js-plotly-plot").all():  # every matrix fully on screen
        box = chart.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 1080, box
    assert "−∞" in _cell_texts(page, 1) and "0" in _cell_texts(page, 2)
    page.screenshot(path=screenshot_dir / "learn-decoder-mask-present-1920x1080.png")
    # the heading is drawn during the run, the link changes with it: wait for the link, then the heading
    press(page, "ArrowRight", lambda: page.wait_for_url("**step=5**", timeout=BROWSER_DEADLINE_MS))
    page.get_by_role("heading", name="Step 5 ·").wait_for(timeout=BROWSER_DEADLINE_MS)
    assert_clean(page)
