"""Decks in Chromium (issues 31 and 37). A clicker's PageDown walks "Attention in twenty minutes"
end to end at 1920x1080, across pages, and on every slide the bar and the first chart are on screen,
no chart is cut by the screen's bottom edge (a chart is either whole on screen or wholly below it);
PageUp goes back. The heads deck's measuring slide has its chart and its caption on screen. A
teacher builds a deck with "Add this view to my deck", writes its text (a payload that never runs),
reloads the page (its own link carries the deck), saves the file, empties the deck, opens the file
again, and the share link presents it.
Screenshots: /tmp/shots/deck-attention-KK.png, one per slide; /tmp/shots/deck-heads-04.png."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from playwright.sync_api import expect

from dashboard.decks.model import builtin_deck
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, press, wait_idle, wait_listening, wait_settled
from tests.e2e.test_injection import SENTENCES, assert_nothing_ran
from tests.e2e.test_pages_browser import assert_clean

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
PAGES = ("learn", "explore", "compare", "atlas", "cost")
# every chart's top and bottom, and the bar's, in the viewport's coordinates
BOXES_JS = """() => ({
  bar: document.querySelector(".st-key-deck_bar").getBoundingClientRect().toJSON(),
  charts: [...document.querySelectorAll(".js-plotly-plot")].filter((c) => c.checkVisibility())
    .map((c) => { const r = c.getBoundingClientRect(); return [r.top, r.bottom]; }),
})"""


def assert_nothing_cut(page, k: int, height: int = 1080) -> None:
    boxes = page.evaluate(BOXES_JS)
    assert boxes["bar"]["top"] >= 0 and boxes["bar"]["bottom"] <= 200, (k, boxes["bar"])
    charts = boxes["charts"]
    assert charts, (k, "no chart on the slide")
    assert charts[0][0] >= 0 and charts[0][1] <= height, (k, "the first chart is cut", charts[0])
    cut = [c for c in charts if c[0] < height < c[1] - 2]
    assert not cut, (k, "a chart runs past the bottom of the screen", cut)


def test_a_clicker_walks_the_attention_deck_and_nothing_is_cut(sized_page, app_server):
    SHOTS.mkdir(exist_ok=True)
    deck = builtin_deck("attention", PAGES)
    n = len(deck.slides)
    page = sized_page((1920, 1080))
    page.goto(f"{app_server.url}/?deck=attention")
    for k, slide in enumerate(deck.slides, 1):
        expect(page.get_by_text(f"Slide {k} of {n}")).to_have_count(1, timeout=BROWSER_DEADLINE_MS)
        page.wait_for_url(f"**/{slide.page}?deck=attention&slide={k}&present=1**")
        wait_idle(page, BROWSER_DEADLINE_MS)
        wait_settled(page, 1, BROWSER_DEADLINE_MS)
        expect(page.locator(".st-key-deck_bar").get_by_text(slide.title, exact=False)).to_be_in_viewport()
        assert_nothing_cut(page, k)
        assert_clean(page)
        page.screenshot(path=SHOTS / f"deck-attention-{k:02d}.png")
        if k < n:
            moved = expect(page.get_by_text(f"Slide {k + 1} of {n}"))
            press(page, "PageDown", partial(moved.to_have_count, 1, timeout=BROWSER_DEADLINE_MS))
    # past the last slide: nothing moves
    press(page, "PageDown", lambda: wait_listening(page))
    expect(page.get_by_text(f"Slide {n} of {n}")).to_have_count(1)
    assert f"slide={n}&present=1" in page.url, page.url
    press(
        page,
        "PageUp",
        lambda: expect(page.get_by_text(f"Slide {n - 1} of {n}")).to_have_count(
            1, timeout=BROWSER_DEADLINE_MS
        ),
    )
    assert_clean(page)


def test_the_heads_deck_measuring_slide_shows_its_chart_and_text_on_screen(sized_page, app_server):
    """Slide 4 of "Watch heads form" was the train page's findings, under its maps and in a closed
    expander at 1920x1080 (issue 37); it is now a view whose chart and text fit the screen."""
    page = sized_page((1920, 1080))
    page.goto(f"{app_server.url}/?deck=heads&slide=4")
    expect(page.get_by_text("Slide 4 of 6")).to_have_count(1, timeout=BROWSER_DEADLINE_MS)
    wait_idle(page, BROWSER_DEADLINE_MS)
    wait_settled(page, 1, BROWSER_DEADLINE_MS)
    assert_nothing_cut(page, 4)
    for what in ("Effect of switching off one head", "Switch off one head, run the text again"):
        expect(page.get_by_text(what, exact=False).first).to_be_in_viewport()
    page.screenshot(path=SHOTS / "deck-heads-04.png")
    assert_clean(page)


def test_build_save_reopen_and_share_a_deck(page, app_server, tmp_path):
    page.goto(f"{app_server.url}/learn?step=5")
    wait_settled(page, 1, BROWSER_DEADLINE_MS)
    click(
        page,
        page.get_by_role("button", name="Add this view to my deck"),
        lambda: expect(page.get_by_text("Your deck: 1 slide")).to_have_count(1),
    )
    title = page.get_by_label("Deck title")
    click(
        page,
        page.get_by_role("link", name="My deck: a lecture in one link"),
        lambda: expect(title).to_be_visible(),
    )
    share = page.get_by_text("?deck=1.")  # the share link carries the whole deck: it changes with it
    before = share.inner_text()
    title.fill("Monday")
    press(page, "Enter", lambda: expect(share).not_to_have_text(before), on=title)
    payload = SENTENCES["script+img+js-link"][:390]
    text = page.get_by_label("Your text for this slide")
    before = share.inner_text()
    text.fill(payload)

    def text_sent() -> None:
        expect(share).not_to_have_text(before)
        wait_idle(page)

    press(page, "Control+Enter", text_sent, on=text)
    expect(page.get_by_text("?deck=1.")).to_have_count(1)
    assert "mine=1." in page.url, page.url  # the page's own link carries the deck
    page.reload()  # a new session: the deck comes back from the link, nothing from the server
    expect(title).to_have_value("Monday", timeout=BROWSER_DEADLINE_MS)
    expect(text).to_have_value(payload)
    wait_idle(page)
    with page.expect_download() as info:
        click(page, page.get_by_role("button", name="Save as a file (JSON)"), lambda: None)
    saved = tmp_path / "deck.json"
    info.value.save_as(saved)
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["title"] == "Monday" and data["slides"][0]["params"] == {"step": "5"}
    assert data["slides"][0]["text"] == payload
    click(
        page,
        page.get_by_role("button", name="Delete"),
        lambda: expect(page.get_by_text("Your deck is empty")).to_have_count(1),
    )
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(saved)
    expect(page.get_by_text("Opened “Monday”: 1 slide.")).to_have_count(1, timeout=BROWSER_DEADLINE_MS)
    link = page.get_by_text("?deck=1.").inner_text()
    page.goto(link)
    expect(page.get_by_text("Monday · Slide 1 of 1")).to_have_count(1, timeout=BROWSER_DEADLINE_MS)
    wait_settled(page, 1, BROWSER_DEADLINE_MS)
    expect(page.get_by_text(payload[:40], exact=False).first).to_be_visible()  # as text
    assert_nothing_ran(page)
    assert_clean(page)
