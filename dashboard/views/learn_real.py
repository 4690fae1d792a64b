"""The learn page's "real model" mode: the seven steps on layer 1 (index 0) of the bundled BERT.

The numbers come from core.bert's trace_layer, which runs the teaching functions of core.attention
and core.layers on the checkpoint's real weights; they are the numbers the explore page shows for
layer 1 with the NumPy engine (the same cached engine object serves both pages). No torch here.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.models import BUNDLED_KEY, BUNDLED_NAME
from dashboard.charts.learn import short_labels, step_heatmap

# The toy mode's step layout, so both modes read alike (learn.py imports this module lazily).
from dashboard.views.learn import COL_TITLE, ROW_TITLE, _chart, _dims, shown, step_pager_ui, step_picker_ui
from dashboard.views.learn import _step_intro as _step

LAYER = 0  # the first layer: its input is the embeddings, which a student can still read
MAX_REAL_TOKENS = 64  # as on the rest of the page: every matrix still fits on the screen
SHOWN_DIMS = 8  # BERT's vectors have 384 numbers; the first few are printed, the rest are hovered
SHOWN_DIMS_NARROW = 4  # Q, K and V stand three abreast: four columns keep their numbers readable


def _engine():
    # The explore page's loader: one engine per process for both pages.
    from dashboard.engines import load_engine

    return load_engine(BUNDLED_KEY, "numpy")


@st.cache_data(max_entries=32, show_spinner=False)
def real_trace(text: str) -> dict:
    """trace_layer of the bundled BERT, on at most MAX_REAL_TOKENS tokens ([CLS] and [SEP] counted)."""
    engine = _engine()
    enc = engine.encode(text)
    total = len(enc.ids)
    if total > MAX_REAL_TOKENS:
        # cut the text after the last word piece that still fits beside [CLS] and [SEP]
        text = text[: enc.offsets[MAX_REAL_TOKENS - 2][1]]
    trace = engine.trace_layer(text, LAYER)
    trace["n_tokens_input"] = total
    trace["head_size"] = engine.config.head_size
    trace["ln_eps"] = engine.config.layer_norm_eps
    return trace


def _first_dims(a: np.ndarray) -> np.ndarray:
    return a[..., :SHOWN_DIMS]


def render_real(text: str) -> None:
    """Draw the seven steps for `text` on the bundled BERT's first layer."""
    if not text.strip():
        st.info("Type a sentence above, and the bundled BERT's first layer will run on it.")
        return
    try:
        with st.spinner("Loading the bundled BERT (NumPy engine)…"):
            tr = real_trace(text)
    except Exception as err:  # a model that cannot load or a text it cannot read: say so, keep the page
        st.error(f"The real model could not run on this text: {type(err).__name__}: {str(err)[:300]}")
        return
    tokens = tr["tokens"]
    t, d = tr["embeddings"].shape
    h, _, dk = tr["query"].shape
    if tr["n_tokens_input"] > t:
        st.warning(
            f"Your text has {tr['n_tokens_input']} word pieces; this mode keeps the first {t} "
            f"(with [CLS] and [SEP]) so every matrix fits on the screen."
        )
    st.info(
        f"These are the real numbers of **{BUNDLED_NAME}**, layer 1 of {6}, computed from its "
        "weights by this project's NumPy code: the same numbers the explore page shows for layer 1. "
        f"Its vectors have {d} numbers, so the wide matrices print their first {SHOWN_DIMS} "
        "dimensions; hover a cell for any other."
    )
    st.text(" · ".join(tokens))
    step_picker_ui("bert")
    head = st.selectbox(
        "Head shown in steps 2 to 6 (numbered from 1)",
        list(range(h)),
        format_func=lambda i: f"Head {i + 1} of {h}",
        key="learn_real_head",
    )
    labels = short_labels(tokens)
    qk = {"row_title": ROW_TITLE, "col_title": COL_TITLE}
    dims_shown = _dims(min(SHOWN_DIMS, d))
    hl = f" (head {head + 1} of {h})"
    root = float(np.sqrt(dk))

    if shown(1):
        _step(
            1,
            "Embeddings",
            r"X = \operatorname{LayerNorm}(E_{\text{word}} + E_{\text{position}} + E_{\text{type}})",
            "BERT looks up a learned vector for each word piece, adds one for its position and one for "
            "its sentence (first or second), and normalises the sum. That is the first layer's input.",
            [f"X: ({t} × {d})"],
        )
        _chart(
            step_heatmap(_first_dims(tr["embeddings"]), labels, dims_shown, title="X, first dimensions"),
            "real1",
        )

    if shown(2):
        _step(
            2,
            "Queries, keys and values",
            r"Q_i = X W^Q_i + b^Q_i \quad (\text{likewise } K_i,\ V_i)",
            f"The trained matrices (with biases, which the toy model leaves out) give each of the {h} "
            f"heads its own queries, keys and values of {dk} numbers (the first {SHOWN_DIMS_NARROW} are "
            "printed below).",
            [f"W^Q_i: ({d} × {dk})", f"Q_i, K_i, V_i: ({t} × {dk})"],
        )
        cols = st.columns(3)
        for col, (name, key) in zip(cols, (("Q", "query"), ("K", "key"), ("V", "value")), strict=True):
            with col:
                values = tr[key][head][:, :SHOWN_DIMS_NARROW]
                fig = step_heatmap(values, labels, _dims(values.shape[1]), title=f"{name}{hl}", share=1 / 3)
                _chart(fig, f"real2{name}")

    if shown(3):
        scores = tr["scores"][head] * root  # trace_layer keeps the scaled scores; undo to show QKᵀ
        _step(
            3,
            "Scores QKᵀ",
            r"S = Q_i K_i^{\top}",
            "Each query meets every key. With trained weights the big scores are no longer random: "
            "they are what this head has learned to look for.",
            [f"S: ({t} × {t})"],
        )
        _chart(step_heatmap(scores, labels, labels, title=f"scores QKᵀ{hl}", **qk), "real3")

    if shown(4):
        _step(
            4,
            "Scaling by √d_k",
            r"S' = \frac{Q_i K_i^{\top}}{\sqrt{d_k}}",
            f"d_k = {dk}, so every score is divided by √{dk} = {root:.4f} before the softmax.",
            [f"S': ({t} × {t})"],
        )
        _chart(step_heatmap(tr["scores"][head], labels, labels, title=f"scaled scores{hl}", **qk), "real4")

    if shown(5):
        _step(
            5,
            "Softmax",
            r"A = \operatorname{softmax}(S')",
            "Each row becomes weights that sum to 1: this is the pattern the explore page draws for "
            f"layer 1, head {head + 1}.",
            [f"A: ({t} × {t})"],
        )
        _chart(
            step_heatmap(
                tr["probs"][head], labels, labels, title=f"attention weights{hl}", probabilities=True, **qk
            ),
            "real5",
        )

    if shown(6):
        _step(
            6,
            "Weighted sum of the values",
            r"Z_i = A V_i",
            "Each token's new vector mixes the value vectors in the proportions of its row.",
            [f"Z_i: ({t} × {dk})"],
        )
        _chart(step_heatmap(_first_dims(tr["context"][head]), labels, dims_shown, title=f"Z{hl}"), "real6")

    if shown(7):
        _step(
            7,
            "Output projection, residual and layer norm",
            r"Y = \operatorname{LayerNorm}\bigl(X + \operatorname{Concat}(Z_1,\dots,Z_H)\,W^O + b^O\bigr)",
            f"All {h} heads' Z side by side ({d} numbers per token) go through W^O; the layer's input is "
            f"added back and the sum normalised with the learned γ and β (ε = {tr['ln_eps']:g}). "
            "A feed-forward block follows in the real layer.",
            [f"Concat: ({t} × {d})", f"W^O: ({d} × {d})", f"Y: ({t} × {d})"],
        )
        a, b = st.columns(2)
        with a:
            fig = step_heatmap(
                _first_dims(tr["output"]), labels, dims_shown, title="Concat · W^O + b^O", share=0.5
            )
            _chart(fig, "real7o")
        with b:
            fig = step_heatmap(
                _first_dims(tr["attention_output"]), labels, dims_shown, title="LayerNorm(X + …)", share=0.5
            )
            _chart(fig, "real7n")
    step_pager_ui("bert")
