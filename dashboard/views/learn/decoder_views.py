"""The decoder's stops that BERT's seven steps do not have, drawn from a GPT-2 block's LayerTrace
(compute.decoder_trace): LayerNorm first (after step 1), the causal mask (between steps 4 and 5)
and the MLP with GELU's tanh form (after step 7). Each checks whether its view is on screen.

Every matrix is the engine's own array; the captions' figures are computed from them. Chart keys:
"ln_x", "ln1"; "mask_scaled", "masked", "mask_probs"; "ln2", "ffn", "layer_output", "gelu".
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.lesson.trace import LayerTrace
from dashboard.charts.learn import short_labels
from dashboard.content.learn import COL_TITLE, ROW_TITLE
from dashboard.content.learn_decoder import (
    LN_CAPTION,
    LN_CHARTS,
    LN_FORMULA,
    LN_TEXT,
    LN_TITLE,
    MASK_CAPTION,
    MASK_CHARTS,
    MASK_FORMULA,
    MASK_TEXT,
    MASK_TITLE,
    MLP_AFTER,
    MLP_AFTER_LAST,
    MLP_CHARTS,
    MLP_FORMULA,
    MLP_TEXT,
    MLP_TITLE,
)
from dashboard.presenter import presenting
from dashboard.views.learn import compute
from dashboard.views.learn.sources import SHOWN_DIMS
from dashboard.views.learn.stop_parts import NARROW, first_dims, shape_text, stop_intro, stop_matrix
from dashboard.views.learn.widgets import shown
from dashboard.widgets import chart, chart_filename, csv_download

ATTENTION_CORNER = "query (from) \\ key (to)"
# ---- LayerNorm first -------------------------------------------------------------------------------


def ln_view(tr: LayerTrace) -> None:
    if not shown("ln"):
        return
    x, h = tr["x"], tr["ln1"]
    stop_intro(
        "ln",
        f"{LN_TITLE}",
        LN_FORMULA,
        LN_TEXT,
        [shape_text("X", x.shape), shape_text("H", h.shape), f"ε = {tr.ln_eps:g}"],
    )
    rows = short_labels(tr.query_tokens)
    for col, key, title, values in zip(st.columns(2), ("ln_x", "ln1"), LN_CHARTS, (x, h), strict=True):
        shown_values, dims, dim_title = first_dims(values, SHOWN_DIMS)
        with col:
            stop_matrix("ln", key, title, shown_values, rows, dims, share=0.5, col_title=dim_title)
    x_sd, h_sd = x.std(axis=-1), h.std(axis=-1)
    st.caption(
        LN_CAPTION.format(
            d_model=x.shape[-1],
            x_lo=x_sd.min(),
            x_hi=x_sd.max(),
            eps=tr.ln_eps,
            h_lo=h_sd.min(),
            h_hi=h_sd.max(),
        )
    )


# ---- the causal mask -------------------------------------------------------------------------------


def mask_view(tr: LayerTrace, head: int) -> None:
    """The scaled scores, the same with the upper triangle at −∞ (printed so, never as a number),
    and the softmax with its exact zeros: one head, side by side."""
    if not shown("mask"):
        return
    allowed = tr.mask  # (T, T) bool, True = may attend: the diagonal and below
    t = allowed.shape[0]
    of_head = f" (head {head + 1} of {tr.n_heads})" if tr.n_heads > 1 else ""
    shapes = [
        shape_text("S'", (t, t)),
        shape_text("mask", (t, t)),
        shape_text("A", (t, t)),
        "each row sums to 1",
    ]
    stop_intro("mask", MASK_TITLE + of_head, MASK_FORMULA, MASK_TEXT, shapes)
    rows, cols = short_labels(tr.query_tokens), short_labels(tr.key_tokens)
    scaled, masked, probs = tr["scaled"][head], tr["masked"][head], tr["probs"][head]
    # two decimals: the three matrices print their numbers on a projector
    # no colour bars: the cells get the room (each matrix has its own scale, the caption says so)
    axes = {"col_title": COL_TITLE, "decimals": 2, "show_colorbar": False}
    zeros = ~allowed & (probs == 0.0)  # written "0" only where the engine's weight is exactly zero
    charts = (
        ("mask_scaled", scaled, {}),
        ("masked", masked, {"hidden": ~allowed, "hidden_text": "−∞"}),  # grey, and read "−∞"
        ("mask_probs", probs, {"probabilities": True, "hidden": zeros, "hidden_text": "0"}),
    )
    for i, (col, (key, values, extra), title) in enumerate(
        zip(st.columns(3), charts, MASK_CHARTS, strict=True)
    ):
        with col:  # the row axis' title once, on the first: the others' cells get the room
            rows_named = {"row_title": ROW_TITLE if i == 0 else ""}
            stop_matrix("mask", key, title, values, rows, cols, share=1 / 3, **axes, **rows_named, **extra)
    above = probs[~allowed]
    sums = probs.sum(axis=-1)
    largest = float(above.max(initial=0.0))
    st.caption(
        MASK_CAPTION.format(
            n_above=int((~allowed).sum()),
            n_inf=int(np.isneginf(masked[~allowed]).sum()),
            largest=largest,
            how="exactly zero" if largest == 0.0 else "not zero",
            first=float(probs[0, 0]),
            lo=float(sums.min()),
            hi=float(sums.max()),
        )
    )
    name = chart_filename("learn", "mask", "masked", f"head{head + 1}" if tr.n_heads > 1 else None)
    csv_download(masked, rows, cols, name, key="csv_masked", corner=ATTENTION_CORNER)


# ---- the MLP ---------------------------------------------------------------------------------------


def mlp_view(tr: LayerTrace, layer: int, n_layers: int) -> None:
    if not shown("mlp"):
        return
    ln2, ffn, out = tr["ln2"], tr["ffn"], tr["layer_output"]
    d_model, d_ff = ln2.shape[-1], tr["w_1"].shape[-1]
    after = MLP_AFTER_LAST if layer + 1 == n_layers else MLP_AFTER.format(next=layer + 2)
    text = MLP_TEXT.format(d_ff=d_ff, d_model=d_model, gelu_gap=compute.gelu_gap(), after=after)
    shapes = [
        shape_text("X'", ln2.shape),
        shape_text("W₁", (d_model, d_ff)),
        shape_text("W₂", (d_ff, d_model)),
        shape_text("Y", out.shape),
    ]
    stop_intro("mlp", MLP_TITLE, MLP_FORMULA, text, shapes)
    rows = short_labels(tr.query_tokens)
    for col, key, title, values in zip(
        st.columns(3), ("ln2", "ffn", "layer_output"), MLP_CHARTS, (ln2, ffn, out), strict=True
    ):
        shown_values, dims, dim_title = first_dims(values, NARROW)
        with col:
            stop_matrix("mlp", key, title, shown_values, rows, dims, share=1 / 3, col_title=dim_title)
    with st.expander("GELU's tanh form beside the exact form and ReLU", expanded=not presenting()):
        chart(compute.gelu_chart(), "gelu", filename=chart_filename("learn", "mlp", "gelu"))
