"""Compare's "which heads carry the difference" in a real browser, in presenter mode at 1920x1080 as a
room sees it: the heads grid and what it says in the charts' place, the positions grid drawn on
request, a top head's button bringing its attention maps back; the table of the top heads whole on a
laptop's 1280x800 screen; and a payload pair of the same length, patched, shown as text (its words
reach the captions, the table and the grids' labels)."""

from __future__ import annotations

import re
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, wait_charts, wait_settled
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran

pytestmark = pytest.mark.slow

CHART_TITLES_JS = (
    """() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map((t) => t.textContent)"""
)
HEADS = "Share of the difference each head restores"
POSITIONS = "Share each hidden state restores (causal tracing)"


def wait_titles(page, wanted: str) -> None:
    """Wait until the script has finished and a chart titled `wanted` is drawn."""
    page.wait_for_function(
        """(wanted) => {
          const app = document.querySelector("[data-testid='stApp']");
          if (app.getAttribute("data-test-script-state") !== "notRunning") return false;
          const titles = [...document.querySelectorAll('.js-plotly-plot .gtitle')].map((t) => t.textContent);
          return titles.includes(wanted);
        }""",
        arg=wanted,
        timeout=BROWSER_DEADLINE_MS,
        polling="raf",
    )


def test_a_room_sees_the_grid_traces_it_and_opens_a_head(sized_page, app_server, screenshot_dir):
    page = sized_page((1920, 1080))
    page.goto(f"{app_server.url}/compare?present=1&show=patch")
    wait_titles(page, HEADS)
    wait_settled(page, 1)
    shown = page.evaluate(CHART_TITLES_JS)
    assert shown[0] == HEADS and not [t for t in shown if " · layer " in t]  # in the maps' place
    expect(
        page.get_by_text("The answer does not flip").or_(page.get_by_text("The answer flips"))
    ).to_have_count(1)
    grid = page.locator(".js-plotly-plot").first.bounding_box()
    assert grid["y"] + grid["height"] <= 1080, "the heads grid runs past the screen"
    page.screenshot(path=screenshot_dir / "compare-patching-present.png")
    button = page.get_by_role("button", name="Trace every layer and position")
    click(page, button, lambda: wait_titles(page, POSITIONS))
    assert "Where the difference travels: embeddings" in page.locator("[data-testid='stMain']").inner_text()
    opener = page.locator("[class*='st-key-compare_patch_open_'] button").first
    layer, head = re.search(r"Layer (\d+), head (\d+)", opener.inner_text()).groups()  # past the icon's name
    where = f"layer {layer}, head {head}"
    click(page, opener, lambda: wait_titles(page, f"Sentence 1 · {where}"))  # the head's maps are back
    wait_charts(page, 2)
    assert f"Sentence 2 · {where}" in page.evaluate(CHART_TITLES_JS)
    assert not page.js_errors


TABLE_FIT_JS = """() => {
  const table = [...document.querySelectorAll("[data-testid='stDataFrame']")].pop();
  const box = table.getBoundingClientRect(), column = table.closest("[data-testid='stColumn']");
  const scroller = table.querySelector(".dvn-scroller");
  return {right: box.right, column: column.getBoundingClientRect().right, viewport: window.innerWidth,
          content: scroller.scrollWidth, shown: scroller.clientWidth};
}"""


@pytest.mark.parametrize("query", ["", "?model=letters&preset=repeat"])
def test_the_table_of_top_heads_fits_a_laptop_screen(sized_page, app_server, query):
    """At 1280x800, a laptop's screen, every column of "The heads that restore most" is in view: the
    table ends inside its column and the screen, and its grid needs no sideways scrolling."""
    page = sized_page((1280, 800))
    page.goto(f"{app_server.url}/compare{query}")
    wait_titles(page, HEADS)
    table = page.locator("[data-testid='stDataFrame']").last
    table.scroll_into_view_if_needed()
    wait_settled(page, 1)
    fit = page.evaluate(TABLE_FIT_JS)
    assert fit["right"] <= fit["column"] + 1 and fit["right"] <= fit["viewport"], fit
    assert fit["content"] <= fit["shown"] + 1, f"columns cut on the right: {fit}"
    assert not page.js_errors


@pytest.mark.parametrize("group", list(SENTENCES))
def test_a_patched_payload_pair_is_shown_as_text(page, app_server, group):
    payload = SENTENCES[group]
    query = urllib.parse.urlencode({"text": payload + " it was big", "text2": payload + " it was small"})
    page.goto(f"{app_server.url}/compare?{query}")
    wait_titles(page, HEADS)
    assert_nothing_ran(page)
    expect(page.get_by_text("differ at token", exact=False)).to_have_count(1)
