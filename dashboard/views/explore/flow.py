"""The explore page's information-flow views: the head view's switch between weights α and norms
‖α f(x)‖ (Kobayashi et al. 2020, "Attention is Not Only a Weight"), and the rollout view (Abnar &
Zuidema 2020, "Quantifying Attention Flow in Transformers"). The math is in core/measures/flow.py; this
module picks, caches and draws.

The arrays are cached per input in st.cache_resource (shared read-only objects, as
dashboard/engines.py explains): one head's value-output vectors f_h(x) (T, D), and the rollout
stack (L, T, T). A rerun then costs one head's norms or one layer's rollout, transformed for the
toggles. The input is the one the page shows: session key "explore_result_key" (results.result_for).
Letters: L layers, H heads, T tokens, D hidden size, W shown tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import streamlit as st

from core.measures.analysis import TokenView
from core.measures.flow import attention_rollout, renormalise_rows, shown_norms, value_output_vectors
from core.models.errors import ModelError
from core.models.result import AttentionResult
from dashboard.charts.explore import head_heatmap
from dashboard.charts.flow import restyle_heatmap, rollout_row_bars
from dashboard.charts.heatmap import number_repeats, row_outline
from dashboard.content import explore as text
from dashboard.engines import compute_attention, load_engine
from dashboard.on_screen import added_tokens
from dashboard.presenter import presenting
from dashboard.views.explore import links
from dashboard.views.explore.results import shown_source
from dashboard.views.explore.widgets import step_ui, token_picker_ui
from dashboard.widgets import chart, chart_filename, csv_download, md

MEASURE_KEY, RESCALE_KEY = "explore_measure", "explore_rescale"
ROOM_HEIGHT = 800  # presenter mode's heatmap at 1920x1080, as the head view's


# ---- cached arrays ---------------------------------------------------------------------------------


@st.cache_resource(max_entries=16, show_spinner=False)
def value_vectors(
    model_key: str, engine: str, text: str, max_tokens: int, layer: int, head: int
) -> np.ndarray:
    """(T, D) f_h(x_j) of one head for the shown input, read-only: one head, not the layer's (H, T, D),
    which at 512 tokens of a 12-head base model would hold 19 MB per cache entry. Raises ModelError
    when the engine cannot read each head's weights (the torch engine on an unknown architecture)."""
    result = compute_attention(model_key, engine, text, max_tokens)
    weights = load_engine(model_key, engine).layer_weights(layer)
    if weights.w_v.shape[1] % weights.n_heads:
        raise ValueError(f"W_V {weights.w_v.shape} does not split into {weights.n_heads} heads")
    cols = slice(head * weights.d_k, (head + 1) * weights.d_k)  # head h's columns of W_V, rows of W_O
    one_head = SimpleNamespace(w_v=weights.w_v[:, cols], b_v=weights.b_v[cols], w_o=weights.w_o[cols])
    f = value_output_vectors(result.hidden_states[layer], one_head, 1)[0].astype(np.float32)
    f.setflags(write=False)
    return f


@st.cache_resource(max_entries=4, show_spinner=False)
def rollout_stack(model_key: str, engine: str, text: str, max_tokens: int) -> np.ndarray:
    """(L, T, T) rollout up to each layer for the shown input, read-only."""
    rolled = attention_rollout(compute_attention(model_key, engine, text, max_tokens).attentions)
    rolled.setflags(write=False)
    return rolled


# ---- the head view's measure -----------------------------------------------------------------------


def measure_ui() -> tuple[str, bool]:
    """The weights / norms switch and, for norms, the rescale toggle: (measure, rescale)."""
    cols = st.columns([3, 2], vertical_alignment="bottom")
    with cols[0]:
        measure = st.segmented_control(
            text.MEASURE_LABEL,
            list(text.MEASURES),
            format_func=lambda m: text.MEASURES[m],
            key=MEASURE_KEY,
            required=True,
            help=text.MEASURE_HELP,
        )
    measure = measure or "weights"
    with cols[1]:
        rescale = st.toggle(
            text.RESCALE_LABEL, key=RESCALE_KEY, help=text.RESCALE_HELP, disabled=measure != "norms"
        )
    return measure, bool(rescale)


@dataclass(frozen=True)
class Norms:
    """One head's norms as shown, with what the chart and the note say about them."""

    matrix: np.ndarray  # (W, W)
    title: str
    rescaled: bool
    merged: bool
    special_weight: float  # mean share of a row's weight on [CLS]/[SEP], before hiding
    special_norm: float  # mean share of a row's norm on [CLS]/[SEP], before hiding


def _title(layer: int, head: int, view: TokenView, rescale: bool) -> str:
    notes = [text.NORMS_TITLE_RESCALED if rescale else text.NORMS_TITLE]
    if view.merged:
        notes.append(text.MERGED_NOTE)
    if view.renormalised:
        notes.append(text.NORMS_HIDDEN_NOTE)
    return f"Layer {layer + 1}, head {head + 1} · " + " · ".join(notes)


