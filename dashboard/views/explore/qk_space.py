"""The explore page's query/key view (AttentionViz, Yeh et al. 2023): one head's queries and keys of
every corpus token in one plane (core/measures/qk_space.py, fitted once per head and cached with the corpus
vectors, dashboard/corpus_vectors.py), the sentence on the page placed in the same plane."""

from __future__ import annotations

import streamlit as st

from core.measures.qk_space import head_queries_keys
from core.models.errors import ModelError
from core.models.result import AttentionResult
from dashboard.charts.qk_space import qk_figure
from dashboard.content import qk_space as text
from dashboard.content.atlas import corpus
from dashboard.corpus_vectors import corpus_qk, head_weights
from dashboard.presenter import presenting
from dashboard.views.explore.corpus_work import corpus_may_start, read_corpus
from dashboard.views.explore.results import shown_source
from dashboard.views.explore.widgets import layer_head_ui
from dashboard.widgets import chart, chart_filename, error_md

ROOM_HEIGHT = 800  # presenter mode at 1920x1080, as the head view's


def qk_view(result: AttentionResult, controls=None) -> None:
    """The chosen head's plane; `controls`: where the pickers go (presenter mode: a closed panel)."""
    with controls or st.container():
        layer, head = layer_head_ui(result)
    model_key = shown_source()[0]
    try:
        if not corpus_may_start(model_key):
            return
        found = read_corpus(model_key)
        fitted, weights = corpus_qk(model_key, layer, head), head_weights(model_key, layer)
    except (ModelError, ValueError) as err:
        st.info(text.UNAVAILABLE.format(reason=error_md(err)))
        return
    own = fitted.space.place(*head_queries_keys(result.hidden_states[layer], weights, head))
    sentences = corpus()
    share = fitted.space.explained
    big = presenting()
    fig = qk_figure(
        (fitted.queries, fitted.keys),
        found.tokens,
        [sentences[n] for n in found.token_sentence],
        own,
        result.tokens,
        title=text.TITLE.format(layer=layer + 1, head=head + 1, n=len(found.tokens)),
        axis_titles=(text.AXIS.format(k=1, share=share[0]), text.AXIS.format(k=2, share=share[1])),
        names=text.NAMES,
        font=18 if big else 14,
        height=ROOM_HEIGHT if big else 640,
    )
    chart(fig, "explore_qk_chart", chart_filename("explore", "qk", f"layer{layer + 1}", f"head{head + 1}"))
    st.caption(
        text.CAPTION.format(sentences=len(sentences), d_k=weights.d_k, kept=share[0] + share[1])
        + " "
        + text.TOKENS_NOTE
    )
