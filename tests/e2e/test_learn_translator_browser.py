"""The learn page's translator mode in a real browser: the softmax stop of the shipped translator's
cross-attention at 1280x800 (a typed sentence taken, an unreadable one answered in one line while the
last one stays), and in presenter mode at 1920x1080, where the clicker's keys walk between the stops
and each stop's matrices are on screen without scrolling."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import press, send_text, wait_scrolled_to, wait_settled, watch_scrolls
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

URL = "/learn?model=translator"
SENTENCE_BOX = "English sentence (the grammar's words only)"


def _cell_texts(page, n_chart: int) -> list[str]:
    """The texts printed in the cells of the n-th chart on the page."""
    return page.evaluate(
        "(n) => [...document.querySelectorAll('.js-plotly-plot')[n].querySelectorAll('.heatmap-label text')]"
        ".map((t) => t.textContent)",
        n_chart,
    )


def _on_screen(page, height: int) -> None:
    for chart in page.locator(".js-plotly-plot").all():  # every matrix fully on screen
        box = chart.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= height, box


def test_the_softmax_stop_takes_a_typed_sentence_at_1280(sized_page, app_server, screenshot_dir):
    page = sized_page((1280, 800))
    page.goto(app_server.url + URL + "&step=5")
    wait_all_drawn(page, 2)
    expect(page.get_by_role("heading", name="Step 5 · Softmax over the English words")).to_have_count(1)
    assert "0" in _cell_texts(page, 1)  # the decoder's own self-attention: causal, exact zeros
    box = page.get_by_label(SENTENCE_BOX)
    send_text(page, box, "the white flowers do not follow the boys", key="Enter")
    wait_all_drawn(page, 2)
    expect(page.get_by_text("the  ·  white  ·  flowers", exact=False)).to_be_visible()
    box.fill("the zebra sees the dog")  # the link keeps the sentence shown: wait for the one line
    refused = page.get_by_text("does not know “zebra”", exact=False)
    press(page, "Enter", lambda: refused.wait_for(timeout=BROWSER_DEADLINE_MS), on=box)
    expect(page.get_by_text("the  ·  white  ·  flowers", exact=False)).to_be_visible()  # it stays
    page.get_by_role("heading", name="Step 5 ·").evaluate("(h) => h.scrollIntoView({block: 'start'})")
    wait_settled(page, 2)
    page.screenshot(path=screenshot_dir / "learn-translator-softmax-1280x800.png")
    assert_clean(page)


def test_the_clicker_walks_the_stops_on_a_projector(sized_page, app_server, screenshot_dir):
    page = sized_page((1920, 1080))
    page.goto(app_server.url + URL + "&step=4&present=1")
    wait_all_drawn(page, 2)
    watch_scrolls(page)
    heading = page.get_by_role("heading", name="Step 5 · Softmax over the English words")
    press(page, "PageDown", lambda: heading.wait_for(timeout=BROWSER_DEADLINE_MS))
    wait_all_drawn(page, 2)
    wait_scrolled_to(page, heading)
    wait_settled(page, 2)
    assert "step=5" in page.url and heading.bounding_box()["y"] >= 0
    _on_screen(page, 1080)
    page.screenshot(path=screenshot_dir / "learn-translator-softmax-present-1920x1080.png")
    press(page, "PageDown", lambda: page.wait_for_url("**step=6**", timeout=BROWSER_DEADLINE_MS))
    page.get_by_role("heading", name="Step 6 ·").wait_for(timeout=BROWSER_DEADLINE_MS)
    press(page, "PageUp", lambda: page.wait_for_url("**step=5**", timeout=BROWSER_DEADLINE_MS))
    page.get_by_role("heading", name="Step 5 ·").wait_for(timeout=BROWSER_DEADLINE_MS)
    page.goto(app_server.url + URL + "&step=check&present=1")
    wait_all_drawn(page, 1)
    wait_settled(page, 1)
    _on_screen(page, 1080)
    page.screenshot(path=screenshot_dir / "learn-translator-check-present-1920x1080.png")
    assert_clean(page)
