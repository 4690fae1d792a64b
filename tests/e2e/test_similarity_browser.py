"""The explore page's similarity view and the compare page's "how far the word moves" in Chromium:
the charts draw with axes saying what they show, nothing is cut, no error shows. Screenshots:
/tmp/shots/similarity-*.png and /tmp/shots/moves-compare-page.png."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_settled
from tests.e2e.test_behaviour_browser import CHARTS_JS
from tests.e2e.test_layout import CUT_TEXT_JS
from tests.e2e.test_pages_browser import assert_clean, screenshot_whole_page, wait_all_drawn

SHOTS = Path("/tmp/shots")


@pytest.mark.parametrize(
    ("name", "size", "extra"), [("laptop", (1280, 800), ""), ("present", (1920, 1080), "&present=1")]
)
def test_similarity_view_draws(sized_page, app_server, name, size, extra):
    page = sized_page(size)
    page.goto(app_server.url + "/explore?view=similarity&example=bank-river&layer=6" + extra)
    wait_all_drawn(page, 2)
    wait_settled(page, 2)
    grid, bars = page.evaluate(CHARTS_JS)[:2]
    assert grid[:3] == ["cosine", "token", "token"], grid
    assert grid[4] == grid[5] == 13, grid  # [CLS] + 11 tokens + [SEP]
    assert bars[1] == "token" and bars[2] == "cosine to “bank”", bars
    if extra:
        assert grid[6] <= size[1] + 40, grid  # the map fills the projector's screen
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"similarity-{name}.png")
    screenshot_whole_page(page, SHOTS / f"similarity-{name}-page.png")


def test_compare_moves_draws(sized_page, app_server):
    page = sized_page((1280, 800))
    page.goto(app_server.url + "/compare?preset=bank")
    wait_all_drawn(page, 5)
    wait_settled(page, 5)
    moves = [c for c in page.evaluate(CHARTS_JS) if c[2] == "cosine, sentence 1 vs 2"]
    assert len(moves) == 1, moves
    expect(page.get_by_text("How far “bank” moves between the sentences")).to_have_count(1)
    assert page.evaluate(CUT_TEXT_JS) == []
    assert_clean(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    screenshot_whole_page(page, SHOTS / "moves-compare-page.png")
