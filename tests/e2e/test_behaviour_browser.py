"""The explore page's ablation and attribution views in Chromium: at 1280x800, and at 1920x1080 in
presenter mode, the charts draw with their axes saying what they show, no label is cut, no error
shows; on a projector the main chart fits the first screen. Screenshots: /tmp/shots/ablation-*.png and
/tmp/shots/attribution-*.png (the screen, and the whole page)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, wait_settled
from tests.e2e.test_layout import CUT_TEXT_JS
from tests.e2e.test_pages_browser import assert_clean, screenshot_whole_page, wait_all_drawn

SHOTS = Path("/tmp/shots")
TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."
PATH = f"/explore?view=ablation&text={quote(TROPHY, safe='')}&focus=it&target=trophy"
CASES = (("laptop", (1280, 800), ""), ("present", (1920, 1080), "&present=1"))
# Per chart: [colour bar title, x axis title, y axis title, number of traces, rows, columns, bottom px]
CHARTS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map((gd) => {
  const plain = (t) => (typeof t === 'string' ? t : (t || {}).text || '').replace(/<[^>]+>/g, '');
  const first = gd.data[0];
  return [plain((first.colorbar || {}).title), plain(gd.layout.xaxis.title), plain(gd.layout.yaxis.title),
          gd.data.length, (first.y || []).length, (first.x || []).length, gd.getBoundingClientRect().bottom];
})"""


# True once the last chart is the ablation's bars (two traces, cosine to "it" along y).
BARS_SHOWN_JS = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].at(-1);
  if (!gd || !gd.data || !gd.layout.yaxis) return false;
  const title = gd.layout.yaxis.title;
  const text = typeof title === 'string' ? title : (title || {}).text || '';
  return gd.data.length === 2 && text.replace(/<[^>]+>/g, '').startsWith('cosine to “it”');
}"""


def check_bars(page) -> None:
    bars = page.evaluate(CHARTS_JS)[-1]
    assert bars[3] == 2 and bars[2].startswith("cosine to “it”"), bars
    expect(page.get_by_text("nearest to “it”").first).to_be_attached()


@pytest.mark.parametrize(("name", "size", "extra"), CASES, ids=[c[0] for c in CASES])
def test_ablation_view_draws_uncut(sized_page, app_server, name, size, extra):
    """On a laptop the grid and the bars share the page; on a projector a switch shows one at a
    time, each whole on the screen."""
    page = sized_page(size)
    page.goto(app_server.url + PATH + extra)
    wait_all_drawn(page, 1 if extra else 2)
    wait_settled(page, 1 if extra else 2)
    grid = page.evaluate(CHARTS_JS)[0]
    assert grid[:3] == ["effect, 1 − cos", "head (1–12)", "layer (1–6)"], grid
    assert grid[4:6] == [6, 12], grid
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"ablation-{name}-{size[0]}x{size[1]}.png")
    if extra:
        assert grid[6] <= size[1], grid
        switch = page.locator('[data-testid="stButtonGroup"] button').filter(
            has_text="Heads switched off together"
        )
        click(  # the switch has rerun
            page,
            switch,
            lambda: page.wait_for_function(BARS_SHOWN_JS, timeout=BROWSER_DEADLINE_MS, polling="raf"),
        )
        wait_all_drawn(page, 1)
        wait_settled(page, 1)
        check_bars(page)
        assert page.evaluate(CHARTS_JS)[-1][6] <= size[1]  # the bars are whole on the first screen
        page.screenshot(path=SHOTS / f"ablation-{name}-{size[0]}x{size[1]}-set.png")
    else:
        check_bars(page)
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    screenshot_whole_page(page, SHOTS / f"ablation-{name}-{size[0]}x{size[1]}-page.png")


@pytest.mark.parametrize(("name", "size", "extra"), CASES, ids=[c[0] for c in CASES])
def test_attribution_view_draws_uncut(sized_page, app_server, name, size, extra):
    page = sized_page(size)
    page.goto(app_server.url + f"/explore?view=attribution&text={quote(TROPHY, safe='')}" + extra)
    wait_all_drawn(page, 1)
    wait_settled(page, 1)
    bars = page.evaluate(CHARTS_JS)[0]
    assert bars[3] == 4, bars  # leave-one-out, attention, rollout, norms
    assert bars[5] == 15, bars  # the 17 tokens but [CLS] and [SEP]
    if extra:  # on a projector the bars are whole on the first screen
        assert bars[6] <= size[1], bars
    expect(page.get_by_text("Spearman's ρ against leave-one-out").first).to_be_attached()
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"attribution-{name}-{size[0]}x{size[1]}.png")
    screenshot_whole_page(page, SHOTS / f"attribution-{name}-{size[0]}x{size[1]}-page.png")


@pytest.mark.parametrize(
    ("name", "path", "n_lines", "n_charts"),
    # (page, link, pronoun lines, charts on the page: explore's focus view draws the head, its
    # trophy bars and one pronoun line; compare two heads, their difference, two lines and the moves)
    [("explore", "/explore?view=focus&example=trophy-large", 1, 3), ("compare", "/compare", 2, 6)],
)
def test_pronoun_test_draws(sized_page, app_server, name, path, n_lines, n_charts):
    page = sized_page((1280, 800))
    page.goto(app_server.url + path)
    wait_all_drawn(page, n_charts)
    wait_settled(page, n_charts)
    pronoun_axes = ["after layer (0 = the embeddings)", "cosine to “it”"]
    lines = [c for c in page.evaluate(CHARTS_JS) if c[1:3] == pronoun_axes]
    assert len(lines) == n_lines, page.evaluate(CHARTS_JS)
    assert all(c[3] >= 2 for c in lines), lines
    expect(page.get_by_text("Across the pair")).to_have_count(1)
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    screenshot_whole_page(page, SHOTS / f"pronoun-{name}-page.png")
