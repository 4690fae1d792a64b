"""The explore page's answers in a real browser: a pair chosen on one sentence follows its words into
a sentence typed afterwards (not its positions), and "find the head" on "The bank approved the loan"
shows the top head's specific score and flags the head that looks at "loan" from every row."""

from __future__ import annotations

import urllib.parse

from playwright.sync_api import expect

from tests.deadline import BROWSER_DEADLINE_MS
from tests.e2e.harness import click, send_text
from tests.e2e.test_pages_browser import assert_clean, wait_all_drawn

NEW_TROPHY = "The trophy didn't fit into the brown suitcase because it was too big."


def query(page) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)


def type_sentence(page, text: str) -> None:
    box = page.get_by_label("Sentence", exact=False).first
    send_text(page, box, text)


def picker_text(page, label: str) -> str:
    """A selectbox's label and the option it shows (held in its input's value)."""
    box = page.locator("[data-testid='stSelectbox']").filter(has_text=label).first
    return box.evaluate(
        "(e) => e.textContent + ' | ' + [...e.querySelectorAll('input')].map((i) => i.value).join(' | ')"
    )


def head_shapes(page) -> int:
    return page.evaluate("() => (document.querySelector('.js-plotly-plot')._fullLayout.shapes || []).length")


def test_a_typed_sentence_keeps_the_chosen_words(page, app_server, screenshot_dir):
    page.goto(f"{app_server.url}/explore?view=focus")  # trophy, too large: "it" → "trophy"
    wait_all_drawn(page, 2)
    type_sentence(page, NEW_TROPHY)
    wait_all_drawn(page, 2)
    page.get_by_text("The new text still has").wait_for(timeout=BROWSER_DEADLINE_MS)
    assert query(page)["focus"] == ["it"] and query(page)["target"] == ["trophy"]
    assert picker_text(page, "Focus token").endswith("| it  (#13)")  # not "because" (#12)
    assert picker_text(page, "link it to").endswith("| trophy  (#3)")
    headline = page.locator("p").filter(has_text="Find the head:").first.inner_text()
    assert "“it”" in headline and "“trophy”" in headline and "because" not in headline
    assert_clean(page)
    # words the next sentence lacks: back to the defaults, said, and no pair marked in the head view
    type_sentence(page, "A cat sat on a mat.")
    page.get_by_text("The new text has no").first.wait_for(timeout=BROWSER_DEADLINE_MS)
    assert "focus" not in query(page) and "target" not in query(page)
    click(
        page,
        page.get_by_role("radio", name="Head", exact=True),
        lambda: page.wait_for_function("() => new URLSearchParams(location.search).get('view') === 'head'"),
    )
    wait_all_drawn(page, 1)
    assert head_shapes(page) == 0
    assert_clean(page)


def test_find_the_head_on_bank_and_loan(page, app_server, screenshot_dir):
    page.goto(f"{app_server.url}/explore?example=bank-loan&view=focus")
    wait_all_drawn(page, 2)
    headline = page.locator("p").filter(has_text="Find the head:").first.inner_text()
    assert "the other words give it" in headline and "specific score is +" in headline
    table = page.locator("table").filter(has_text="specific").first.inner_text()
    rows = [row for row in table.splitlines() if "layer" in row]
    assert rows and "+" in rows[0]  # the top head's specific score is shown
    flagged = [row for row in rows if "from everywhere" in row]
    assert flagged and any("strongest raw weight" in row for row in flagged)
    expect(page.get_by_text("looks at “loan” from everywhere (").first).to_be_attached()
    assert_clean(page)


def test_a_typed_sentence_keeps_the_answer_above_the_fold(sized_page, app_server):
    """At 1280x800, after a sentence without the example's words, the example's focus and target
    take one line and the focus view's answer stays on the first screen (issue 48: a box for each
    word pushed it below the fold)."""
    page = sized_page((1280, 800))
    page.goto(f"{app_server.url}/explore?view=focus")
    wait_all_drawn(page, 2)
    type_sentence(page, "A cat sat on a mat.")
    page.get_by_text("The new text has no").first.wait_for(timeout=BROWSER_DEADLINE_MS)
    wait_all_drawn(page, 2)
    assert page.locator("[data-testid='stAlert']").filter(has_text="new text").count() == 0
    line = page.get_by_text("The new text has no").first  # one line of text, at the browser's own line height
    tall, line_height = line.evaluate(
        "(e) => [e.getBoundingClientRect().height, parseFloat(getComputedStyle(e).lineHeight)]"
    )
    assert tall < 1.5 * line_height, (tall, line_height)
    headline = page.locator("p").filter(has_text="Find the head:").first
    box = headline.bounding_box()
    height = page.viewport_size["height"]
    scrolled = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollTop || window.scrollY"
    )
    assert box is not None and box["y"] + box["height"] <= height, (box, height, scrolled)
    assert_clean(page)
