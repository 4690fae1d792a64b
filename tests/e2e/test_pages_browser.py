"""Every page in a real browser (Playwright + Debian chromium): it finishes running, draws all its
charts, shows no exception or error box, throws no JavaScript error, and leaves a screenshot in
tests/e2e/screenshots/. Plus what AppTest cannot do: a click on a Plotly chart (the model view's
thumbnail opens that head).
"""

from __future__ import annotations

import re
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import COUNT_DRAWN_JS, click, wait_charts, wait_settled

PROBLEMS = "[data-testid='stException'], [data-testid='stAlertContentError']"
# The script has finished, at least n Plotly charts are on the page and every one is drawn. The
# count matters: Streamlit mounts each chart's element on its own, so a page whose first chart is
# drawn may not have mounted its second yet (a CI run once counted 1 of the focus view's 2).
ALL_DRAWN = """(n) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const plots = [...document.querySelectorAll(".js-plotly-plot")];
  return plots.length >= n && plots.every((p) => p.querySelector(".main-svg :is(.trace, g.hm, image)"));
}"""


def wait_all_drawn(page, n: int) -> None:
    page.wait_for_function(ALL_DRAWN, arg=n, timeout=BROWSER_DEADLINE_MS, polling="raf")


def screenshot_whole_page(page, path) -> None:
    """Streamlit scrolls inside its main section, so a "full page" screenshot is one screen: grow the
    viewport to the content's height (capped) for the shot, then put it back."""
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll(\"[data-testid='stMain'], "
        "[data-testid='stAppViewContainer']\")].map((e) => e.scrollHeight), innerHeight)"
    )
    tall = min(int(height), 6000)
    page.set_viewport_size({"width": size["width"], "height": tall})
    page.wait_for_function("(h) => innerHeight === h", arg=tall, polling="raf")
    wait_settled(page)  # Plotly redraws at the new size
    page.screenshot(path=path)
    page.set_viewport_size(size)


def assert_clean(page) -> None:
    problems = page.locator(PROBLEMS)
    assert not problems.count(), problems.first.inner_text()
    assert not page.js_errors, page.js_errors


@pytest.mark.parametrize(
    ("path", "charts"),
    [("/", 1), ("/learn", 1), ("/learn?step=all", 8)],  # step 1 alone, or every step's matrices
)
def test_learn_page_draws(page, app_server, screenshot_dir, path, charts):
    page.goto(app_server.url + path)
    wait_all_drawn(page, charts)
    expect(page.get_by_role("heading", name="Learn: attention from scratch")).to_have_count(1)
    assert page.evaluate(COUNT_DRAWN_JS) >= charts
    assert_clean(page)
    if path == "/learn?step=all":
        screenshot_whole_page(page, screenshot_dir / "learn.png")


def test_learn_next_button_moves_one_step(page, app_server):
    page.goto(app_server.url + "/")
    wait_all_drawn(page, 1)
    click(
        page,
        page.get_by_role("button", name="Next: 2 · Q, K, V").first,
        lambda: page.get_by_role("heading", name="Step 2 · Queries, keys and values").wait_for(
            timeout=BROWSER_DEADLINE_MS
        ),
    )
    wait_all_drawn(page, 3)
    assert page.evaluate(COUNT_DRAWN_JS) == 3  # Q, K and V of one head
    assert not page.get_by_role("heading", name="Step 1 · Embeddings").count()
    assert "step=2" in page.url
    assert_clean(page)


EXPLORE_VIEWS = {"head": 1, "lines": 1, "model": 1, "focus": 3}  # focus: head, trophy bars, pronoun line


@pytest.mark.parametrize("view", list(EXPLORE_VIEWS))
def test_explore_page_draws(page, app_server, screenshot_dir, view):
    # the default example (the trophy sentence) on each view
    page.goto(f"{app_server.url}/explore?view={view}")
    wait_all_drawn(page, EXPLORE_VIEWS[view])
    assert page.evaluate(COUNT_DRAWN_JS) == EXPLORE_VIEWS[view]
    # the bundled model answered (the sidebar names its shape and the token count)
    expect(page.get_by_text(re.compile(r"^6 layers × 12 heads · \d+ tokens$"))).to_have_count(1)
    params = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    assert params.get("example") == ["trophy-large"] and params.get("view") == [view]
    assert_clean(page)
    screenshot_whole_page(page, screenshot_dir / f"explore-{view}.png")


def test_model_view_click_opens_that_head(page, app_server):
    page.goto(f"{app_server.url}/explore?view=model&text=The+cat+sat+on+the+mat.&layer=0&head=0")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    wait_settled(page, 1)  # the chart at its final place: a point measured while it moves is missed (S9A)
    layer, head, n_heads = 2, 4, 12  # 0-based
    # the invisible hover/click points, one per head in layer-major order
    point = page.locator(".js-plotly-plot .scatterlayer .point").nth(layer * n_heads + head)
    box = point.bounding_box()
    assert box is not None
    click(
        page,
        (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2),
        lambda: page.wait_for_function(
            "() => { const q = new URLSearchParams(location.search);"
            f" return q.get('view') === 'head' && q.get('layer') === '{layer}'"
            f" && q.get('head') === '{head}'; }}",
            timeout=BROWSER_DEADLINE_MS,
        ),
    )
    wait_charts(page, 1)
    # the head view's title: waited for, as the head view's chart may be drawn a moment after
    expect(page.locator(".js-plotly-plot .gtitle").first).to_have_text(
        re.compile(f"^Layer {layer + 1}, head {head + 1}")
    )
    assert_clean(page)
