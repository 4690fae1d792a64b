"""The teacher's deck in the /deck page's own link, and Leave (issue 37, points 6 and 7), in AppTest.

A new session (a reload, a bookmark) at /deck?mine=VALUE has the deck the link carries; the link
follows every change; the back button's older link brings that deck back, unless the session has
slides the link lacks; a damaged link says so once; a deck too large for a link leaves it out and
says a reload would empty it. Leave puts presenter mode back as it was before the deck: off after a
deck opened by a link, on when the teacher had it on. (The reload in a real browser:
tests/e2e/test_deck_browser.py.)"""

from __future__ import annotations

import random
import string

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.decks import mine
from dashboard.decks.model import MAX_LINK_CHARS, decode_link, encode_link
from dashboard.views.deck.page import LINK_PARAM
from tests.dashboard.harness import ROOT, assert_no_crash, open_path
from tests.dashboard.test_decks import small_deck
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ("learn", "explore", "compare", "atlas", "cost", "train")


def deck_page(monkeypatch, link: str | None = None) -> AppTest:
    """A new session at /deck, as a reload or a bookmark opens it (`link`: the `mine` value)."""
    open_path(monkeypatch, "deck")
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    if link is not None:
        at.query_params[LINK_PARAM] = link
    return at.run()


def held(at: AppTest) -> list[tuple[str, str]]:
    return [(s["title"], s["text"]) for s in at.session_state[mine.SLIDES_KEY]]


def test_the_deck_survives_a_reload_through_the_page_link(monkeypatch):
    at = deck_page(monkeypatch)
    assert LINK_PARAM not in at.query_params  # no deck, no link
    at.button(key="deck_copy_pronoun").click().run()
    first_id = at.session_state[mine.SLIDES_KEY][0]["id"]
    at.text_area(key=f"deck_w_text_{first_id}").input("Ask the class first.").run()
    at.text_input(key="deck_w_title").input("Tuesday").run()
    assert_no_crash(at)
    value = at.query_params[LINK_PARAM]
    deck, note = decode_link(value, PAGES)
    assert note is None and deck.title == "Tuesday" and deck.slides[0].text == "Ask the class first."
    reloaded = deck_page(monkeypatch, value)
    assert_no_crash(reloaded)
    assert held(reloaded) == held(at) and len(held(at)) == 6
    assert reloaded.text_input(key="deck_w_title").value == "Tuesday"
    assert reloaded.query_params[LINK_PARAM] == value and not reloaded.warning


def test_the_back_button_brings_the_older_deck_unless_the_session_has_newer_slides(monkeypatch):
    older = encode_link(small_deck("Older text."))
    at = deck_page(monkeypatch, older)
    assert held(at)[0] == ("Softmax", "Older text.")
    first_id = at.session_state[mine.SLIDES_KEY][0]["id"]
    at.text_area(key=f"deck_w_text_{first_id}").input("Newer text.").run()
    assert at.query_params[LINK_PARAM] != older
    at.query_params[LINK_PARAM] = older  # back: the browser shows the older link
    at.run()
    assert held(at)[0] == ("Softmax", "Older text.") and at.query_params[LINK_PARAM] == older
    slides = at.session_state[mine.SLIDES_KEY]  # a view added on another page: a slide the link lacks
    at.session_state[mine.SLIDES_KEY] = [*slides, {**slides[0], "id": 9999, "title": "Added"}]
    at.run()
    assert len(held(at)) == 3 and len(decode_link(at.query_params[LINK_PARAM], PAGES)[0].slides) == 3


def test_a_damaged_page_link_says_so_once_and_the_page_works(monkeypatch):
    value = encode_link(small_deck())
    at = deck_page(monkeypatch, value[:-9])
    assert_no_crash(at)
    (warning,) = at.warning
    assert warning.value.startswith("This link") and "damaged" in warning.value
    assert not at.session_state[mine.SLIDES_KEY] and LINK_PARAM not in at.query_params
    at.run()
    assert not at.warning  # said once


def test_a_deck_too_large_for_the_link_is_left_out_of_it_and_the_page_says_so(monkeypatch):
    open_path(monkeypatch, "deck")
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params[LINK_PARAM] = encode_link(small_deck())  # an older, small deck in the link
    noise = random.Random(1)
    at.session_state[mine.SLIDES_KEY] = [
        {"id": 2000 + i, "page": "learn", "params": {"step": "2"}, "title": f"s{i}",
         "text": "".join(noise.choices(string.ascii_letters, k=400))}
        for i in range(40)
    ]  # fmt: skip
    at.run()
    assert_no_crash(at)
    assert LINK_PARAM not in at.query_params and len(held(at)) == 40
    (warning,) = at.warning
    assert "A reload would empty it" in warning.value and f"{MAX_LINK_CHARS:,}" in warning.value


def test_leave_turns_presenter_mode_off_after_a_deck_opened_by_a_link():
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params["deck"] = "attention"
    at.run()
    assert at.session_state["present"] and at.query_params["present"] == "1"
    at.button(key="deck_next").click().run()
    at.button(key="deck_leave").click().run()
    assert_no_crash(at)
    assert not at.session_state["present"] and "present" not in at.query_params
    assert not at.sidebar.toggle(key="present").value
    assert not any("font-size: 1.35rem" in h.proto.body for h in at.get("html"))  # the large type is gone


def test_leave_keeps_presenter_mode_on_when_it_was_on_before_the_deck(monkeypatch):
    at = deck_page(monkeypatch)
    at.sidebar.toggle(key="present").set_value(True).run()
    monkeypatch.undo()  # the app's own page switching from here
    at.button(key="deck_present_attention").click().run()
    assert at.markdown[0].value.startswith("Attention in twenty minutes · **Slide 1 of")
    at.button(key="deck_leave").click().run()
    assert_no_crash(at)
    assert at.session_state["present"] and at.query_params["present"] == "1"
