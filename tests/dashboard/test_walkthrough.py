"""What a walk-through as a teacher and a student found (issue 23 §3), on the bundled model: a link
that names a focus and a target and no head opens on the head that links them most specifically
(recomputed here with core.measures.analysis.rank_heads_specific), with the one-line answer above the chart
in presenter mode; the model's loading status does not stay on the page once the model has loaded;
a link's bad layer and head are named with the model's own ranges, every one of them."""

from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from core.measures.analysis import rank_heads_specific, token_view
from core.models.bert import BertNumpy
from tests.dashboard.harness import ROOT, assert_no_crash, messages
from tests.deadline import APPTEST_DEADLINE

TROPHY = "The trophy wouldn't fit in the suitcase because it was too large."
SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard import presenter
from dashboard.views import explore
with st.sidebar:
    presenter.presenter_toggle_ui()
explore.render()
"""


def open_explore(**params: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    return at


def best_head(text: str, focus: str, target: str) -> tuple[int, int, float]:
    """The head linking focus to target most specifically, on merged words as the page shows them."""
    result = BertNumpy.from_pretrained().run(text)
    view = token_view(result.tokens, result.word_ids, result.special_mask, merge_words=True)
    shown = np.stack([view.matrix(result.attentions[layer]) for layer in range(result.n_layers)])
    special = [bool(result.special_mask[start]) for start, _ in view.shown_spans]
    a, b = view.labels.index(focus), view.labels.index(target)
    best = rank_heads_specific(shown, a, b, special)[0]
    return best.layer, best.head, best.weight


def test_a_link_naming_a_pair_opens_on_its_most_specific_head_with_the_answer_above():
    layer, head, weight = best_head(TROPHY, "it", "trophy")
    at = open_explore(present="1", text=TROPHY, focus="it", target="trophy")
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (layer, head)
    assert at.query_params["layer"] == str(layer) and at.query_params["head"] == str(head)
    answer = at.markdown[0].value  # the first thing in the page body, above the chart
    assert answer.startswith(f"**Layer {layer + 1}, head {head + 1}:** “it” gives “trophy” **{weight:.2f}**")
    assert "links them most specifically" in answer


def test_a_link_naming_a_head_keeps_it():
    at = open_explore(text=TROPHY, focus="it", target="trophy", layer="0", head="0")
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (0, 0)


def test_the_loading_status_is_gone_once_loaded():
    from dashboard import engines

    engines._LOADED.clear()  # this process loads the model again, as a fresh server would
    at = open_explore(present="1", text=TROPHY)
    assert not at.get("status") and not any("Loaded" in m for m in messages(at))


def test_a_bad_link_names_the_models_ranges_for_every_bad_value():
    at = open_explore(layer="99", head="-1")
    shown = " ".join(messages(at)).replace("\\", "")
    assert "`layer` value 99 is outside this model's layers: layers 1–6 on screen, 0–5 in links" in shown
    assert "`head` value -1 is outside this model's heads: heads 1–12 on screen, 0–11 in links" in shown
    assert (at.session_state["explore_layer"], at.session_state["explore_head"]) == (5, 0)
    assert not at.error
