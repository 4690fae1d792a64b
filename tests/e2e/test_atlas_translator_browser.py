"""The translator's atlas in a real browser (issue 38 §3, `/atlas?model=translator`) at 1280x800 and in
presenter mode at 1920x1080: the grid prints every head's role and score in its three kinds, no text
is cut or overlapped (the panels' titles against their head numbers), on a projector the whole grid
is in view without scrolling, and a click on a cross-attention cell gives the link that opens that
head on explore, which opens it. What AppTest cannot do: draw the page, click a Plotly cell.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.translate.atlas import KINDS
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import StreamlitServer, click, wait_charts, wait_settled
from tests.e2e.test_layout import CUT_CHART_TEXT_JS, CUT_TEXT_JS

pytestmark = pytest.mark.slow
N_LAYERS, N_HEADS, ACROSS = 2, 4, 3  # each panel's cells, and the click targets across a cell
GRID_OVERFLOW_JS = """() => {
  const chart = document.querySelector(".js-plotly-plot");
  return chart.getBoundingClientRect().bottom - innerHeight;
}"""
# the panels' titles (annotations) that meet a head number or another title: [title, what it meets]
TITLES_MEET_JS = """() => {
  const boxes = (selector) => [...document.querySelectorAll(selector)].map(
    (t) => [t.textContent.trim(), t.getBoundingClientRect()]).filter(([s, r]) => s && r.width >= 1);
  const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1
    && b.top < a.bottom - 1;
  const titles = boxes(".js-plotly-plot .annotation-text");
  const others = [...titles, ...boxes(".js-plotly-plot .xtick text, .js-plotly-plot .gtitle")];
  return titles.flatMap(([s, a]) => others.filter(([u, b]) => u !== s && meet(a, b)).map(([u]) => [s, u]));
}"""


@pytest.fixture(scope="module")
def server():
    with StreamlitServer() as running:
        yield running


def open_atlas(page, server, query: str = "") -> None:
    page.goto(f"{server.url}/atlas?model=translator{query}")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    wait_settled(page, 1)


@pytest.mark.parametrize(
    ("size", "present"), [((1280, 800), False), ((1920, 1080), True)], ids=["1280x800", "presenter-1920x1080"]
)
def test_the_grid_names_every_heads_role_and_nothing_is_cut(
    sized_page, server, screenshot_dir, size, present
):
    page = sized_page(size)
    open_atlas(page, server, "&present=1" if present else "")
    grid = page.locator(".js-plotly-plot")
    for word in ("aligner", "mixed", "broad"):  # the shipped translator's roles, as the grid prints them
        expect(grid.get_by_text(word, exact=True).first).to_be_attached()
    for title in ("Encoder: English reads English", "Cross-attention: French reads English"):
        expect(grid.get_by_text(title, exact=True)).to_be_visible()
    expect(grid.locator(".scatterlayer .point")).to_have_count(len(KINDS) * N_LAYERS * N_HEADS * ACROSS)
    if present:
        overflow = page.evaluate(GRID_OVERFLOW_JS)
        assert overflow <= 0, f"the grid runs {overflow:.0f} px past {size[0]}x{size[1]}"
    assert page.evaluate(CUT_TEXT_JS) + page.evaluate(CUT_CHART_TEXT_JS) == []
    assert page.evaluate(TITLES_MEET_JS) == []
    assert page.locator("[data-testid='stException']").count() == 0
    assert not page.js_errors, page.js_errors
    name = "presenter" if present else "normal"
    page.screenshot(path=screenshot_dir / f"atlas-translator-{name}-{size[0]}x{size[1]}.png")


def test_a_click_on_a_cross_attention_cell_opens_that_head_on_explore(sized_page, server):
    page = sized_page((1280, 800))
    open_atlas(page, server)
    layer, head = 1, 2  # 0-based: the cross-attention's layer 2, head 3
    # the points are drawn panel by panel (KINDS' order), each panel's offset by offset, layer-major
    per_panel = N_LAYERS * N_HEADS * ACROSS
    index = KINDS.index("cross") * per_panel + 1 * N_LAYERS * N_HEADS + layer * N_HEADS + head
    point = page.locator(".js-plotly-plot .scatterlayer .point").nth(index)
    point.scroll_into_view_if_needed()
    wait_settled(page, 1)
    box = point.bounding_box()
    assert box is not None
    link = page.get_by_role("link", name=f"Open cross layer {layer + 1}, head {head + 1} on explore")
    click(
        page,
        (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2),
        lambda: link.wait_for(timeout=BROWSER_DEADLINE_MS),
    )
    assert link.get_attribute("href").endswith(
        f"explore?model=translator&kind=cross&layer={layer}&head={head}"
    )
    with page.context.expect_page() as opened:
        click(page, link, lambda: None)  # the new tab is the effect
    explore = opened.value
    explore.wait_for_load_state()
    wait_charts(explore, 1, BROWSER_DEADLINE_MS)
    heading = f"Layer {layer + 1}, head {head + 1}: from each French word being written to the English"
    expect(explore.get_by_text(heading, exact=True)).to_be_visible()
    explore.close()
