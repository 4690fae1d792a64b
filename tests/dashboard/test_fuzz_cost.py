"""Bad input on the cost page, fuzzed with the shared harness (tests/dashboard/harness.py): the
sentence box over one long session, then the link's parameters, one new session per case (a link is
read on a session's first run only). The page must raise nothing, never reach its last-resort
handler, keep the box's text as cleaned, say something when it cannot draw the sentence's parts,
and draw them again once a good sentence is back.

The page runs a 2-layer random BERT that carries the bundled model's tokenizer (the harness's
make_tiny_bundled_tokenizer_bert): every case sees the real tokenization at microseconds a pass.
Then the same links on a tiny random GPT-2 (tests/tiny_gpt2.py), where `n` (the KV cache's context)
and part 4 are read, in page and in presenter mode.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from dashboard.content.cost import DEFAULT_TEXT
from dashboard.state import clean_input
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    NAMED_LINK_VALUES,
    NAMED_TEXTS,
    assert_answered,
    assert_no_crash,
    bad_ints,
    bad_texts,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    named_examples,
    named_links,
    page_script,
    set_text,
    utf8_safe,
)
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

SCRIPT = page_script("cost")
ALL_CHARTS = 7  # the price, two maps, timing, layer changes, two sweeps


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("fuzz_cost_model"))


@pytest.fixture(scope="module")
def cost_app(tiny_model) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params["model"] = str(tiny_model)
    at.run()
    assert_no_crash(at)
    assert n_charts(at) == ALL_CHARTS and not at.error, messages(at)
    return at


def test_the_sentence_box_survives_every_input(cost_app):
    at = cost_app
    tried = []

    @FUZZ
    @named_examples(lambda text: {"value": text})
    @given(value=bad_texts())
    def case(value):
        tried.append(value)
        set_text(at, "text_area", "cost_text", value)
        at.run()
        assert_answered(at, "cost_text")
        kept = clean_input(value, 2_000)[0]
        assert at.session_state["cost_text"] == kept
        if n_charts(at) < ALL_CHARTS:
            assert messages(at), ("the page says why the sentence's parts are missing", value)
        assert n_charts(at) >= 1  # the price stays
        set_text(at, "text_area", "cost_text", DEFAULT_TEXT)
        at.run()
        assert n_charts(at) == ALL_CHARTS and not at.error, ("good input after", messages(at))

    case()
    assert len(tried) >= len(NAMED_TEXTS) + CASES, len(tried)


PARAMS = ["text", "layer", "head", "variant", "w", "s", "r", "m", "k", "part", "engine", "n"]
URL_VALUE = st.one_of(
    st.sampled_from(
        ["", "window", "bigbird", "linformer", "price", "model", "next", "numpy", "torch", "None"]
    ),
    bad_ints(-2, 10**6).map(str),
    bad_texts(max_size=30, longest=10_001),
).filter(utf8_safe)  # a URL carries UTF-8: lone surrogates arrive percent-decoded as U+FFFD at most


def test_link_parameters_survive_every_value(tiny_model):
    tried = []

    @FUZZ
    @named_links(PARAMS)
    @example({"w": "-1", "s": "0", "m": "1e308", "k": "18446744073709551616", "layer": "99", "head": "-1"})
    @example({"text": NAMED_TEXTS["markup"], "variant": "<b>x</b>", "part": "%{y}"})
    @example({"text": "", "variant": "strided", "s": "512"})
    @given(params=st.dictionaries(st.sampled_from(PARAMS), URL_VALUE, max_size=5))
    def case(params):
        tried.append(sorted(params))
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update({**params, "model": str(tiny_model)})
        at.run()
        assert_answered(at, params)
        assert n_charts(at) >= 1, ("the price is always drawn", params, messages(at))

    case()
    assert len(tried) >= len(NAMED_LINK_VALUES) + CASES, len(tried)


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory):
    # width 16 and 2 heads, as the tiny BERT above: the price curves are measured once
    return make_tiny_gpt2(tmp_path_factory.mktemp("fuzz_cost_gpt2"), n_layer=2, n_head=2, n_embd=16)


DECODER_PARAMS = ["n", "part", "text", "layer", "head", "variant", "engine"]


def test_decoder_link_parameters_survive_every_value(tiny_decoder):
    """A decoder reads `n` against its context and offers the parts it has; presenter mode comes
    from session state (the page is run alone), as the `present` entry says."""
    tried = []

    @FUZZ
    @named_links(DECODER_PARAMS, present=["1", ""])
    @example({"n": "-0", "part": "head", "present": "1"})
    @example({"n": "64", "part": "next", "present": "1"})
    @given(params=st.dictionaries(st.sampled_from([*DECODER_PARAMS, "present"]), URL_VALUE, max_size=4))
    def case(params):
        tried.append(sorted(params))
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        if params.get("present") == "1":
            at.session_state["present"] = True
        at.query_params.update({**params, "model": str(tiny_decoder)})
        at.run()
        assert_answered(at, params)
        assert n_charts(at) >= 1, ("the price or one more token is always drawn", params, messages(at))
        assert 1 <= at.session_state["cost_n"] <= 64, params

    case()
    assert len(tried) >= len(NAMED_LINK_VALUES) + CASES, len(tried)
