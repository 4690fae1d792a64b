"""Decks (issue 31): the format (dashboard/decks/model.py) and every built-in deck walked in AppTest.

The format: a deck survives its file and its link unchanged; a tampered one (unknown page, bad
parameters, markup, a huge or malformed deck, a zip bomb) keeps the slides it can and says what it
left out in one message. The walk: `?deck=NAME` opens slide 1 in presenter mode on its page, Next
moves through every slide across pages, each slide opens its own view (its link parameters in the
URL, the page drawn with no error and at least one chart), the bar reads "Slide K of N", and the
pages' own step buttons leave the clicker keys to the deck. The decoder decks (gpt, heads) are
offered only while the shipped letter GPT-2 is there. No slide repeats the view before it.
"""

from __future__ import annotations

import base64
import json
import zlib

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.decks.model import (
    LINK_PREFIX,
    MAX_JSON_BYTES,
    MAX_LINK_CHARS,
    MAX_SLIDES,
    MAX_TEXT,
    Deck,
    Slide,
    builtin_deck,
    builtin_names,
    deck_from_json,
    deck_to_json,
    decode_link,
    encode_link,
    parse_deck,
)
from tests.dashboard.harness import ROOT, assert_no_crash, messages
from tests.deadline import APPTEST_DEADLINE

PAGES = ("learn", "explore", "compare", "atlas", "cost", "train", "circuit")
# every need a built-in deck may name (dashboard/decks/bar.py: CHECKS)
HAVE = ("decoder", "smollm2", "translator")
APP = str(ROOT / "dashboard" / "app.py")
MARKUP = "<script>alert(1)</script> **bold** [a](javascript:1) <b>x</b>"


def small_deck(text: str = "Look at the diagonal.") -> Deck:
    return Deck(
        "A lecture",
        (
            Slide("learn", (("step", "5"),), "Softmax", text),
            Slide("explore", (("view", "model"), ("text", "The cat sat.")), "Every head"),
        ),
    )


# ---- the format ------------------------------------------------------------------------------------


def test_a_deck_survives_its_file_and_its_link():
    deck = small_deck("Two lines:\nthe second one.")
    assert deck_from_json(deck_to_json(deck), PAGES) == (deck, None)
    value = encode_link(deck)
    assert value.startswith(LINK_PREFIX) and len(value) < 400
    assert decode_link(value, PAGES) == (deck, None)


def test_every_built_in_deck_is_clean_and_fits_a_link():
    assert {"attention", "pronoun", "cost", "gpt", "heads", "llm", "align"} <= set(builtin_names())
    for name in builtin_names():
        deck = builtin_deck(name, PAGES, HAVE)  # raises on any problem in our own file
        assert deck is not None and deck.slides, name
        assert len(encode_link(deck)) <= MAX_LINK_CHARS


def test_no_slide_of_a_built_in_deck_repeats_the_view_before_it():
    """A slide on the view of the slide before can only be about what that view leaves off screen,
    below the fold or folded away (issue 37: the heads deck's findings, under the train page's maps)."""
    for name in builtin_names():
        views = [(s.page, s.params) for s in builtin_deck(name, PAGES, HAVE).slides]
        repeats = [k + 2 for k in range(len(views) - 1) if views[k] == views[k + 1]]
        assert not repeats, (name, "slides repeating the view before them", repeats)


def test_a_deck_whose_page_or_need_is_missing_is_not_offered():
    assert builtin_deck("attention", ("learn", "explore")) is None  # its last slide is on /cost
    assert builtin_deck("zebra", PAGES) is None
    data = json.loads((ROOT / "dashboard/content/decks/cost.json").read_text(encoding="utf-8"))
    deck, _ = parse_deck({**data, "needs": ["decoder"]}, PAGES)
    assert deck.needs == ("decoder",)
    for name in ("gpt", "heads"):  # they show the shipped letter GPT-2
        assert builtin_deck(name, PAGES) is None and builtin_deck(name, PAGES, HAVE) is not None


def test_the_decoder_decks_are_offered_only_with_the_shipped_model(monkeypatch):
    from core.models import shipped
    from dashboard.decks import bar

    pages = dict.fromkeys(PAGES)
    assert {"gpt", "heads"} <= set(bar.offered(pages))
    monkeypatch.setattr(shipped, "shipped_model_dir", lambda: None)
    assert set(bar.offered(pages)) == {"attention", "pronoun", "cost", "llm", "align", "circuit"}
    from core.models import smollm2

    monkeypatch.setattr(smollm2, "packaged_gguf", lambda: None)  # and without SmolLM2's package
    assert set(bar.offered(pages)) == {"attention", "pronoun", "cost", "align"}
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params["deck"] = "gpt"
    at.run()
    assert_no_crash(at)
    note = " ".join(w.value for w in at.warning)
    assert "asks for a deck 'gpt' that is not here" in note and "`heads`" not in note, note


def test_the_translator_deck_is_offered_only_with_the_shipped_translator(monkeypatch, tmp_path):
    from dashboard.decks import bar

    pages = dict.fromkeys(PAGES)
    assert "align" in bar.offered(pages)
    monkeypatch.setattr(bar, "TRANSLATOR_DIR", tmp_path)  # a copy without models/translator
    assert "align" not in bar.offered(pages) and "heads" in bar.offered(pages)


