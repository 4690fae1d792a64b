"""Bad input to decks, through the shared harness (tests/dashboard/harness.py): tampered deck links
(`deck` and `slide` with every named kind of link value, built-in names, shared decks whose slides
name unknown pages, carry bad parameters or markup) open the app with no crash, at most one message
about the deck, and the page still drawn; any JSON at all parses into a deck that survives its own
link, or into one message; the bar's text is escaped markdown, and its only HTML is a fixed rule.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from dashboard.decks.bar import _BAR_CSS
from dashboard.decks.model import Deck, Slide, decode_link, encode_link, parse_deck
from dashboard.page_style import stylesheet
from dashboard.presenter import _PRESENTER_CSS
from dashboard.widgets import md
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    NAMED_LINK_VALUES,
    NAMED_TEXTS,
    ROOT,
    assert_no_crash,
    bad_ints,
    bad_texts,
    messages,
    named_links,
    utf8_safe,
)
from tests.deadline import APPTEST_DEADLINE
from tests.e2e.test_injection import PAYLOADS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ("learn", "explore", "compare", "atlas", "cost")
TEXT = st.one_of(bad_texts(max_size=30, longest=10_001), bad_ints(-2, 10**6).map(str)).filter(utf8_safe)
# slides on fast pages (learn, a short explore view) or on pages that do not exist
SLIDES = st.fixed_dictionaries(
    {"page": st.sampled_from(["learn", "explore", "zebra", "../learn", ""])},
    optional={
        "params": st.dictionaries(
            st.sampled_from(["step", "view", "layer", "head", "deck", "Bad"]), TEXT, max_size=3
        ),
        "title": TEXT,
        "text": TEXT,
    },
)
SHARED = st.builds(
    lambda slides, title: {"title": title, "slides": slides}, st.lists(SLIDES, max_size=3), TEXT
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def shared_value(data: dict) -> str:
    """The `deck` value of a link carrying `data`, tampered as a hand-edited link would be (no checks)."""
    deck = Deck(
        str(data.get("title", "")),
        tuple(
            Slide(s["page"], tuple(s.get("params", {}).items()), s.get("title", ""), s.get("text", ""))
            for s in data["slides"]
        ),
    )
    return encode_link(deck)


def open_app(params: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at, params)
    return at


def deck_messages(at: AppTest) -> list[str]:
    return [m for m in messages(at) if "deck" in m]


@given(data=JSON)
@example(data={"slides": [{"page": "learn", "title": PAYLOADS["script"], "text": NAMED_TEXTS["markup"]}]})
@FUZZ
def test_any_json_is_a_deck_that_survives_its_link_or_one_message(data):
    deck, note = parse_deck(data, PAGES)
    if deck is None:
        assert note and isinstance(note, str)
        return
    assert decode_link(encode_link(deck), PAGES) == (deck, None)


def test_tampered_deck_links_get_one_message_and_the_page_still_works():
    tried = []

    @FUZZ
    @named_links(["deck", "slide"])
    @example(params={"deck": "attention", "slide": "-1"})
    @example(params={"deck": "attention", "slide": "18446744073709551616"})
    @example(params={"deck": "attention", "slide": "1.5"})
    @example(params={"deck": "zebra", "slide": "2"})
    @example(params={"deck": shared_value({"title": "<b>x</b>", "slides": [{"page": "zebra"}]})})
    @example(
        params={"deck": shared_value({"title": "t", "slides": [{"page": "learn", "params": {"step": "99"}}]})}
    )
    @given(
        params=st.one_of(
            SHARED.map(lambda d: {"deck": shared_value(d)}),
            st.fixed_dictionaries({"deck": TEXT, "slide": TEXT}),
        )
    )
    def case(params):
        tried.append(params)
        at = open_app(params)
        assert len(deck_messages(at)) <= 1, (params, messages(at))
        assert at.get("plotly_chart") or messages(at), (params, "a blank page")

    case()
    assert len(tried) >= len(NAMED_LINK_VALUES) + CASES


def test_markup_in_a_deck_is_shown_as_text_and_the_bar_sends_only_fixed_html():
    """Proof for tests/e2e/test_injection.py's ESCAPED_SINKS entry of the bar's st.html."""
    payload = " ".join(PAYLOADS.values())
    value = shared_value(
        {"title": payload[:80], "slides": [{"page": "learn", "title": payload[:80], "text": payload[:400]}]}
    )
    at = open_app({"deck": value})
    deck, _ = decode_link(value, PAGES)
    slide = deck.slides[0]
    assert at.markdown[0].value == f"{md(deck.title)} · **Slide 1 of 1** · **{md(slide.title)}**"
    assert at.caption[0].value == md(slide.text)
    bodies = [element.proto.body.strip() for element in at.get("html")]
    assert _BAR_CSS.strip() in bodies
    assert set(bodies) <= {_BAR_CSS.strip(), _PRESENTER_CSS.strip(), stylesheet().strip()}, bodies
