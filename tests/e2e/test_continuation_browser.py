"""The source articles' question answered by SmolLM2, in Chromium (issue 36 §3): on explore's token
focus view the continuation panel shows what core.measures.choice computes from the same model
(the two sentences' verdicts, and whether the choice follows the meaning), at 1280x800 and in
presenter mode at 1920x1080, where the panel's text must fit the width.
Screenshots: /tmp/shots/continuation-*.png."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.measures.choice import choose
from core.models.architectures import load_engine
from dashboard.content import continuation as text
from dashboard.continuation import pair_statement
from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import wait_charts, wait_settled

pytestmark = pytest.mark.slow
SHOTS = Path("/tmp/shots")
PAGE = "/explore?model=smollm2&view=focus&example=trophy-large"


@pytest.fixture(scope="module")
def expected() -> str:
    """The pair's statement as the model computes it here, with the page's own formatting."""
    engine = load_engine("smollm2")
    large, small = text.PROBES[text.TROPHY_LARGE], text.PROBES[text.TROPHY_SMALL]
    answers = [choose(engine, probe.prefix, probe.options)[1] for probe in (large, small)]
    return pair_statement(*answers, ("trophy", "suitcase"), ("“too large”", "“too small”"))


def _plain(markdown: str) -> str:
    return markdown.replace("**", "")


# on a projector the focus view shows one part: the model's reading (the pronoun test's chart, then
# this panel); on a laptop every part, the head grid first
CASES = [((1280, 800), "", 2), ((1920, 1080), "&present=1&part=reading", 1)]


@pytest.mark.parametrize(("size", "present", "charts"), CASES)
def test_the_panel_says_what_the_model_computes(sized_page, app_server, expected, size, present, charts):
    SHOTS.mkdir(exist_ok=True)
    page = sized_page(size)
    page.goto(app_server.url + PAGE + present)
    wait_charts(page, charts, BROWSER_DEADLINE_MS)
    heading = page.get_by_role("heading", name=text.TITLE)
    expect(heading).to_have_count(1, timeout=BROWSER_DEADLINE_MS)
    said = page.get_by_text(_plain(expected), exact=False)
    expect(said).to_have_count(1, timeout=BROWSER_DEADLINE_MS)
    said.scroll_into_view_if_needed()
    wait_settled(page, charts)
    page.screenshot(path=SHOTS / f"continuation-{size[0]}x{size[1]}.png")
    box = said.bounding_box()
    assert box["x"] + box["width"] <= size[0], box  # the verdict wraps inside the page
    assert not page.js_errors
