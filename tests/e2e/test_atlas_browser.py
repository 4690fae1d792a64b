"""The atlas page in a real browser (issue 16 §2): it renders the bundled model's grid and table,
a click on a grid cell gives a link that opens that head on explore, payloads typed or linked never
run, and nothing is cut off at 1280x800 and 1920x1080, normal and presenter. What AppTest cannot do:
click a Plotly cell, follow a link into a new tab, draw the page.

The server has a cache folder of its own (XDG_CACHE_HOME), so the first visit computes the atlas
(with its progress bar) and never touches the user's cache.
"""

from __future__ import annotations

import re
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import StreamlitServer, click, send_text, wait_charts, wait_settled, wait_still
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran, text_param
from tests.e2e.test_layout import CUT_TEXT_JS

pytestmark = pytest.mark.slow
VIEWPORTS = ((1280, 800), (1920, 1080))
N_HEADS = 12


@pytest.fixture(scope="module")
def atlas_server(tmp_path_factory):
    with StreamlitServer(env={"XDG_CACHE_HOME": str(tmp_path_factory.mktemp("atlas_cache"))}) as server:
        yield server


def open_atlas(page, server, query: str = "") -> None:
    page.goto(f"{server.url}/atlas{query}")
    wait_charts(
        page, 1, BROWSER_DEADLINE_MS
    )  # the first visit computes the atlas: minutes on a loaded machine


def test_atlas_renders_grid_and_table(page, atlas_server, screenshot_dir):
    open_atlas(page, atlas_server)
    # 6 x 12 invisible click targets over the grid, one per head; the table (it can arrive after the
    # grid is drawn) and the note under it
    expect(page.locator(".js-plotly-plot .scatterlayer .point")).to_have_count(6 * N_HEADS)
    expect(page.locator("[data-testid='stDataFrame']")).to_have_count(1)
    expect(page.get_by_text("Measured on the built-in corpus:", exact=False)).to_have_count(1)
    assert_nothing_ran(page)
    page.screenshot(path=screenshot_dir / "atlas-1400.png")


def test_click_on_a_cell_opens_that_head_on_explore(page, atlas_server):
    open_atlas(page, atlas_server, "?stat=to_prev")
    layer, head = 0, 2  # 0-based: layer 1, head 3, the previous-token head
    point = page.locator(".js-plotly-plot .scatterlayer .point").nth(layer * N_HEADS + head)
    box = point.bounding_box()
    assert box is not None
    link = page.get_by_role("link", name=f"Open layer {layer + 1}, head {head + 1} on explore")
    click(
        page,
        (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2),
        lambda: link.wait_for(timeout=BROWSER_DEADLINE_MS),
    )
    href = link.get_attribute("href")
    query = urllib.parse.parse_qs(urllib.parse.urlparse(href).query)
    assert query["layer"] == [str(layer)] and query["head"] == [str(head)] and query["view"] == ["head"]
    with page.context.expect_page() as opened:
        click(page, link, lambda: None)  # the new tab is the effect
    explore = opened.value
    explore.wait_for_load_state()
    wait_charts(explore, 1, BROWSER_DEADLINE_MS)
    title = explore.locator(".js-plotly-plot .gtitle").first
    expect(title).to_have_text(re.compile(f"^Layer {layer + 1}, head {head + 1}"))
    explore.close()


def test_table_link_opens_that_head_on_explore(sized_page, atlas_server):
    """The table's "Open" link (a canvas cell): the third row is layer 1, head 3."""
    page = sized_page((1400, 2000))  # tall: the table in view without scrolling
    open_atlas(page, atlas_server)
    # the grid has drawn its rows once its accessible copy holds them: the third row's link cell
    table = page.locator("[data-testid='stDataFrame']")
    table.locator("[data-testid='glide-cell-3-2']").wait_for(state="attached", timeout=BROWSER_DEADLINE_MS)
    wait_still(page, table)
    box = table.bounding_box()
    # the link column comes fourth, after layer (52 px), head (52 px) and role (118 px); rows 35 px
    x, y = box["x"] + 52 + 52 + 118 + 30, box["y"] + 35 + 35 * 2 + 17
    page.mouse.move(x, y)
    with page.context.expect_page() as opened:
        click(page, (x, y), lambda: None)  # the new tab is the effect
    explore = opened.value
    explore.wait_for_load_state()
    query = urllib.parse.parse_qs(urllib.parse.urlparse(explore.url).query)
    assert query["layer"] == ["0"] and query["head"] == ["2"] and query["model"] == ["bundled"]
    wait_charts(explore, 1, BROWSER_DEADLINE_MS)
    expect(explore.locator(".js-plotly-plot .gtitle").first).to_have_text(re.compile("^Layer 1, head 3"))
    explore.close()


@pytest.mark.parametrize("group", list(SENTENCES))
def test_payloads_in_the_sentence_box_do_not_run(page, atlas_server, group):
    open_atlas(page, atlas_server, "?on=sentence&text=warm")
    payload = SENTENCES[group]
    box = page.locator("[data-testid='stTextArea'] textarea >> nth=0")
    send_text(page, box, payload)
    wait_charts(page, 1)
    assert_nothing_ran(page)
    expect(box).to_have_value(payload)
    assert text_param(page) == payload
    expect(page.get_by_text("your sentence only", exact=False)).to_have_count(1)


@pytest.mark.parametrize("group", list(SENTENCES))
def test_payloads_in_the_link_do_not_run(page, atlas_server, group):
    payload = SENTENCES[group]
    query = urllib.parse.urlencode({"on": "sentence", "text": payload, "stat": payload, "roles": payload})
    open_atlas(page, atlas_server, "?" + query)
    assert_nothing_ran(page)
    # polled: the chart can be drawn a moment before the text area shows its value (a CI run saw '')
    expect(page.locator("[data-testid='stTextArea'] textarea >> nth=0")).to_have_value(
        payload, timeout=BROWSER_DEADLINE_MS
    )
    expect(page.get_by_text("The link asks for an unknown", exact=False)).to_have_count(1)  # its `stat`


PAGES = (
    "",
    "?stat=to_prev&roles=prev,cls",
    "?on=sentence&text=The+keys+to+the+cabinet+are+on+the+table.",
    "?present=1",
    "?present=1&stat=entropy_norm",
)


@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nothing_is_cut(sized_page, atlas_server, size, screenshot_dir):
    page = sized_page(size)
    found = []
    for n, query in enumerate(PAGES):
        open_atlas(page, atlas_server, query)
        wait_settled(page, 1)  # Plotly's layout done, the fonts in: the labels at their final width
        found += [f"{query} at {size[0]}x{size[1]}: {text!r}" for text in page.evaluate(CUT_TEXT_JS)]
        if n in (0, 3):
            mode = "presenter" if "present" in query else "normal"
            page.screenshot(path=screenshot_dir / f"atlas-{mode}-{size[0]}x{size[1]}.png")
    assert not found, "cut or ellipsised text:\n" + "\n".join(found)
    assert not page.js_errors, page.js_errors
