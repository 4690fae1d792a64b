"""Injection in a real browser on the explore page's norms (head view) and rollout view: the payloads
of tests/e2e/test_injection.py, typed into the sentence box and carried by links (as the text, and
as the focus word the rollout row and the page's notes name), never run and never become markup; the
charts' labels are the sentence's WordPiece tokens, shown literally."""

from __future__ import annotations

import urllib.parse
from collections import Counter

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import send_text, wait_charts, wait_settled
from tests.e2e.test_injection import (  # noqa: F401 (wordpiece is a fixture)
    PAYLOADS,
    SENTENCES,
    TICKS_JS,
    assert_nothing_ran,
    strip_repeat,
    text_param,
    wordpiece,
)

# (query parameters besides the text, charts drawn, the axis of the last chart holding token labels)
VIEWS = (
    ({"measure": "norms"}, 1, ".ytick text"),
    ({"measure": "norms", "rescale": "1", "merge": "1"}, 1, ".ytick text"),
    ({"view": "rollout"}, 2, ".xtick text"),
    ({"view": "rollout", "merge": "1", "hide": "1"}, 2, ".xtick text"),
)
BAR_TITLE_JS = """() => {
  const plot = [...document.querySelectorAll(".js-plotly-plot")].at(-1);
  const title = plot && plot.querySelector(".gtitle");
  return title ? title.textContent : "";
}"""


def assert_shows(page, payload: str, axis: str, wordpiece, merged: bool) -> None:  # noqa: F811
    expect(page.locator("[data-testid='stTextArea'] textarea >> nth=0")).to_have_value(payload)
    assert text_param(page) == payload
    tokens = wordpiece(payload)
    expect(page.get_by_text(f"· {len(tokens)} tokens")).to_have_count(1)
    shown = [strip_repeat(label) for label in page.evaluate(TICKS_JS, axis)]
    assert shown
    if not merged:  # merged labels join pieces; unmerged, every label is one of the tokens
        assert not Counter(shown) - Counter(tokens), "labels that are not the sentence's tokens"


@pytest.mark.parametrize(("n", "group"), list(enumerate(SENTENCES)), ids=list(SENTENCES))
def test_flow_views_from_a_link(page, app_server, n, group, wordpiece):  # noqa: F811
    extra, charts, axis = VIEWS[n % len(VIEWS)]
    payload = SENTENCES[group]
    # the focus names a payload itself: not a word of the text, so the page says so, as text
    params = {"text": payload, **extra, "focus": PAYLOADS[next(iter(PAYLOADS))]}
    page.goto(f"{app_server.url}/explore?" + urllib.parse.urlencode(params))
    wait_charts(page, charts, BROWSER_DEADLINE_MS)
    assert_nothing_ran(page)
    assert_shows(page, payload, axis, wordpiece, merged="merge" in extra)


def test_flow_views_from_the_text_box(page, app_server, wordpiece):  # noqa: F811
    page.goto(f"{app_server.url}/explore?view=rollout&text=warm")
    wait_charts(page, 2, BROWSER_DEADLINE_MS)
    box = page.locator("[data-testid='stTextArea'] textarea >> nth=0")
    for payload in SENTENCES.values():
        send_text(page, box, payload)
        wait_settled(page, 2)  # the charts redrawn with the payload's tokens, not the last sentence's
        assert_nothing_ran(page)
        assert_shows(page, payload, ".xtick text", wordpiece, merged=False)
        # the row's title names its token literally (Plotly shows the escaped label as text)
        title = page.evaluate(BAR_TITLE_JS)
        assert title.startswith("Where “") and "traces back to" in title, title
