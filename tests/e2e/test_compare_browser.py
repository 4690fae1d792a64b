"""The compare page in a real browser: it renders (both heads and their difference drawn, no script
error), a click in the ranking opens that head, injection payloads typed into either box or carried
by the link are shown as text and never run, and no label is cut at 1280x800 and 1920x1080 (normal
and presenter mode). One server and one browser for the module (tests/e2e/conftest.py)."""

from __future__ import annotations

import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, send_text, wait_charts, wait_settled, wait_still
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran, strip_repeat
from tests.e2e.test_layout import CUT_TEXT_JS

pytestmark = pytest.mark.slow

TITLES_JS = """() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map((t) => t.textContent)"""
TICKS_JS = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  return plot ? [...plot.querySelectorAll('.ytick text')].map((t) => t.textContent) : [];
}"""


def titles(page) -> list[str]:
    """The head maps' titles ("Sentence 1 · layer 3, head 4", the difference's), in page order; the
    pronoun test's and the moves line's charts below them name no head."""
    return [t for t in page.evaluate(TITLES_JS) if " · layer " in t]


# the trophy pair draws the two heads, their difference, the two pronoun lines, the moves line and
# patching's heads grid: waiting for all seven means the heatmaps have drawn too (the small line
# charts can finish first)
ALL_CHARTS = 7


# The script has finished and every head map's title passes `test(title, arg)`, every map redrawn:
# Plotly redraws one chart after another, so one new title does not mean all three.
HEAD_TITLES_JS = """([test, arg]) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const shown = [...document.querySelectorAll(".js-plotly-plot .gtitle")]
    .map((e) => e.textContent).filter((t) => t.includes(" · layer "));
  const heads = new Set(shown.map((t) => t.split(" · ").at(-1)));
  if (test === "names") return shown.length > 0 && shown.every((t) => t.includes(arg));
  return shown.length === 3 && !shown[0].includes(arg) && heads.size === 1;  // "moved"
}"""


def wait_title(page, text: str) -> None:
    """Wait until every head map's title names `text` ("layer 3, head 4")."""
    page.wait_for_function(HEAD_TITLES_JS, arg=["names", text], timeout=BROWSER_DEADLINE_MS, polling="raf")


def wait_moved(page, text: str) -> None:
    """Wait until the head maps have left `text` for one other head, all three of them."""
    page.wait_for_function(HEAD_TITLES_JS, arg=["moved", text], timeout=BROWSER_DEADLINE_MS, polling="raf")


def test_renders_both_heads_and_the_difference(page, app_server, screenshot_dir):
    page.goto(f"{app_server.url}/compare")
    wait_charts(page, ALL_CHARTS, BROWSER_DEADLINE_MS)
    shown = titles(page)
    assert shown[0].startswith("Sentence 1 · layer") and shown[1].startswith("Sentence 2 · layer")
    assert "sentence 2 − sentence 1" in shown[2]
    expect(page.get_by_text("Swapped: “large → small”")).to_have_count(1)
    assert not page.js_errors
    assert not page.locator("[data-testid='stException'], [data-testid='stAlertContentError']").count()
    page.screenshot(path=screenshot_dir / "compare.png")


def test_ranking_opens_a_head(page, app_server):
    page.goto(f"{app_server.url}/compare?layer=0&head=0")
    wait_charts(page, ALL_CHARTS, BROWSER_DEADLINE_MS)
    assert "layer 1, head 1" in titles(page)[0]
    button = page.locator("[class*='st-key-compare_top_2'] button")
    label = button.inner_text()  # "Layer 3, head 4: 0.12"
    where = label.split(":")[0].replace("Layer", "layer")
    click(page, button, lambda: wait_title(page, where))
    assert all(where in t for t in titles(page))
    assert f"layer={int(where.split()[1].rstrip(',')) - 1}" in page.url
    # a row of the table: its selection box, in the first column of the grid (a canvas), once the
    # grid has drawn its rows (its accessible copy holds the 4th) and stands still
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.locator("tbody tr").nth(3).wait_for(state="attached", timeout=BROWSER_DEADLINE_MS)
    grid.scroll_into_view_if_needed()
    wait_still(page, grid)
    box = grid.bounding_box()
    row_px, header_px = 35, 35
    row = (box["x"] + 16, box["y"] + header_px + row_px * 3 + row_px / 2)  # the 4th row
    click(page, row, lambda: wait_moved(page, where))
    wait_charts(page, ALL_CHARTS)
    shown = titles(page)
    assert len(shown) == 3 and len({t.split(" · ")[-1] for t in shown}) == 1  # all three: the same head


def _tokens(text: str) -> list[str]:
    from tokenizers import Tokenizer

    from core.models.bundled import bundled_model_dir

    tok = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok.encode(text).tokens


@pytest.fixture
def own_page(shared_tab, app_server):
    """One compare session on two sentences of one's own, kept from test to test."""

    def setup(page):
        page.goto(f"{app_server.url}/compare?preset=own&text=warm&text2=cold")
        wait_charts(page, 3, BROWSER_DEADLINE_MS)

    return shared_tab.kept("compare-own", (1400, 1000), setup)


@pytest.mark.parametrize("group", list(SENTENCES))
def test_payloads_typed_into_either_box_do_not_run(own_page, group):
    page, payload = own_page, SENTENCES[group]
    for label, param in (("Sentence 1", "text"), ("Sentence 2", "text2")):
        send_text(page, page.get_by_label(label, exact=True), payload, param=param)
        wait_settled(page, 2)  # the charts redrawn with the payload's tokens, not the last sentence's
        assert_nothing_ran(page)
    shown = [strip_repeat(label) for label in page.evaluate(TICKS_JS)]
    assert shown and set(shown) <= set(_tokens(payload))  # the payload's tokens, as text


@pytest.mark.parametrize("group", list(SENTENCES))
def test_payloads_in_the_link_do_not_run(page, app_server, group):
    payload = SENTENCES[group]
    query = urllib.parse.urlencode({"text": payload, "text2": payload + " again", "focus": payload[:40]})
    page.goto(f"{app_server.url}/compare?{query}")
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    assert_nothing_ran(page)
    expect(page.get_by_label("Sentence 1", exact=True)).to_have_value(payload)


VIEWPORTS = ((1280, 800), (1920, 1080))
PATHS = (
    "/compare",
    "/compare?preset=bank",
    "/compare?present=1",
    "/compare?present=1&show=diff",
    "/compare?present=1&show=patch",
)


@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_label_is_cut(sized_page, app_server, size):
    page = sized_page(size)
    found = []
    for path in PATHS:
        page.goto(app_server.url + path)
        wait_charts(page, 1, BROWSER_DEADLINE_MS)
        wait_settled(page, 1)  # Plotly's layout done, the fonts in: the labels at their final width
        found += [f"{path} at {size[0]}x{size[1]}: {text!r}" for text in page.evaluate(CUT_TEXT_JS)]
    assert not found, "cut or ellipsised text:\n" + "\n".join(found)
