"""Bad input on the compare page, fuzzed with the shared harness (tests/dashboard/harness.py): both
sentence boxes, one long session of a determined user, and the link's parameters, one new session
per case (a link is read on a session's first run only).

Each box case: one box gets a generated value, the other keeps a good sentence; the page must raise
nothing, never reach its last-resort handler, keep the value as cleaned, and still draw the good
sentence's head (one bad sentence never hides the other). Then both boxes get the trophy pair again
and the page must draw both heads and their difference with no error.

The page runs a 2-layer random BERT that carries the bundled model's tokenizer (the harness's
make_tiny_bundled_tokenizer_bert): every case sees the real tokenization at microseconds a pass.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from dashboard.content.compare import PRESETS
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
    page_script,
    set_text,
    utf8_safe,
)
from tests.deadline import APPTEST_DEADLINE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_apptest")]

SCRIPT = page_script("compare")
GOOD = PRESETS["trophy"]
BOXES = {"text": "compare_text", "text2": "compare_text2"}
# the trophy pair: both maps and their difference, the pronoun test in each sentence, how far "it" moves,
# and patching's heads grid
MAPS_AND_LINES = 7


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("fuzz_compare_model"))


@pytest.fixture(scope="module")
def compare_app(tiny_model) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params["model"] = str(tiny_model)
    at.run()
    assert_no_crash(at)
    assert n_charts(at) == MAPS_AND_LINES and not at.error, messages(at)
    return at


def _good(at: AppTest) -> None:
    at.text_area(key="compare_text").set_value(GOOD.text)
    at.text_area(key="compare_text2").set_value(GOOD.text2)
    at.run()


box_cases = st.tuples(st.sampled_from(sorted(BOXES)), bad_texts())


def test_both_boxes_survive_every_input(compare_app):
    at = compare_app
    tried = []

    @FUZZ
    @named_examples(lambda text: {"case": ("text", text)})
    @named_examples(lambda text: {"case": ("text2", text)})
    @given(case=box_cases)
    def case(case):
        box, value = case
        tried.append(box)
        set_text(at, "text_area", BOXES[box], value)
        at.run()
        assert_answered(at, box)
        kept = clean_input(value, 10_000)[0]
        assert at.session_state[BOXES[box]] == kept
        shown = " ".join(messages(at))
        n = "1" if box == "text" else "2"
        if not kept.strip():
            assert f"Type sentence {n}" in shown, shown
        assert n_charts(at) >= 1, ("the other sentence is still drawn", box, shown)
        _good(at)
        assert_no_crash(at, "good input after " + box)
        assert n_charts(at) == MAPS_AND_LINES and not at.error, ("good input after", box, messages(at))

    case()
    print(f"{len(tried)} cases:", dict(Counter(tried)))  # shown with pytest -s
    assert len(tried) >= CASES, len(tried)


# ---- the link -------------------------------------------------------------------------------------

WORDS = ["", "it", "the#2", "it~2", "#", "~", "#0", "it#99", "own", "trophy", "bank", "side", "diff", "None"]
URL_VALUE = st.one_of(
    st.sampled_from(WORDS),
    bad_ints(-2, 1000).map(str),
    bad_texts(max_size=30, longest=10_001),
).filter(utf8_safe)  # a URL carries UTF-8: lone surrogates arrive percent-decoded as U+FFFD at most
MODELS = ["", "bundled", "../../etc", "owner/name", "x" * 301, "javascript:alert(1)"]
PARAMS = ["text", "text2", "layer", "head", "focus", "preset", "show", "engine"]
url_cases = st.dictionaries(
    st.sampled_from(PARAMS),
    URL_VALUE,
    max_size=5,
)


def _named_links() -> list[dict]:
    """One link per named kind of value, in every parameter at once."""
    return [dict.fromkeys(PARAMS, value) for value in NAMED_LINK_VALUES.values()]


def test_link_parameters_survive_every_value(tiny_model):
    tried = []

    @FUZZ
    @named_examples(lambda link: {"params": link, "model": None}, _named_links())
    @example(params={"layer": "99", "head": "-1", "focus": "zebra", "preset": "<b>", "show": "x"}, model=None)
    @example(params={"text": "", "text2": "", "preset": "own"}, model=None)
    @example(
        params={"text": NAMED_TEXTS["one_word_10k"], "text2": NAMED_TEXTS["markup"], "focus": "%{y}"},
        model=None,
    )
    @example(
        params={"layer": "1e308", "head": "18446744073709551616", "engine": "torch\x00"}, model="../../etc"
    )
    @given(params=url_cases, model=st.sampled_from([None] * 4 + MODELS))  # None: the tiny model
    def case(params, model):
        tried.append(sorted(params))
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update({**params, "model": str(tiny_model) if model is None else model})
        at.run()
        assert_answered(at, params)

    case()
    assert len(tried) >= len(NAMED_LINK_VALUES) + CASES, len(tried)
