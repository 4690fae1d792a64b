"""A chart as a screen reader and a keyboard meet it, in Chromium (issue 50): explore's head map is a
figure named by its sentence (what it shows and its largest weight, checked against the chart's own
data), Plotly's SVG is hidden from assistive technology, and the "Numbers as a table" control under it
is the next Tab stop after the chart's toolbar, opens with Enter and holds the head's numbers.
One page load. Screenshot: /tmp/shots/chart-text-table.png."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from playwright.sync_api import expect

from dashboard.chart_access import NUMBERS, NUMBERS_LABEL
from tests.e2e.harness import press, wait_settled
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

SHOTS = Path("/tmp/shots")
# The head map's weights as Plotly drew them (its full data: the typed arrays decoded, row by row)
HEAD_DATA_JS = """(el) => Array.from(el._fullData[0].z, (row) => Array.from(row))"""


def test_a_head_map_is_named_by_its_sentence_and_its_numbers_open_by_keyboard(sized_page, app_server):
    page = sized_page((1280, 800))
    page.goto(app_server.url + "/explore")
    wait_all_drawn(page, 1)
    wait_settled(page, 1)
    box = page.locator(".st-key-explore_head_chart")  # the chart's element
    z = np.array(box.locator(".js-plotly-plot").evaluate(HEAD_DATA_JS), dtype=float)
    figure = box.get_by_role(
        "figure", name=re.compile(r"^Chart: Layer \d+, head \d+\. A heatmap of 17 × 17 cells")
    )
    expect(figure).to_have_count(1)
    name = figure.get_attribute("aria-label")
    assert f"The largest weight, {z.max():.3g}, is from" in name, name  # read from the data drawn
    assert "on the previous token" in name, name  # then the view's own statement of the head's shares
    expect(box.locator("svg.main-svg").first).to_have_attribute("aria-hidden", "true")
    tree = figure.aria_snapshot()
    assert "trophy" not in tree.split("\n", 1)[-1], tree  # tick labels are not read one by one

    figure.get_by_role("button").last.focus()  # the toolbar's last button: the chart's last Tab stop
    numbers = page.locator(f".st-key-{NUMBERS}explore_head_chart")  # the control right under the chart
    control = numbers.locator("summary", has_text=NUMBERS_LABEL)  # Streamlit's expander: a disclosure
    press(page, "Tab", lambda: expect(control).to_be_focused())
    table = press(page, "Enter", lambda: numbers.get_by_role("table"))
    expect(table).to_have_count(1)
    row = int(np.argmax(z.max(axis=1)))  # the row holding the largest weight
    cells = table.get_by_role("row").nth(row + 1).get_by_role("cell")  # row 0: the column labels
    expect(cells).to_have_count(17)
    shown = np.array([float(text) for text in cells.all_inner_texts()])
    np.testing.assert_allclose(shown, z[row], atol=5e-5)
    expect(numbers.locator("[data-testid='stTable'] > div")).to_have_attribute(
        "tabindex", "0"
    )  # scrolls by keyboard
    assert_clean(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / "chart-text-table.png")
