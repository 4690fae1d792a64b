"""The circuit page in Chromium, on the shipped SmolLM2 circuit (dashboard/content/circuits/smollm2_ioi.json):
the graph is drawn with a node per head of the circuit; a click on a node picks that head, and its
link opens the head on explore; presenter mode fits a 1920x1080 projector with nothing cut and no
scrolling; a 390 px phone shows the page without the page scrolling sideways; axe-core finds no WCAG 2.1
A/AA violation.
Screenshots: /tmp/shots/circuit-*.png."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.axe import sweep
from tests.e2e.harness import ROOT, click, wait_charts, wait_settled
from tests.e2e.test_cost_browser import OVERFLOW_JS
from tests.e2e.test_layout import CUT_TEXT_JS

pytestmark = pytest.mark.slow
SHOTS = Path("/tmp/shots")
SHIPPED = ROOT / "dashboard" / "content" / "circuits" / "smollm2_ioi.json"
# A node of the graph in page coordinates: the last class's first head (not the one picked first),
# read from Plotly's own layout (its axes' data-to-pixel maps).
NODE_JS = """() => {
  const gd = [...document.querySelectorAll(".js-plotly-plot")]
    .find((g) => (g._fullData || []).some((t) => t.customdata && t.customdata.length));
  const traces = gd._fullData.filter((t) => t.customdata && t.customdata.length);
  const t = traces[traces.length - 1];
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  return {
    x: box.left + fl._size.l + fl.xaxis.l2p(t.x[0]), y: box.top + fl._size.t + fl.yaxis.l2p(t.y[0]),
    layer: t.customdata[0][0], head: t.customdata[0][1], nodes: traces.reduce((n, t) => n + t.x.length, 0),
  };
}"""


def _shipped() -> dict:
    return json.loads(SHIPPED.read_text(encoding="utf-8"))


def test_the_graph_is_drawn_and_a_node_opens_its_head_on_explore(sized_page, app_server):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1400, 1000))
    page.goto(app_server.url + "/circuit")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    page.locator("[data-testid='stPlotlyChart']").first.scroll_into_view_if_needed()
    wait_settled(page, 1)
    node = page.evaluate(NODE_JS)
    shipped = _shipped()
    heads = {tuple(h) for found in shipped["classes"].values() for h in found}
    heads |= {tuple(row["head"]) for row in shipped["evidence"]["left_out"]["direct_only"]}
    assert node["nodes"] == len(heads)  # the circuit's, and the heads with a direct effect left out
    wanted = f"layer={node['layer']}&head={node['head']}"
    click(
        page, (node["x"], node["y"]), lambda: page.wait_for_url(f"**{wanted}**", timeout=BROWSER_DEADLINE_MS)
    )
    link = page.get_by_role(
        "link", name=f"Open layer {node['layer'] + 1}, head {node['head'] + 1} on explore"
    )
    expect(link).to_be_visible()
    query = urllib.parse.parse_qs(urllib.parse.urlparse(link.get_attribute("href")).query)
    assert (query["view"], query["layer"], query["head"]) == (
        ["head"],
        [str(node["layer"])],
        [str(node["head"])],
    )
    assert query["model"] == ["smollm2"] and query["text"] == [_shipped()["prompts"][0]["text"]]
    page.screenshot(path=SHOTS / "circuit-1400x1000.png")
    assert not page.js_errors, page.js_errors
    page.goto(urllib.parse.urljoin(app_server.url + "/circuit", link.get_attribute("href")))
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    assert "/explore" in page.url and f"layer={node['layer']}" in page.url
    assert page.locator("[data-testid='stException']").count() == 0


@pytest.mark.parametrize("view", ["graph", "direct", "gpt2"])
def test_presenter_mode_fits_a_projector(sized_page, app_server, view):
    page = sized_page((1920, 1080))
    page.goto(app_server.url + f"/circuit?present=1&view={view}")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    wait_settled(page, 1)
    page.screenshot(path=SHOTS / f"circuit-present-{view}.png")
    assert page.evaluate(CUT_TEXT_JS) == []
    overflow = page.evaluate(OVERFLOW_JS)
    assert overflow <= 0, f"the {view} view runs {overflow:.0f} px past 1920x1080"
    assert not page.js_errors, page.js_errors


def test_a_phone_reads_the_page_without_sideways_scrolling(sized_page, app_server):
    page = sized_page((390, 844))
    page.goto(app_server.url + "/circuit")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    wait_settled(page, 1)
    page.screenshot(path=SHOTS / "circuit-phone.png")
    wide = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollWidth")
    assert wide <= 390, f"the page is {wide} px wide on a 390 px phone"
    assert page.get_by_role("heading", name="How heads work together").count() >= 1
    assert not page.js_errors, page.js_errors


AXE_STATES = [
    ("graph", "/circuit"),
    ("direct", "/circuit?view=direct"),
    ("gpt2", "/circuit?view=gpt2"),
    ("graph · presenter", "/circuit?present=1"),
]


def test_axe_finds_no_wcag_violation(page, app_server):
    """axe-core's WCAG 2.1 A/AA rules on the page's views, at a laptop's and a phone's size."""
    sweep(page, app_server.url, "circuit", AXE_STATES).assert_clean()
