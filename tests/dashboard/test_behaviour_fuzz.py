"""Bad input through the explore page's ablation, attribution, similarity (with its corpus search)
and query/key views, with the shared harness (tests/dashboard/harness.py): every bad text meets the
views with every merge/hide toggle and each way of choosing the heads to switch off; and fuzzed
links carrying view, layer, head, ablate, focus and target. A
2-layer random BERT with the bundled model's tokenizer (make_tiny_bundled_tokenizer_bert) keeps each
case cheap, leave-one-out (one run per token) included."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.text import clean_input
from dashboard.content.ablation import PRESETS
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    assert_answered,
    assert_no_crash,
    bad_texts,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    named_examples,
    named_links,
    page_script,
    set_text,
)
from tests.dashboard.test_urls import url_value
from tests.deadline import APPTEST_DEADLINE

SCRIPT = page_script("explore")
GOOD_TEXT = "The trophy wouldn't fit in the suitcase because it was too large."
# the views that measure the model (ablation, attribution) or read the built-in corpus with it
VIEWS = ["ablation", "attribution", "similarity", "qk"]
# (view, how the heads are chosen, merge word pieces, hide [CLS]/[SEP])
SHOWN = st.tuples(st.sampled_from(VIEWS), st.sampled_from(list(PRESETS)), st.booleans(), st.booleans())


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("behaviour_fuzz_model")))


@pytest.fixture(scope="module")
def app(tiny_model) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": tiny_model, "view": "ablation"})
    at.run()
    assert_no_crash(at)
    assert n_charts(at) == 2 and not at.error, messages(at)
    return at


def _show(at: AppTest, shown: tuple) -> None:
    view, preset, merge, hide = shown
    at.segmented_control(key="explore_view").set_value(view)
    at.toggle(key="explore_merge").set_value(merge)
    at.toggle(key="explore_hide").set_value(hide)
    at.session_state["explore_ablate_preset"] = preset  # the control is drawn only in the ablation view
    at.session_state["explore_w_ablate_preset"] = preset


def test_ablation_and_attribution_survive_every_text(app):
    at = app
    tried = []

    @FUZZ
    @named_examples(lambda text: {"case": (text, ("ablation", "find", False, False))})
    @named_examples(lambda text: {"case": (text, ("ablation", "layer", True, True))})
    @named_examples(lambda text: {"case": (text, ("attribution", "find", False, True))})
    @named_examples(lambda text: {"case": (text, ("similarity", "find", True, False))})
    @named_examples(lambda text: {"case": (text, ("qk", "find", False, False))})
    @given(case=st.tuples(bad_texts(), SHOWN))
    def case(case):
        text, shown = case
        tried.append(shown[0])
        _show(at, shown)
        set_text(at, "text_area", "explore_text", text)
        at.run()
        assert_answered(at, shown)
        assert at.session_state["explore_text"] == clean_input(text, 10_000)[0]
        at.text_area(key="explore_text").set_value(GOOD_TEXT).run()
        assert_no_crash(at, ("good text after", shown))
        assert n_charts(at) >= 1 and not at.error, messages(at)

    case()
    print(f"{len(tried)} cases:", dict(Counter(tried)))  # shown with pytest -s
    assert len(tried) >= CASES


def heads_value() -> st.SearchStrategy:
    pair = st.tuples(st.integers(-3, 120), st.integers(-3, 120)).map(lambda p: f"{p[0]}.{p[1]}")
    listed = st.lists(st.one_of(pair, st.text(max_size=6)), max_size=8).map(",".join)
    return st.one_of(url_value(), listed)


def behaviour_links(tiny_model: str) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"model": st.just(tiny_model), "view": url_value(*VIEWS)},
        optional={
            "layer": url_value("0", "1", "2"),
            "head": url_value("0", "1"),
            "text": url_value(),
            "ablate": heads_value(),
            "focus": url_value(),
            "target": url_value(),
            "merge": url_value("1", "0"),
            "hide": url_value("1", "0"),
        },
    )


LINK_PARAMS = ["layer", "head", "text", "ablate", "focus", "target", "merge", "hide"]


def test_behaviour_links(tiny_model):
    tried = []

    @FUZZ
    @named_links(LINK_PARAMS, {"model": tiny_model}, view=VIEWS)
    @example({"model": tiny_model, "view": "ablation", "ablate": "99,-1"})
    @example({"model": tiny_model, "view": "ablation", "ablate": "1.1,0.0,1.1", "focus": "99999"})
    @example({"model": tiny_model, "view": "ablation", "ablate": ["0.1", "<b>0.0</b>"], "hide": "1"})
    @example({"model": tiny_model, "view": "attribution", "text": "\x00", "merge": "1", "hide": "1"})
    @example(
        {"model": tiny_model, "view": "similarity", "layer": "2", "focus": "<b>x</b>", "text": "<b>x</b> y"}
    )
    @example({"model": tiny_model, "view": "qk", "layer": "9", "head": "-1", "text": "\u202e\ufeff"})
    @given(params=behaviour_links(tiny_model))
    def case(params):
        tried.append(params.get("view"))
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(params)
        at.run()
        assert_answered(at, params)
        if n_charts(at) and at.session_state["explore_view"] == "ablation":  # only heads the model has
            for layer, head in at.session_state["explore_ablate"]:
                assert 0 <= layer < 2 and 0 <= head < 2, params

    case()
    print(f"{len(tried)} links:", len(tried))
    assert len(tried) >= CASES