def head_norms(
    result: AttentionResult, view: TokenView, layer: int, head: int, measure: tuple[str, bool]
) -> Norms | None:
    """The head's norms as the toggles show them, or None for weights (chosen, or norms unavailable:
    then the page says why)."""
    kind, rescale = measure
    if kind != "norms":
        return None
    try:
        f = value_vectors(*shown_source(), layer, head)  # (T, D)
    except (ModelError, ValueError) as err:  # an unknown layout; heads that do not split W_V, W_O
        st.info(text.NORMS_UNAVAILABLE.format(reason=md(str(err))))
        return None
    probs = result.attentions[layer, head]  # (T, T)
    matrix = shown_norms(probs, f, view.spans, view.keep, merged=view.merged, rescale=rescale)
    full = renormalise_rows(probs * np.linalg.norm(f.astype(np.float64), axis=-1))  # (T, T) row shares
    special = np.asarray(result.special_mask, dtype=bool)
    return Norms(
        matrix=matrix,
        title=_title(layer, head, view, rescale),
        rescaled=rescale,
        merged=view.merged,
        special_weight=float(probs[:, special].sum(-1).mean()),
        special_norm=float(full[:, special].sum(-1).mean()),
    )


def restyle(fig, norms: Norms | None) -> None:
    """The head chart's colour bar, scale and hover, for norms (weights: unchanged)."""
    if norms is not None:
        bar = text.NORMS_BAR_RESCALED if norms.rescaled else text.NORMS_BAR
        restyle_heatmap(
            fig, norms.matrix, bar, "norm share" if norms.rescaled else "norm", fixed=norms.rescaled
        )


def head_caption(norms: Norms | None, stats: str) -> str:
    """The head view's caption: how to read the map (weights, or norms), then `stats`, the head's
    weights in numbers (for norms: said to be the weights', for comparison)."""
    return (text.HEAD_CAPTION if norms is None else text.NORMS_CAPTION) + stats


def note_ui(norms: Norms | None) -> None:
    """Under the head chart, when norms are shown: why they differ from weights, measured here."""
    if norms is None:
        return
    share = text.NORMS_SPECIAL_SHARE.format(weight=norms.special_weight, norm=norms.special_norm)
    st.markdown(text.NORMS_NOTE + " " + share)
    if norms.merged:
        st.caption(text.NORMS_MERGE_NOTE)


# ---- rollout ---------------------------------------------------------------------------------------


def _on_layer(key: str) -> None:
    st.session_state["explore_layer"] = int(st.session_state[key])


def _layer_ui(n_layers: int) -> int:
    """ "Up to layer" (shown from 1), bound to explore_layer, so the head view and the keys share it."""
    ss = st.session_state
    key = f"explore_w_rollout_layer_{n_layers}"
    ss[key] = min(int(ss.get("explore_layer", n_layers - 1)), n_layers - 1)  # follows the canonical layer
    return st.select_slider(
        text.ROLLOUT_LAYER_LABEL.format(n=n_layers),
        options=list(range(n_layers)),
        format_func=lambda i: str(i + 1),
        key=key,
        on_change=_on_layer,
        args=(key,),
    )


def rollout_view(result: AttentionResult, view: TokenView, sig: str, tokens: tuple, controls=None) -> None:
    """Rollout up to a chosen layer as a heatmap (head view's axes), and one token's row as bars.
    `tokens`: the resolved (focus, target) token indices or None; `controls`: where pickers go."""
    ss = st.session_state
    with controls or st.container():
        layer = _layer_ui(result.n_layers)
        item, chosen = token_picker_ui("focus", text.ROLLOUT_ROW_LABEL, view, result, sig, tokens[0])
    if chosen:  # the focus names a word, as in the focus view, so it follows the sentence
        ss["explore_focus"] = links.ref_of(result, view.shown_spans[item][0])
    matrix = view.matrix(rollout_stack(*shown_source())[layer])  # (W, W)
    notes = [text.MERGED_NOTE] if view.merged else []
    notes += [text.HIDDEN_NOTE] if view.renormalised else []
    title = " · ".join([text.ROLLOUT_TITLE.format(layer=layer + 1), *notes])
    fig = head_heatmap(matrix, view.labels, title=title, height=ROOM_HEIGHT if presenting() else None)
    # rows sum to 1, as weights do: numbers from 0.05 as in the head view, the scale to the largest value
    restyle_heatmap(fig, matrix, text.ROLLOUT_BAR, "rollout", fixed=False, min_text=0.05)
    fig.update_xaxes(title_text=text.ROLLOUT_X).update_yaxes(
        title_text=text.ROLLOUT_Y.format(layer=layer + 1)
    )
    fig.add_shape(row_outline(item, view.n_items))
    if presenting():  # as the head view: larger labels and numbers on a projector
        fig.update_layout(font_size=18, title_font_size=24).update_traces(textfont_size=17)
        fig.update_xaxes(tickfont_size=17).update_yaxes(tickfont_size=17)
    name = chart_filename("explore", "rollout", f"layer{layer + 1}")
    chart(fig, "explore_rollout_chart", name)
    labels = number_repeats(view.labels)
    csv_download(matrix, labels, labels, name, "explore_rollout_csv", corner="from \\ to (input token)")
    step_ui(result, "layer")
    hidden = (
        text.ROLLOUT_CAPTION_HIDDEN.format(specials=md(added_tokens(result))) if view.renormalised else ""
    )
    st.caption(text.ROLLOUT_CAPTION.format(layer=layer + 1, hidden=hidden))
    st.markdown(text.ROLLOUT_ASSUMES)
    row_title = text.ROLLOUT_ROW_TITLE.format(token=view.labels[item], layer=layer + 1)
    bars = rollout_row_bars(matrix[item], view.labels, title=row_title, height=460 if presenting() else None)
    if presenting():
        bars.update_layout(font_size=18, title_font_size=24).update_traces(textfont_size=17)
        bars.update_xaxes(tickfont_size=17, title_font_size=18).update_yaxes(
            tickfont_size=17, title_font_size=18
        )
    chart(bars, "explore_rollout_row", chart_filename("explore", "rollout", f"layer{layer + 1}", "row"))
