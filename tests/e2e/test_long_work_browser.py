"""Nothing long starts by itself (issue 49), in a real browser on SmolLM2 (the shipped model, offline):
the ablation view of a 30-layer model waits for its button under one line that says how long it takes,
and after the press shows a bar that counts the heads ("… of 270 heads"), then its grid.

The server is this test's own, with the default threshold (3 s) whatever the suite sets for the other
tests; SmolLM2's 270 runs are estimated far above it on any machine."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import StreamlitServer, click, wait_idle, wait_settled
from tests.e2e.test_compare_patching_browser import CHART_TITLES_JS, wait_titles

pytestmark = pytest.mark.slow
SENTENCE = "The trophy would not fit in the suitcase because it was too big"
GRID = "Effect of switching off one head at a time"
URL = f"/explore?model=smollm2&view=ablation&text={quote(SENTENCE)}"


@pytest.fixture(scope="module")
def asking_server():
    with StreamlitServer(env={"ATTENTION_EXPLORER_ASK_AFTER": "0"}) as server:
        yield server


def test_a_long_view_waits_for_its_button_then_counts(sized_page, asking_server, screenshot_dir):
    page = sized_page((1280, 800))
    page.goto(asking_server.url + URL)
    button = page.get_by_role("button", name=re.compile(r"Switch off each head \(270 runs\)"))
    button.wait_for(timeout=BROWSER_DEADLINE_MS)
    wait_idle(page)
    ask = page.get_by_text(re.compile(r"of the 270 heads in turn takes about \d+ (s|min) on this machine"))
    expect(ask).to_be_visible()
    assert page.locator("[data-testid='stProgress']").count() == 0  # nothing runs before the press
    assert GRID not in page.evaluate(CHART_TITLES_JS)
    wait_settled(page)
    page.screenshot(path=screenshot_dir / "long-work-ask-1280x800.png")
    bar = page.locator("[data-testid='stProgress']").filter(has_text=re.compile(r"\d+ of 270 heads"))
    click(page, button, lambda: bar.wait_for(timeout=BROWSER_DEADLINE_MS))
    expect(bar).to_contain_text(re.compile(r"Switched off \d+ of 270 heads"))
    page.screenshot(path=screenshot_dir / "long-work-counting-1280x800.png")
    wait_titles(page, GRID)  # the grid, once the bar has gone
    expect(page.locator("[data-testid='stProgress']")).to_have_count(0)
