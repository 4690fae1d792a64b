"""The explore page's similarity view: how alike the tokens' own vectors are after a chosen layer
(core/measures/similarity.py). A T × T heatmap of cosines with the head view's axes, and the focus word's row
as bars; then the focus word's nearest words in the built-in corpus (neighbours.py). `layer` counts
hidden states here: 0 = the embeddings, L = after the last layer, so the layer after which the
vectors are read is the one the attention maps call by the same number.

Letters: L layers, T tokens, W shown items (words when pieces are merged; hidden items left out).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.measures.analysis import TokenView
from core.measures.similarity import cosine_matrix, item_vectors
from core.models.result import AttentionResult
from dashboard.charts.explore import head_heatmap
from dashboard.charts.flow import restyle_heatmap, rollout_row_bars
from dashboard.charts.heatmap import number_repeats, row_outline
from dashboard.content import explore as text
from dashboard.presenter import presenting
from dashboard.views.explore import links
from dashboard.views.explore.neighbours import neighbours_ui
from dashboard.views.explore.widgets import present_part_ui, token_picker_ui
from dashboard.widgets import chart, chart_filename, csv_download, md

ROOM_HEIGHT = 800  # presenter mode's heatmap at 1920x1080, as the head view's


def _on_layer(key: str) -> None:
    st.session_state["explore_layer"] = int(st.session_state[key])


def layer_ui(n_layers: int) -> int:
    """ "After layer" 0..L (0 = the embeddings), bound to explore_layer."""
    ss = st.session_state
    key = f"explore_w_sim_layer_{n_layers}"
    ss[key] = min(int(ss.get("explore_layer", 0)), n_layers)  # follows the canonical layer
    return st.select_slider(
        text.SIM_LAYER_LABEL.format(n=n_layers),
        options=list(range(n_layers + 1)),
        format_func=lambda i: text.SIM_EMBEDDINGS if i == 0 else str(i),
        key=key,
        on_change=_on_layer,
        args=(key,),
    )


def similarity_matrix(result: AttentionResult, view: TokenView, layer: int) -> np.ndarray:
    """(W, W) cosine of the shown items' vectors after `layer` (0 = the embeddings)."""
    return cosine_matrix(item_vectors(result.hidden_states[layer], view.shown_spans))


def similarity_view(result: AttentionResult, view: TokenView, sig: str, tokens: tuple, controls=None) -> None:
    """The cosine heatmap after a chosen layer, and the focus word's row as bars."""
    ss = st.session_state
    with controls or st.container():
        layer = layer_ui(result.n_layers)
        item, chosen = token_picker_ui("focus", text.SIM_ROW_LABEL, view, result, sig, tokens[0])
    if chosen:  # the focus names a word, so it follows the sentence
        ss["explore_focus"] = links.ref_of(result, view.shown_spans[item][0])
    matrix = similarity_matrix(result, view, layer)  # (W, W)
    where = text.SIM_EMBEDDINGS_LONG if layer == 0 else text.SIM_AFTER.format(layer=layer)
    part = (
        present_part_ui(PART_KEY, text.SIM_PRESENT_LABEL, text.SIM_PRESENT_PARTS) if presenting() else None
    )  # a projector shows one part: no scrolling
    if part in (None, "map"):
        _map(matrix, view, item, layer, where)
    others = [i for i in range(view.n_items) if i != item]
    if others and part in (None, "map"):  # a one-word view has no row to draw
        _row_bars(matrix[item, others], [view.labels[i] for i in others], view.labels[item], where, layer)
    if part in (None, "corpus"):
        neighbours_ui(result, view, item, layer, where)


PART_KEY = "explore_sim_part"  # presenter mode: the sentence's map and row, or the corpus


def _map(matrix: np.ndarray, view: TokenView, item: int, layer: int, where: str) -> None:
    """The cosine heatmap, the focus word's row outlined, with its CSV."""
    notes = [text.MERGED_NOTE] if view.merged else []
    notes += [text.SIM_HIDDEN_NOTE] if view.renormalised else []
    title = " · ".join([text.SIM_TITLE.format(where=where), *notes])
    big = presenting()
    fig = head_heatmap(matrix, view.labels, title=title, height=ROOM_HEIGHT if big else None)
    restyle_heatmap(fig, matrix, text.SIM_BAR, "cosine", fixed=True, min_text=-1.0)
    fig.update_traces(hovertemplate="<b>%{y}</b> · <b>%{x}</b><br>cosine: %{z:.4f}<extra></extra>")
    fig.update_xaxes(title_text=text.SIM_AXIS).update_yaxes(title_text=text.SIM_AXIS)
    fig.add_shape(row_outline(item, view.n_items))
    if big:  # as the head view: larger labels and numbers on a projector
        fig.update_layout(font_size=18, title_font_size=24).update_traces(textfont_size=17)
        fig.update_xaxes(tickfont_size=17).update_yaxes(tickfont_size=17)
    name = chart_filename("explore", "similarity", f"layer{layer}")
    chart(fig, "explore_similarity_chart", name)
    labels = number_repeats(view.labels)
    csv_download(matrix, labels, labels, name, "explore_similarity_csv", corner="cosine")
    st.caption(text.SIM_CAPTION)


def _row_bars(cosines: np.ndarray, labels: list[str], token: str, where: str, layer: int) -> None:
    """The focus word's row as bars, the word itself left out."""
    row_title = text.SIM_ROW_TITLE.format(token=token, where=where)
    bars = rollout_row_bars(cosines, labels, title=row_title)
    bars.update_traces(hovertemplate="<b>%{x}</b><br>cosine: %{y:.4f}<extra></extra>")
    bars.update_xaxes(title_text=text.SIM_AXIS).update_yaxes(
        title_text=text.SIM_ROW_Y.format(token=token), range=None, autorange=True
    )
    if presenting():
        bars.update_layout(height=460, font_size=18, title_font_size=24).update_traces(textfont_size=17)
    chart(bars, "explore_similarity_row", chart_filename("explore", "similarity", f"layer{layer}", "row"))
    st.caption(text.SIM_ROW_CAPTION.format(token=md(token)))
