"""Bad input through the explore page on the shipped translator, with the shared harness
(tests/dashboard/harness.py): every kind of bad text typed into the sentence box while each of its
views is shown, then a grammar sentence that must draw again; and links whose view, kind, layer,
head, step and text carry every kind of bad value. A sentence the translator cannot read is said in
one line and the last sentence it could read stays on screen; the tiny translator makes a case cheap."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.text import clean_input
from dashboard.content import translator as text
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    assert_answered,
    assert_no_crash,
    bad_texts,
    messages,
    n_charts,
    named_examples,
    named_links,
    page_script,
    set_text,
)
from tests.dashboard.test_urls import url_value
from tests.deadline import APPTEST_DEADLINE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

SCRIPT = page_script("explore")
GOOD_TEXT = "the green horse finds the doors"
VIEWS = list(text.VIEWS)
LINK_PARAMS = ["view", "kind", "layer", "head", "step", "text"]


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": "translator"})
    at.run()
    assert_no_crash(at)
    assert n_charts(at) == 2 and not at.error, messages(at)
    return at


def _said_once(at: AppTest) -> None:
    """A sentence it cannot read: one warning line, and the last readable sentence still drawn."""
    warnings = [m for m in messages(at) if m.startswith("The translator cannot read this")]
    assert len(warnings) <= 1, warnings
    assert n_charts(at) >= 1, messages(at)


def test_the_translator_views_survive_every_text(app):
    at = app
    tried = []

    @FUZZ
    @named_examples(lambda value: {"case": (value, "head")})
    @named_examples(lambda value: {"case": (value, "generate")})
    @given(case=st.tuples(bad_texts(), st.sampled_from(VIEWS)))
    def case(case):
        typed, view = case
        tried.append(view)
        at.segmented_control(key="explore_view").set_value(view)
        set_text(at, "text_input", "explore_text", typed)
        at.run()
        assert_answered(at, view)
        _said_once(at)
        assert at.session_state["explore_text"] == clean_input(typed, 300)[0]
        at.text_input(key="explore_text").set_value(GOOD_TEXT).run()
        assert_no_crash(at, ("good text after", view))
        assert n_charts(at) >= 1 and not at.error and not at.warning, messages(at)

    case()
    print(f"{len(tried)} cases:", dict(Counter(tried)))  # shown with pytest -s
    assert len(tried) >= CASES


def translator_links() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"model": st.just("translator")},
        optional={
            "view": url_value(*VIEWS, "focus", "induction"),
            "kind": url_value("cross", "encoder", "decoder"),
            "layer": url_value("0", "1", "2"),
            "head": url_value("0", "3", "4"),
            "step": url_value("1", "5", "60"),
            "text": url_value(GOOD_TEXT, "the zebra"),
        },
    )


def test_translator_links():
    tried = []

    @FUZZ
    @named_links(LINK_PARAMS, {"model": "translator"})
    @given(params=translator_links())
    def case(params):
        tried.append(str(params.get("view"))[:12])
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(params)
        at.run()
        assert_answered(at, params)
        _said_once(at)
        ss = at.session_state
        assert ss["explore_view"] in text.VIEWS and ss["explore_tr_kind"] in text.KINDS, params
        assert 0 <= ss["explore_layer"] <= 1 and 0 <= ss["explore_head"] <= 3, params

    case()
    print(f"{len(tried)} links:", dict(Counter(tried)))
    assert len(tried) >= CASES
