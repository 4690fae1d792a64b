"""Bad input through the explore page's norms (head view) and rollout view, with the shared harness
(tests/dashboard/harness.py): every bad text meets both views with every merge/hide toggle and the
rescale toggle; and fuzzed links carrying measure, rescale, view=rollout and layer. A 2-layer random
BERT with the bundled model's tokenizer (make_tiny_bundled_tokenizer_bert) keeps each case cheap."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.text import clean_input
from dashboard.content.explore import MEASURES
from tests.dashboard.harness import (
    CASES,
    FUZZ,
    assert_answered,
    assert_no_crash,
    bad_texts,
    chart_specs,
    make_tiny_bundled_tokenizer_bert,
    messages,
    n_charts,
    named_examples,
    named_links,
    page_script,
    set_text,
)
from tests.dashboard.test_urls import as_read, last, url_value
from tests.deadline import APPTEST_DEADLINE

SCRIPT = page_script("explore")
GOOD_TEXT = "The trophy wouldn't fit in the suitcase because it was too large."
# (view, measure, rescale, merge word pieces, hide [CLS]/[SEP])
SHOWN = st.one_of(
    st.tuples(st.just("head"), st.just("norms"), st.booleans(), st.booleans(), st.booleans()),
    st.tuples(st.just("rollout"), st.just("weights"), st.just(False), st.booleans(), st.booleans()),
)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return str(make_tiny_bundled_tokenizer_bert(tmp_path_factory.mktemp("flow_fuzz_model")))


@pytest.fixture(scope="module")
def app(tiny_model) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params["model"] = tiny_model
    at.run()
    assert_no_crash(at)
    assert n_charts(at) >= 1 and not at.error, messages(at)
    return at


def _show(at: AppTest, shown: tuple) -> None:
    view, measure, rescale, merge, hide = shown
    at.segmented_control(key="explore_view").set_value(view)
    at.toggle(key="explore_merge").set_value(merge)
    at.toggle(key="explore_hide").set_value(hide)
    at.session_state["explore_measure"] = measure  # the switch is drawn only in the head view
    at.session_state["explore_rescale"] = rescale


def test_norms_and_rollout_survive_every_text(app):
    at = app
    tried = []

    @FUZZ
    @named_examples(lambda text: {"case": (text, ("head", "norms", False, False, False))})
    @named_examples(lambda text: {"case": (text, ("head", "norms", True, True, True))})
    @named_examples(lambda text: {"case": (text, ("rollout", "weights", False, True, False))})
    @named_examples(lambda text: {"case": (text, ("rollout", "weights", False, False, True))})
    @given(case=st.tuples(bad_texts(), SHOWN))
    def case(case):
        text, shown = case
        tried.append(shown[0])
        _show(at, shown)
        set_text(at, "text_area", "explore_text", text)
        at.run()
        assert_answered(at, shown)
        assert at.session_state["explore_text"] == clean_input(text, 10_000)[0]
        if n_charts(at) and shown[0] == "head":  # the chart says it shows norms
            assert "norms ‖α f(x)‖" in chart_specs(at)[0]["layout"]["title"]["text"]
        at.text_area(key="explore_text").set_value(GOOD_TEXT).run()
        assert_no_crash(at, ("good text after", shown))
        assert n_charts(at) >= (2 if shown[0] == "rollout" else 1) and not at.error, messages(at)

    case()
    print(f"{len(tried)} cases:", dict(Counter(tried)))  # shown with pytest -s
    assert len(tried) >= CASES


LINK_PARAMS = ["text", "measure", "rescale", "layer", "focus", "merge", "hide"]


def flow_links(tiny_model: str) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {"model": st.just(tiny_model)},
        optional={
            "text": url_value(),
            "view": url_value("rollout", "head"),
            "measure": url_value(*MEASURES),
            "rescale": url_value("1", "0"),
            "layer": url_value(),
            "focus": url_value(),
            "merge": url_value("1", "0"),
            "hide": url_value("1", "0"),
        },
    )


def test_flow_links(tiny_model):
    tried = []

    @FUZZ
    @named_links(LINK_PARAMS, {"model": tiny_model}, view=["rollout", "head"])
    @example({"model": tiny_model, "view": "rollout", "layer": "5", "focus": "99999"})
    @example({"model": tiny_model, "measure": "../../etc", "rescale": "yes"})
    @example({"model": tiny_model, "measure": ["norms", "weights", "norms"], "rescale": "1", "hide": "1"})
    @example({"model": tiny_model, "view": "rollout", "text": "\x00", "merge": "1", "hide": "1"})
    @given(params=flow_links(tiny_model))
    def case(params):
        tried.append(last(params.get("view", "head")) == "rollout")
        at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
        at.query_params.update(params)
        at.run()
        assert_answered(at, params)
        values = as_read(params)
        measure = values.get("measure", "")
        shown = " ".join(messages(at))
        if measure not in ("", *MEASURES):
            assert "`measure`" in shown, (measure, shown)
        expected = measure if measure in MEASURES else "weights"
        assert at.session_state["explore_measure"] == expected
        assert at.session_state["explore_rescale"] is (values.get("rescale") == "1")

    case()
    print(f"{len(tried)} links:", dict(Counter(tried)))
    assert len(tried) >= CASES
