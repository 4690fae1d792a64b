"""The generate view's sampling on a GPT-2 built here: top-k and top-p from the link give the engine's
own generation (core/models/sampling.py, checked against transformers in tests/core), the chart
draws what was kept (renormalised) and what was cut (said in words, not by colour alone), the sentence
under it counts them, greedy says sampling is off, the number box reruns with a new cut, and bad link
values get a note while the view still draws."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.content import sampling as text
from dashboard.views.explore.generate import TOP
from dashboard.views.explore.sampling import TOP_K_KEY, TOP_P_KEY
from tests.dashboard.harness import (
    assert_no_crash,
    chart_specs,
    messages,
    n_charts,
    page_script,
    plotly_array,
)
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_gpt2 import make_tiny_gpt2

pytestmark = pytest.mark.usefixtures("fast_apptest")

TEXT = "The trophy would not fit in the suitcase."


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("explore_sampling"), n_layer=1, n_head=2, n_embd=16)


def open_page(gpt2_dir, **params) -> AppTest:
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update(
        {"model": str(gpt2_dir), "text": TEXT, "view": "generate", "tokens": "3", **params}
    )
    at.run()
    assert_no_crash(at, params)
    return at


def said(at: AppTest) -> str:
    return " ".join(str(m.value) for m in at.markdown)


def test_the_links_cut_is_the_engines_and_the_chart_says_what_it_kept(gpt2_dir):
    from core.models.gpt2 import GPT2Numpy

    engine = GPT2Numpy.from_pretrained(gpt2_dir)
    at = open_page(gpt2_dir, temperature="1.2", top_k="8", top_p="0.5", seed="4", step="2")
    assert not at.error, messages(at)
    found = engine.generate(TEXT, 3, temperature=1.2, top_k=8, top_p=0.5, seed=4, top=TOP, kept_limit=TOP)
    step = found.steps[1]
    bars = chart_specs(at)[0]["data"][0]
    kept = np.array([p for _t, p in step.kept])
    np.testing.assert_allclose(plotly_array(bars["x"])[: step.n_kept], kept, atol=1e-9)  # renormalised
    cut = [p for _t, p in step.top[step.n_kept :]]
    np.testing.assert_allclose(plotly_array(bars["x"])[step.n_kept : TOP], cut, atol=1e-9)  # as before
    assert all(t.startswith("cut") for t in bars["text"][step.n_kept : TOP])  # said, not only grey
    assert "drawn #" in (bars["text"][step.rank] if step.rank < TOP else bars["text"][-1])
    sentence = text.KEPT.format(
        temperature=1.2, cuts="top-k 8 then top-p 0.5", n=step.n_kept, vocab=engine.unembedding.shape[0],
        mass=step.kept_mass,
    )  # fmt: skip
    assert sentence in said(at) and f"rank {step.rank + 1}" in said(at)
    assert (at.query_params["top_k"], at.query_params["top_p"]) == ("8", "0.5")
    # a new top-k in the number box: a new generation, the link follows
    at.number_input(key=TOP_K_KEY).set_value(1).run()
    assert_no_crash(at)
    assert at.query_params["top_k"] == "1" and "top-k 1 then top-p 0.5 kept 1 of" in said(at)


def test_greedy_says_sampling_is_off(gpt2_dir):
    at = open_page(gpt2_dir, top_k="5")
    assert not at.error and n_charts(at) == 2
    assert "sampling is off" in said(at)
    assert not [w for w in at.number_input if w.key == TOP_K_KEY]  # no cut to set without sampling


@pytest.mark.parametrize(
    ("params", "note", "value"),
    [
        ({"top_k": "-3"}, "`top_k` value -3 is below 0; using 0", (0, 1.0)),
        ({"top_p": "1.5"}, "top-p must be above 0 and at most 1", (0, 1.0)),
        ({"top_p": "0"}, "top-p must be above 0 and at most 1", (0, 1.0)),
        ({"top_p": "lots"}, "top-p must be above 0 and at most 1", (0, 1.0)),
        ({"top_p": "0.001"}, "using 0.01, the smallest", (0, 0.01)),
    ],
)
def test_a_bad_link_value_gets_a_note_and_the_view_still_draws(gpt2_dir, params, note, value):
    at = open_page(gpt2_dir, temperature="1", **params)
    assert not at.error and n_charts(at) == 2
    assert any(note in m for m in messages(at)), messages(at)
    assert (at.session_state[TOP_K_KEY], at.session_state[TOP_P_KEY]) == value
