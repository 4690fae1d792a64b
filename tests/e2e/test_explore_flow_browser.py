"""The explore page's norms (head view) and rollout view in Chromium at 1280x800 and 1920x1080,
normal and presenter mode: the charts draw with the titles and colour bars that say what is shown,
the measure switch works by click, no label is cut, no error shows. Screenshots: flow-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from dashboard.content.explore import NORMS_HIDDEN_NOTE
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, wait_settled
from tests.e2e.test_layout import CUT_TEXT_JS
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

VIEWPORTS = ((1280, 800), (1920, 1080))
# (name, path, charts drawn, the first chart's title ends with, its colour bar title)
CASES = (
    ("norms", "/explore?measure=norms", 1, "· norms ‖α f(x)‖", "‖α f(x)‖"),
    (
        "norms-rescaled-present",
        "/explore?measure=norms&rescale=1&hide=1&present=1",
        1,
        f"rows rescaled to sum to 1 · {NORMS_HIDDEN_NOTE}",
        "share of",
    ),
    ("rollout", "/explore?view=rollout&layer=5", 2, "Rollout up to layer 6", "rollout"),
    ("rollout-present", "/explore?view=rollout&layer=5&present=1", 2, "Rollout up to layer 6", "rollout"),
)
FIRST_CHART_JS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const title = gd.layout.title;
  const bar = gd.data[0].colorbar || {};
  const text = typeof title === 'string' ? title : (title || {}).text || '';
  const plain = (t) => t.replace(/<[^>]+>/g, '');  // Streamlit's theme wraps the title in <b>
  return [plain(text), plain((bar.title || {}).text || '')];
}"""


def _open(sized_page, size, url):
    page = sized_page(size)
    page.goto(url)
    return page


def _option(page, text):
    """A segmented control's option by its text."""
    return page.locator('[data-testid="stButtonGroup"] button').filter(has_text=text)


@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("name", "path", "charts", "title_end", "bar"), CASES, ids=[c[0] for c in CASES])
def test_flow_views_draw_uncut(
    sized_page, app_server, screenshot_dir, size, name, path, charts, title_end, bar
):
    page = _open(sized_page, size, app_server.url + path)
    wait_all_drawn(page, charts)
    wait_settled(page, charts)
    title, bar_title = page.evaluate(FIRST_CHART_JS)
    assert title.endswith(title_end), title
    assert bar_title.startswith(bar), bar_title
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    page.screenshot(path=screenshot_dir / f"flow-{name}-{size[0]}x{size[1]}.png")


def _wait_title(page, js_test: str) -> None:
    """Wait until the script is idle and the first chart's title passes `js_test` (on `t`)."""
    page.wait_for_function(
        "() => { const app = document.querySelector(\"[data-testid='stApp']\");"
        " if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;"
        " const gd = document.querySelector('.js-plotly-plot');"
        " const t = (gd && gd.layout && gd.layout.title && gd.layout.title.text) || '';"
        f" return {js_test}; }}",
        timeout=BROWSER_DEADLINE_MS,
    )


def test_measure_switch_and_rollout_by_click(sized_page, app_server):
    page = _open(sized_page, (1280, 800), app_server.url + "/explore")
    wait_all_drawn(page, 1)
    assert "norms" not in page.evaluate(FIRST_CHART_JS)[0]
    click(page, _option(page, "norms ‖α f(x)‖"), lambda: _wait_title(page, "t.includes('norms')"))
    page.wait_for_url("**measure=norms**", timeout=BROWSER_DEADLINE_MS)
    rescale = page.locator(".st-key-explore_rescale label").first
    click(page, rescale, lambda: _wait_title(page, "t.includes('rescaled')"))
    page.wait_for_url("**rescale=1**", timeout=BROWSER_DEADLINE_MS)
    click(page, _option(page, "Rollout"), lambda: _wait_title(page, "t.includes('Rollout')"))
    wait_all_drawn(page, 2)
    page.wait_for_url("**view=rollout**", timeout=BROWSER_DEADLINE_MS)
    expect(page.get_by_text("heads mix equally")).to_have_count(1)
    assert_clean(page)
