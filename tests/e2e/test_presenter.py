"""Presenter mode in a real browser at 1920x1080: → and PageDown step the lesson and each new step's
chart is fully on screen after the key press; on explore, → steps heads. Plus the exports: the CSV
download and the chart's image name."""

from __future__ import annotations

from functools import partial

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, press, wait_scrolled_to, wait_settled, watch_scrolls
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

FULL_HD = {"width": 1920, "height": 1080}


@pytest.fixture
def big_page(sized_page):
    """The shared tab at 1920x1080 (it accepts downloads: Playwright's default)."""
    return sized_page((FULL_HD["width"], FULL_HD["height"]))


def _first_chart_in_view(page) -> None:
    box = page.locator(".js-plotly-plot").first.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= FULL_HD["height"], box


def test_keys_step_the_lesson_and_each_chart_is_in_view(big_page, app_server):
    page = big_page
    page.goto(app_server.url + "/learn?present=1")
    wait_all_drawn(page, 1)
    _first_chart_in_view(page)
    for n, key in ((2, "ArrowRight"), (3, "PageDown"), (4, "ArrowRight"), (5, "PageDown"), (6, "ArrowRight")):
        watch_scrolls(page)
        heading = page.get_by_role("heading", name=f"Step {n} ·")
        press(page, key, partial(heading.wait_for, timeout=BROWSER_DEADLINE_MS))
        wait_all_drawn(page, 1)
        wait_scrolled_to(page, heading)  # the page has scrolled to the new step, and stopped
        wait_settled(page, 1)
        assert f"step={n}" in page.url
        assert heading.bounding_box()["y"] >= 0
        _first_chart_in_view(page)
    press(
        page,
        "PageUp",
        lambda: page.get_by_role("heading", name="Step 5 ·").wait_for(timeout=BROWSER_DEADLINE_MS),
    )
    assert "present=1" in page.url
    assert_clean(page)


def test_csv_download_and_image_name(big_page, app_server, tmp_path):
    page = big_page
    page.goto(app_server.url + "/learn?step=5")
    wait_all_drawn(page, 1)
    with page.expect_download() as info:
        click(page, page.get_by_role("button", name="CSV"), lambda: None)  # the download is the effect
    download = info.value
    assert download.suggested_filename == "attention-explorer_learn_step5_probs_head1.csv"
    target = tmp_path / "probs.csv"
    download.save_as(target)
    header = target.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("query (from) \\ key (to),The,cat")
    name = page.evaluate("() => document.querySelector('.js-plotly-plot')._context.toImageButtonOptions")
    assert name["filename"] == "attention-explorer_learn_step5_probs_head1" and name["scale"] == 3
    assert_clean(page)


def test_explore_keys_step_heads_and_the_chart_stays_in_view(big_page, app_server):
    page = big_page
    page.goto(app_server.url + "/explore?view=head&present=1&layer=0&head=0")
    wait_all_drawn(page, 1)
    _first_chart_in_view(page)
    summary = page.locator("[data-testid='stExpander'] summary", has_text="Controls")
    expect(summary).to_be_visible()
    expect(page.get_by_text("Layer (1–").first).to_be_hidden()  # folded away
    for key, head in (("ArrowRight", 1), ("PageDown", 2), ("ArrowLeft", 1), ("PageUp", 0)):
        press(page, key, partial(page.wait_for_url, f"**head={head}**", timeout=BROWSER_DEADLINE_MS))
        wait_all_drawn(page, 1)
        page.get_by_text(f"Layer 1, head {head + 1}").first.wait_for(timeout=BROWSER_DEADLINE_MS)
        _first_chart_in_view(page)
    assert_clean(page)
