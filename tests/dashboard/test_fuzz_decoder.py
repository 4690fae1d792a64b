"""Bad input through the explore page's decoder views, with the shared harness
(tests/dashboard/harness.py): every kind of bad text typed into the sentence box while each decoder
view is shown, then a good text that must draw again; and links whose decoder parameters (tokens,
temperature, seed, step, length, top) and text, layer and head carry every kind of bad value. A
2-layer random GPT-2 built here keeps each case cheap, generation and the induction test included."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.text import clean_input
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
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

SCRIPT = page_script("explore")
GOOD_TEXT = "The trophy would not fit in the suitcase because it was too large."
VIEWS = ["nextword", "generate", "lens", "sinks", "induction", "ablation", "attribution", "head"]
LINK_PARAMS = ["tokens", "temperature", "seed", "step", "length", "top", "text", "layer", "head"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("fuzz_decoder_model")
    return str(make_tiny_gpt2(directory, n_layer=2, n_head=2, n_embd=16, n_positions=64))


@pytest.fixture(scope="module")
def app(tiny_model) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": tiny_model, "view": "generate", "tokens": "3", "length": "8"})
    at.run()
    assert_no_crash(at)
    assert n_charts(at) == 2 and not at.error, messages(at)
    return at


def test_the_decoder_views_survive_every_text(app):
    at = app
    tried = []

    @FUZZ
    @named_examples(lambda text: {"case": (text, "generate")})
    @named_examples(lambda text: {"case": (text, "lens")})
    @named_examples(lambda text: {"case": (text, "nextword")})
    @given(case=st.tuples(bad_texts(), st.sampled_from(VIEWS)))
    def case(case):
        text, view = case
        tried.append(view)
        at.segmented_control(key="explore_view").set_value(view)
        set_text(at, "text_area", "explore_text", text)
        at.run()
        assert_answered(at, view)
        assert at.session_state["explore_text"] == clean_input(text, 10_000)[0]
        at.text_area(key="explore_text").set_value(GOOD_TEXT).run()
        assert_no_crash(at, ("good text after", view))
        assert n_charts(at) >= 1 and not at.error, messages(at)

    case()
    print(f"{len(tried)} cases:", dict(Counter(tried)))  # shown with pytest -s
    assert len(tried) >= CASES


def decoder_links(tiny_model: str) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"model": st.just(tiny_model), "view": url_value(*VIEWS)},
        optional={
            "tokens": url_value("1", "50", "0", "51"),
            "temperature": url_value("0", "0.1", "1", "2", "-1", "inf", "nan", "1e308"),
            "seed": url_value("0", "7"),
            "step": url_value("1", "3", "60"),
            "length": url_value("2", "31", "32", "33"),
            "top": url_value("1", "4", "11"),
            "text": url_value(),
            "layer": url_value("0", "1"),
            "head": url_value("0", "1"),
        },
    )


def test_decoder_links(tiny_model):
    tried = []

    @FUZZ
    @named_links(LINK_PARAMS, {"model": tiny_model}, view=VIEWS)
    @example({"model": tiny_model, "view": "generate", "tokens": "50", "temperature": "1e-300", "step": "50"})
    @example({"model": tiny_model, "view": "induction", "length": "9999", "top": "-1", "seed": "-5"})
    @example({"model": tiny_model, "view": "generate", "text": "x" * 5000, "tokens": "50"})
    @given(params=decoder_links(tiny_model))
    def case(params):
        tried.append(str(params.get("view"))[:12])  # a repeated parameter is a list
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(params)
        at.run()
        assert_answered(at, params)
        ss = at.session_state
        assert 1 <= ss["explore_gen_tokens"] <= 50, params
        assert ss["explore_gen_temperature"] is None or 0.1 <= ss["explore_gen_temperature"] <= 2.0, params

    case()
    print(f"{len(tried)} links:", dict(Counter(tried)))
    assert len(tried) >= CASES
