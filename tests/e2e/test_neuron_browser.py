"""The neuron view in a real browser (Playwright + chromium): a click on a cell of explore's head map
chooses that cell, opens "Where this weight comes from" on it, and the numbers shown are the map's.
AppTest cannot click a Plotly chart (tests/dashboard/test_neuron.py covers the rest)."""

from __future__ import annotations

import re
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, wait_charts, wait_still

PROBLEMS = "[data-testid='stException'], [data-testid='stAlertContentError']"
# the trophy example's tokens: [CLS] the trophy wouldn ' t fit in the suitcase because it was ...
SUITCASE, THE = 9, 1
# True once the link names the clicked cell: its query token (`focus`) and key token (`target`)
CHOSEN_JS = """([focus, target]) => { const q = new URLSearchParams(location.search);
  return q.get('focus') === focus && q.get('target') === target; }"""


def _click_cell(page, row: int, col: int, focus: str, target: str) -> None:
    """Click the head map's cell (row, col) of the shown tokens: its invisible point, one per cell in
    row-major order (dashboard.charts.neuron.add_cell_targets), clicked at its centre; then wait until
    the link names the cell's tokens, `focus` and `target`."""
    chart = page.locator(".js-plotly-plot").first
    n = chart.locator(".scatterlayer .point").count()
    w = round(n**0.5)
    assert w * w == n and w > max(row, col), n
    point = chart.locator(".scatterlayer .point").nth(row * w + col)
    point.scroll_into_view_if_needed()  # the mouse only reaches what is on screen
    wait_still(page, point)  # the scroll done: the point where the mouse will find it
    box = point.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # Plotly's hover picks the point (its label shows); the click then selects it
    chart.locator(".hoverlayer .hovertext").first.wait_for(timeout=BROWSER_DEADLINE_MS)
    click(
        page,
        (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2),
        lambda: page.wait_for_function(CHOSEN_JS, arg=[focus, target], timeout=BROWSER_DEADLINE_MS),
    )


@pytest.mark.slow
def test_a_click_on_the_map_opens_that_cells_arithmetic(page, app_server, screenshot_dir):
    page.goto(f"{app_server.url}/explore?view=head")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    # closed: no charts of its own
    expect(page.get_by_text("Where this weight comes from")).to_have_count(1)
    _click_cell(page, SUITCASE, THE, "suitcase", "the")
    wait_charts(page, 3, BROWSER_DEADLINE_MS)  # the map, then q/k and the row of the open section
    params = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    layer, head = int(params["layer"][0]), int(params["head"][0])
    label = f"Where this weight comes from (layer {layer + 1}, head {head + 1}: “suitcase” → “the”)"
    expect(page.get_by_text(label, exact=True)).to_have_count(1)
    # the pickers show the clicked cell, numbered from 1
    for label, shown in (("Query token i", "suitcase  (#10)"), ("Key token j", "the  (#2)")):
        box = page.locator("[data-testid='stSelectbox']").filter(has_text=label)
        expect(box.locator("input").first).to_have_value(shown)
    # the engine's weight equals the map's number in that cell (its hover text, 4 decimals)
    line = page.get_by_text(re.compile(r"^The engine's weight for this cell")).inner_text()
    engine = re.search(r"([0-9]\.[0-9]{4})", line).group(1)
    assert "✓" in line
    hover = page.evaluate(
        f"""() => {{
        const plot = document.querySelector('.js-plotly-plot');
        const cells = plot.data[1];  // customdata: (W², 3) rows of [row, column, value]
        const w = Math.round(Math.sqrt(cells.x.length));
        const data = cells.customdata;
        const at = {SUITCASE} * w + {THE};
        return Array.isArray(data[at]) ? data[at][2] : plot._fullData[1].customdata[at][2];
    }}"""
    )
    assert f"{hover:.4f}" == engine
    problems = page.locator(PROBLEMS)
    assert not problems.count(), problems.first.inner_text()
    assert not page.js_errors, page.js_errors
    page.get_by_text("Where this weight comes from").scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "explore-neuron.png")


@pytest.mark.slow
def test_with_merged_words_a_click_picks_the_words_first_piece(page, app_server):
    # merged: [CLS] the unaffable cat sat . [SEP]; tokens: [CLS] the una ##ffa ##ble cat sat . [SEP]
    page.goto(f"{app_server.url}/explore?view=head&merge=1&text=The+unaffable+cat+sat.")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    _click_cell(page, 2, 3, "unaffable", "cat")  # row "unaffable", column "cat"
    wait_charts(page, 3, BROWSER_DEADLINE_MS)
    for label, shown in (("Query token i", "una  (#3)"), ("Key token j", "cat  (#6)")):
        box = page.locator("[data-testid='stSelectbox']").filter(has_text=label)
        expect(box.locator("input").first).to_have_value(shown)
    expect(page.get_by_text(re.compile("merges pieces into words"))).to_have_count(1)
    assert "✓" in page.get_by_text(re.compile(r"^The engine's weight for this cell")).inner_text()
    assert not page.locator(PROBLEMS).count() and not page.js_errors