def test_a_tampered_deck_keeps_what_it_can_and_says_what_it_left_out_once():
    data = {
        "title": "T" * 500,
        "slides": [
            {"page": "learn", "params": {"step": "3", "deck": "x", "Bad Name": "1", "ok": ["list"]}},
            {"page": "../../etc/passwd", "title": "gone"},
            {"page": "explore", "title": MARKUP, "text": "\x00\x1b[31m" + "line\n" * 9 + "x" * 900},
            "not a slide",
            {"page": "explore", "params": {"text": "y" * 5000}},
        ],
    }
    deck, note = parse_deck(data, PAGES)
    assert [s.page for s in deck.slides] == ["learn", "explore", "explore"]
    assert deck.slides[0].params == (("step", "3"),) and deck.slides[0].title == "Slide 1"
    assert deck.slides[1].title == MARKUP  # kept as text: the bar escapes it
    assert len(deck.slides[1].text) <= MAX_TEXT and deck.slides[1].text.count("\n") == 3
    assert "\x00" not in deck.slides[1].text and "\x1b" not in deck.slides[1].text
    assert len(deck.title) == 80
    assert note.startswith("Part of this deck could not be used as it was, and the rest works:")
    assert "“../../etc/passwd” that this app does not have" in note and "and 3 more" in note


@pytest.mark.parametrize(
    ("data", "start"),
    [
        (b"{not json", "This is not a deck file"),
        (b"[]", "This is not a deck"),
        (b"\xff\xfe\x00", "This is not a deck file"),
        (b"[" * 150_000 + b"]" * 150_000, "This deck is"),  # too deep, and too large
        (b"[" * 50_000 + b"]" * 50_000, "This is not a deck file"),  # too deep for json
        (json.dumps({"slides": [{"page": "zebra"}]}).encode(), "This deck has no slide this app can show."),
        (b" " * (MAX_JSON_BYTES + 1), "This deck is 200,001 bytes"),
    ],
)
def test_a_malformed_file_gets_one_message(data, start):
    deck, note = deck_from_json(data, PAGES)
    assert deck is None and note.startswith(start), note


def test_a_deck_past_the_slide_limit_keeps_the_first_ones():
    data = {"title": "Long", "slides": [{"page": "learn", "title": f"s{i}"} for i in range(MAX_SLIDES + 5)]}
    deck, note = parse_deck(data, PAGES)
    assert len(deck.slides) == MAX_SLIDES and f"it has {MAX_SLIDES + 5} slides" in note


def test_a_damaged_or_oversized_link_gets_one_message():
    value = encode_link(small_deck())
    for bad in (value[:-7], value[:20], LINK_PREFIX + "!!!", LINK_PREFIX, value[:-1] + "*"):
        deck, note = decode_link(bad, PAGES)
        assert deck is None and note, bad
    deck, note = decode_link(LINK_PREFIX + "A" * (MAX_LINK_CHARS + 10), PAGES)
    assert deck is None and "longer than the 8,000 characters" in note
    bomb = LINK_PREFIX + base64.urlsafe_b64encode(zlib.compress(b" " * 5_000_000, 9)).decode().rstrip("=")
    assert len(bomb) < MAX_LINK_CHARS
    deck, note = decode_link(bomb, PAGES)
    assert deck is None and "unpacks to more than the 200,000 bytes" in note


# ---- every built-in deck, walked ---------------------------------------------------------------------


def walk(name: str) -> list[AppTest]:
    """Open ?deck=NAME, then press Next until the last slide; check each slide on the way."""
    deck = builtin_deck(name, PAGES, HAVE)
    at = AppTest.from_file(APP, default_timeout=APPTEST_DEADLINE)
    at.query_params["deck"] = name
    at.run()
    for k, slide in enumerate(deck.slides, 1):
        context = (name, k, slide.title)
        assert_no_crash(at, context)
        assert not at.error, (context, messages(at))
        assert at.get("plotly_chart"), (context, "the slide's view drew no chart")
        assert at.markdown[0].value.startswith(f"{deck.title} · **Slide {k} of {len(deck.slides)}** · ")
        query = dict(at.query_params)
        assert (query["deck"], query["slide"], query["present"]) == (name, str(k), "1"), context
        # the view the slide names: each of its values in the link, or left out as the page's default
        assert all(query.get(p, v) == v for p, v in slide.params), (context, query)
        target = at.session_state["clicker_target"]  # the clicker moves slides, not the page's own steps
        assert (target["next"][0].__name__, target["next"][1]) == ("_go", (1, len(deck.slides))), context
        if k < len(deck.slides):
            at.button(key="deck_next").click().run()
    assert at.button(key="deck_next").disabled
    return at


@pytest.mark.slow
@pytest.mark.parametrize("name", ["attention", "pronoun", "cost", "gpt", "heads", "llm", "align", "circuit"])
def test_every_slide_of_a_built_in_deck_opens_its_view(name):
    at = walk(name)
    at.button(key="deck_prev").click().run()  # and back one
    assert "Slide" in at.markdown[0].value and at.query_params["slide"] == str(
        len(builtin_deck(name, PAGES, HAVE).slides) - 1
    )
    at.button(
        key="deck_leave"
    ).click().run()  # leave: the view stays, the bar goes, the clicker is the page's
    assert "deck" not in at.query_params and not any(b.key == "deck_next" for b in at.button)
    assert_no_crash(at)
