"""The teacher's own deck in AppTest (issue 31): "Add this view to my deck" on a page takes the view
as its link describes it; the /deck page reorders, deletes, retitles and annotates the slides; its
share link carries exactly that deck; "Present from slide 1" opens it with the bar; a deck too large
for a link says so instead of giving a link that breaks; a ready-made lecture copies in to adapt.
(Saving and opening the file: tests/e2e/test_deck_browser.py, which AppTest's missing file upload
cannot do; the file's format: tests/dashboard/test_decks.py.)"""

from __future__ import annotations

import random
import string

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.decks import mine
from dashboard.decks.model import MAX_LINK_CHARS, decode_link
from dashboard.widgets import md
from tests.dashboard.harness import ROOT, assert_no_crash, open_path
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")

APP = str(ROOT / "dashboard" / "app.py")
PAGES = ("learn", "explore", "compare", "atlas", "cost")
MARKUP = "<b>bold</b> **not bold** [a](javascript:1)"


def share_value(at: AppTest) -> str:
    links = [t.value for t in at.text if "?deck=" in t.value]
    assert len(links) == 1, [t.value for t in at.text]
    return links[0].split("?deck=", 1)[1].split("&", 1)[0]


def test_build_edit_share_and_present_a_deck(monkeypatch):
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"step": "5"})
    at.run()  # the learn page, step 5
    at.sidebar.button(key="deck_add").click().run()
    assert at.toast[0].value == "Added as slide 1 of your deck."
    at.query_params.clear()
    at.query_params.update({"step": "3", "seed": "7"})  # another view of learn
    at.sidebar.button(key="deck_add").click().run()
    assert "Your deck: 2 slides" in at.sidebar.caption[0].value
    open_path(monkeypatch, "deck")
    at.query_params.clear()
    at.run()
    assert_no_crash(at)
    first, second = at.session_state[mine.SLIDES_KEY]
    assert (first["params"], second["params"]) == ({"step": "5"}, {"step": "3", "seed": "7"})
    assert first["title"] == "Learn: attention from scratch (step 5)"
    # reorder, retitle, write text, title the deck
    at.button(key=f"deck_down_{first['id']}").click().run()
    at.text_input(key=f"deck_w_title_{second['id']}").input("Scores first").run()
    at.text_area(key=f"deck_w_text_{first['id']}").input(f"Rows sum to 1.\n{MARKUP}").run()
    at.text_input(key="deck_w_title").input("Monday's lecture").run()
    assert_no_crash(at)
    deck, note = decode_link(share_value(at), PAGES)
    assert note is None and deck.title == "Monday's lecture"
    assert [(s.title, s.query()) for s in deck.slides] == [
        ("Scores first", {"step": "3", "seed": "7"}),
        ("Learn: attention from scratch (step 5)", {"step": "5"}),
    ]
    assert deck.slides[1].text == f"Rows sum to 1.\n{MARKUP}"
    # present: the deck opens on slide 1, on its page, with the bar
    monkeypatch.undo()  # the app's own page switching from here
    at.button(key="deck_present_mine").click().run()
    assert_no_crash(at)
    assert at.markdown[0].value == "Monday's lecture · **Slide 1 of 2** · **Scores first**"
    assert at.query_params["step"] == "3" and at.query_params["seed"] == "7"
    at.button(key="deck_next").click().run()
    assert at.caption[0].value == "Rows sum to 1\\.  \n" + md(MARKUP)  # shown as text, line by line
    # back on the deck page: delete a slide
    at.button(key="deck_leave").click().run()
    open_path(monkeypatch, "deck")
    at.run()
    at.button(key=f"deck_delete_{second['id']}").click().run()
    assert [s["id"] for s in at.session_state[mine.SLIDES_KEY]] == [first["id"]]


def test_a_deck_too_large_for_a_link_says_so(monkeypatch):
    open_path(monkeypatch, "deck")
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    noise = random.Random(0)
    at.session_state[mine.SLIDES_KEY] = [
        {"id": 1000 + i, "page": "learn", "params": {"step": "2"}, "title": f"s{i}",
         "text": "".join(noise.choices(string.ascii_letters, k=400))}
        for i in range(40)
    ]  # fmt: skip
    at.run()
    assert_no_crash(at)
    assert not [t for t in at.text if "?deck=" in t.value]
    (warning,) = at.warning
    assert (
        warning.value.startswith("This deck is too large for a link:")
        and f"{MAX_LINK_CHARS:,}" in warning.value
    )
    assert at.button(key="deck_present_mine").disabled


def test_a_ready_made_lecture_copies_in_to_adapt(monkeypatch):
    open_path(monkeypatch, "deck")
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE).run()
    assert_no_crash(at)
    assert any("Your deck is empty" in i.value for i in at.info)
    at.button(key="deck_copy_pronoun").click().run()
    slides = at.session_state[mine.SLIDES_KEY]
    assert len(slides) == 6 and slides[0]["params"] == {"preset": "trophy"}
    assert at.text_input(key="deck_w_title").value == "Does the model resolve ‘it’?"
