"""What a walk-through as a teacher and a student found (issue 23 §3), in Chromium: at 1280x800 the
"Find the head" answer and its chart start on the first screen once a sentence is there (the
examples and the token toggles fold into one line); on a projector (1920x1080, presenter mode) a
link naming a pair opens on its most specific head with the one-line answer above the chart, and
no loading status is left above it. Screenshots: /tmp/shots/walkthrough-*.png."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import wait_charts, wait_settled

pytestmark = pytest.mark.slow
SHOTS = Path("/tmp/shots")
TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."


def test_the_answer_and_its_chart_reach_the_first_screen(sized_page, app_server):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page((1280, 800))
    page.goto(app_server.url + "/explore?example=trophy-large&view=focus")
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    wait_settled(page, 2)  # laid out: the answer and the chart where they stay
    page.screenshot(path=SHOTS / "walkthrough-find-the-head-1280x800.png")
    answer = page.get_by_text("Find the head:", exact=False).first.bounding_box()
    chart = page.locator(".js-plotly-plot").first.bounding_box()
    assert answer["y"] + answer["height"] < 800, answer
    assert chart["y"] < 800 - 100, chart  # at least its first rows
    # the examples are one click away, folded with the toggles
    expect(page.get_by_text("Examples · Trophy · too large", exact=False)).to_have_count(1)


def test_a_pair_link_on_a_projector_answers_above_the_chart(sized_page, app_server):
    page = sized_page((1920, 1080))
    query = urllib.parse.urlencode({"present": "1", "text": TROPHY, "focus": "it", "target": "trophy"})
    page.goto(f"{app_server.url}/explore?{query}")
    wait_charts(page, 1, BROWSER_DEADLINE_MS)
    wait_settled(page, 1)  # laid out: the answer and the chart where they stay
    page.screenshot(path=SHOTS / "walkthrough-pair-link-1920x1080.png")
    answer = page.get_by_text("links them most specifically", exact=False).first
    title = page.locator(".js-plotly-plot .gtitle").first
    assert answer.bounding_box()["y"] < title.bounding_box()["y"] < 1080
    head = answer.text_content().split(":")[0]  # "Layer 4, head 2"
    assert title.text_content().startswith(head)
    assert page.get_by_text("Loaded all-MiniLM", exact=False).count() == 0
