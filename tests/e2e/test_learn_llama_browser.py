"""The learn page's Llama stops in a real browser, on SmolLM2 itself (the shipped model, offline): the
RoPE stop at 1280x800 with its same-gap table and its curve, nothing cut; and in presenter mode at
1920x1080 the clicker walks RoPE (its point only) → grouped-query attention (its three patterns on
the screen) → step 3, each stop's heading brought to the top of the screen."""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import press, wait_scrolled_to, wait_settled, watch_scrolls
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

SENTENCE = "The trophy would not fit in the suitcase because it was too big"
URL = f"/learn?example=decoder&model=smollm2&text={quote(SENTENCE)}&layer=17&head=4"


def test_the_rope_stop_at_1280(sized_page, app_server, screenshot_dir):
    page = sized_page((1280, 800))
    page.goto(app_server.url + URL + "&step=rope")
    wait_all_drawn(page, 3)  # the gap curve, Q before and after RoPE
    heading = page.get_by_role("heading", name="RoPE: positions enter by turning Q and K")
    expect(heading).to_have_count(1)
    expect(
        page.get_by_text("One query and one key of this head, moved along the text together")
    ).to_be_visible()
    expect(page.get_by_text("the same number. In your text the model computed")).to_be_visible()
    heading.evaluate("(h) => h.scrollIntoView({block: 'start'})")
    wait_settled(page, 3)
    page.screenshot(path=screenshot_dir / "learn-llama-rope-1280x800.png")
    assert_clean(page)


def test_a_clicker_walks_the_llama_stops_on_a_projector(sized_page, app_server, screenshot_dir):
    page = sized_page((1920, 1080))
    page.goto(app_server.url + URL + "&step=rope&present=1")
    wait_all_drawn(page, 1)  # the gap curve: Q and K themselves stay on the page
    expect(page.get_by_text("are drawn below this on the page")).to_be_visible()
    watch_scrolls(page)
    groups = page.get_by_role("heading", name="Grouped-query attention")
    press(page, "PageDown", lambda: groups.wait_for(timeout=BROWSER_DEADLINE_MS))
    wait_all_drawn(page, 3)  # the three heads of head 5's group
    wait_scrolled_to(page, groups)
    wait_settled(page, 3)
    assert "step=gqa" in page.url and groups.bounding_box()["y"] >= 0
    expect(page.get_by_text("query heads 4–6 → key/value head 2")).to_be_visible()
    last = page.locator(".js-plotly-plot").last.bounding_box()
    assert last["y"] + last["height"] <= 1080, last  # the group's three patterns fit on the screen
    page.screenshot(path=screenshot_dir / "learn-llama-gqa-present-1920x1080.png")
    press(page, "PageDown", lambda: page.wait_for_url("**step=3**", timeout=BROWSER_DEADLINE_MS))
    page.get_by_role("heading", name="Step 3 ·").wait_for(timeout=BROWSER_DEADLINE_MS)
    assert_clean(page)
