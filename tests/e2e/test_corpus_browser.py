"""The explore views that read the built-in corpus, in Chromium: the similarity view's nearest corpus
words (ten lines, the word in bold, no markup from the corpus or the sentence) and the query/key
space (four traces, hover naming a point's token and sentence), at 1280x800 and at 1920x1080 in
presenter mode: nothing cut, no error, and on a projector the plane whole on the first screen.
Screenshots: /tmp/shots/neighbours-*.png, /tmp/shots/qk-*.png."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, wait_settled
from tests.e2e.test_layout import CUT_TEXT_JS
from tests.e2e.test_pages_browser import assert_clean, screenshot_whole_page, wait_all_drawn

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
CASES = (("laptop", (1280, 800), {}), ("present", (1920, 1080), {"present": "1"}))
QK_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  return [gd._fullData.map((t) => [t.name, t._length]), gd.getBoundingClientRect().bottom,
          gd.layout.xaxis.title.text, gd.layout.yaxis.title.text];
}"""


def open_view(page, app_server, params: dict, n_charts: int) -> None:
    page.goto(f"{app_server.url}/explore?{urlencode(params)}")
    wait_all_drawn(page, n_charts)
    wait_settled(page, n_charts)


@pytest.mark.parametrize(("name", "size", "extra"), CASES, ids=[c[0] for c in CASES])
def test_nearest_corpus_words(sized_page, app_server, name, size, extra):
    params = {
        "view": "similarity",
        "text": "They sat on the bank of the river.",
        "layer": "6",
        "focus": "bank",
    }
    page = sized_page(size)
    open_view(page, app_server, {**params, **extra}, 2)
    items = page.locator("[data-testid='stMarkdownContainer'] ol li")
    if extra:  # a projector shows one part at a time: the sentence's map and row first
        assert items.count() == 0
        part = page.locator('[data-testid="stButtonGroup"] button').filter(has_text="Nearest in the corpus")
        click(page, part, lambda: items.first.wait_for(timeout=BROWSER_DEADLINE_MS))
        expect(items).to_have_count(10)
        wait_settled(page)  # the list laid out, where the measure below finds it
        assert (
            page.locator("ol").last.bounding_box()["y"] + page.locator("ol").last.bounding_box()["height"]
            <= size[1]
        )
    expect(items).to_have_count(10)
    for item in items.all():
        expect(item.locator("strong")).to_have_count(2)  # the cosine and the word
        assert item.locator("strong").nth(1).inner_text().lower() == "bank"
    expect(page.get_by_text("10 of the 10 are “bank” itself")).to_have_count(1)
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"neighbours-{name}-{size[0]}x{size[1]}.png")
    screenshot_whole_page(page, SHOTS / f"neighbours-{name}-{size[0]}x{size[1]}-page.png")


@pytest.mark.parametrize(("name", "size", "extra"), CASES, ids=[c[0] for c in CASES])
def test_query_key_space(sized_page, app_server, name, size, extra):
    params = {"view": "qk", "example": "trophy-large", "layer": "5", "head": "5"}
    page = sized_page(size)
    open_view(page, app_server, {**params, **extra}, 1)
    traces, bottom, x_title, y_title = page.evaluate(QK_JS)
    names = [t[0] for t in traces]
    assert names == ["corpus queries", "corpus keys", "this sentence's queries", "this sentence's keys"]
    assert traces[0][1] == traces[1][1] > 4000 and traces[2][1] == traces[3][1] == 17
    assert x_title.startswith("principal direction 1 (") and y_title.startswith("principal direction 2 (")
    if extra:  # a projector: the plane whole on the first screen
        assert bottom <= size[1], bottom
    # hover one of the sentence's key marks: Plotly names the point nearest the mouse, which may be
    # a corpus point under it; either way a token, query or key, and a sentence
    # (the corpus clouds are WebGL, so the SVG layer holds the sentence's two traces: keys second)
    point = page.locator(".js-plotly-plot .scatterlayer .trace").nth(1).locator("path.point").first
    point.hover(force=True)
    hover = page.locator(".js-plotly-plot .hoverlayer")
    hover.locator("text").first.wait_for(timeout=BROWSER_DEADLINE_MS)
    said = hover.text_content()
    assert re.search(r" · (key|query)\S", said) and len(said) > 20, said
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"qk-{name}-{size[0]}x{size[1]}.png")
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
