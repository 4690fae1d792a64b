"""The learn page: attention computed from scratch, step by step, with every number on screen.

Two modes. "Your sentence" runs the seeded toy model of core.toy on what the user types. The
worked examples load the source articles' own inputs (core.worked_examples), show the true value of
every step, and flag each number the article printed differently. A presenter can edit any input
in a table and watch every later step follow.

User text is shown only through st.text, dataframes and Plotly labels, never through markdown
(which would interpret *, $ and :colour[...]) or HTML. This module imports neither torch nor
transformers, so the page opens fast.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.attention import MASK_KINDS
from core.toy import (
    MAX_TOKENS,
    SaturationCurve,
    Tokenized,
    ToySettings,
    Trace,
    clean_text,
    softmax_saturation,
    tokenize,
)
from core.toy import trace as toy_trace
from core.worked_examples import EXAMPLES, StepCheck, WorkedExample, layer_norm_article_form
from dashboard.charts.learn import saturation_figure, short_labels, step_heatmap
from dashboard.state import (
    clean_widget_text,
    read_choice_param,
    read_int_param,
    read_text_param,
    write_params,
)

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)

# ---- constants ------------------------------------------------------------------------------

SENTENCES = {
    "cat": ("The cat", "The cat sat on the mat"),
    "nlp": ("I love NLP", "I love NLP"),
    "trophy": ("Trophy and suitcase", "The trophy would not fit in the suitcase because it was too large."),
    "bank": ("Bank and loan", "The bank approved the loan."),
}
DEFAULT_TEXT = SENTENCES["cat"][1]
MAX_CHARS = 2000  # the text box and the URL; 64 tokens never need more
MODES = ("sentence", "bert", *EXAMPLES)
MODE_LABELS = {
    "sentence": "Your sentence",
    "bert": "Your sentence in a real BERT",
    "cat-mat": "Worked example: “The cat sat on the mat”",
    "i-love-nlp": "Worked example: “I love NLP”",
}
D_K_CHOICES = (0, 1, 2, 3, 4, 6, 8, 12, 16, 32, 64)  # 0 = automatic, d_model ÷ heads
DEFAULTS = {
    "learn_mode": "sentence",
    "learn_text": DEFAULT_TEXT,
    "learn_d_model": 8,
    "learn_d_k": 0,
    "learn_heads": 2,
    "learn_seed": 0,
    "learn_scale": True,
    "learn_mask": "none",
    "learn_window": 2,
    "learn_pe": False,
    "learn_head": 0,
    "learn_edit_version": 0,
    "learn_step": "1",
}
PLOT_CONFIG = {"displayModeBar": False}
ROW_TITLE, COL_TITLE = "query (from)", "key (to)"
INPUT_LIMIT = 1000.0  # edited numbers are clipped to ±this, so exp() and products stay finite

# One step on screen at a time by default: a step fills a projector screen without scrolling, and
# the browser draws only that step's charts. "All steps" puts the whole layer on one page; its
# 16 or so Plotly charts keep a 2-core laptop's browser busy for about 2 s (bench/learn_browser.py).
STEP_VIEWS = ("1", "2", "3", "4", "5", "6", "7", "heads", "all")
STEP_VIEW_LABELS = {
    "1": "1 · Embeddings",
    "2": "2 · Q, K, V",
    "3": "3 · Scores",
    "4": "4 · Scaling",
    "5": "5 · Softmax",
    "6": "6 · Weighted sum",
    "7": "7 · Output",
    "heads": "All heads",
    "all": "All steps",
}

# ---- cached computation -----------------------------------------------------------------------


@st.cache_data(max_entries=64, show_spinner=False)
def cached_trace(tokens: tuple[str, ...], settings: ToySettings) -> Trace:
    return toy_trace(tokens, settings)


@st.cache_data(max_entries=16, show_spinner=False)
def cached_saturation(seed: int) -> SaturationCurve:
    return softmax_saturation(seed)


# Figures are cached as objects (cache_resource: no pickling). Building a Plotly figure costs
# milliseconds of validation, and a page holds a dozen; st.plotly_chart only reads them.
@st.cache_resource(max_entries=256, show_spinner=False)
def heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], **kwargs) -> go.Figure:
    return step_heatmap(values, rows, cols, **kwargs)


@st.cache_resource(max_entries=32, show_spinner=False)
def saturation_chart(seed: int, d_k: int, scaling_on: bool) -> go.Figure:
    curve = cached_saturation(seed)
    return saturation_figure(
        curve.d_k,
        curve.max_weight_scaled,
        curve.max_weight_unscaled,
        curve.entropy_scaled,
        curve.entropy_unscaled,
        n_keys=curve.n_keys,
        current_d_k=d_k,
        scaling_on=scaling_on,
    )


@st.cache_data(max_entries=8, show_spinner=False)
def cached_checks(slug: str) -> tuple[StepCheck, ...]:
    return EXAMPLES[slug].checks()


# ---- URL <-> state --------------------------------------------------------------------------


def _init_state() -> None:
    """Defaults first; on a session's first run, the link's values over them (each one checked)."""
    ss = st.session_state
    if not ss.get("learn_url_read"):
        ss["learn_url_read"] = True
        notes: list[str] = []

        def take(pair: tuple[object, str | None]) -> object:
            value, note = pair
            if note:
                notes.append(note)
            return value

        raw_example = st.query_params.get("example")
        if raw_example:
            if raw_example in EXAMPLES or raw_example == "bert":
                ss["learn_mode"] = raw_example
            else:
                notes.append(
                    "The link asks for a worked example this page does not have; showing your own "
                    f"sentence instead. The examples are: {', '.join(EXAMPLES)}."
                )
        ss["learn_text"] = clean_text(read_text_param("text", DEFAULT_TEXT, MAX_CHARS))
        ss["learn_d_model"] = take(read_int_param("d_model", DEFAULTS["learn_d_model"], 1, 64))
        ss["learn_heads"] = take(read_int_param("heads", DEFAULTS["learn_heads"], 1, 8))
        d_k = take(read_int_param("d_k", 0, 0, 64))
        if d_k not in D_K_CHOICES:
            notes.append(
                f"The link's `d_k` must be one of {', '.join(map(str, D_K_CHOICES[1:]))}; using auto."
            )
            d_k = 0
        ss["learn_d_k"] = d_k
        ss["learn_seed"] = take(read_int_param("seed", 0, 0, 2**31 - 1))
        ss["learn_scale"] = take(read_choice_param("scale", ("0", "1"), "1")) == "1"
        ss["learn_mask"] = take(read_choice_param("mask", MASK_KINDS, "none"))
        ss["learn_window"] = take(read_int_param("window", DEFAULTS["learn_window"], 0, 16))
        ss["learn_pe"] = take(read_choice_param("pe", ("0", "1"), "0")) == "1"
        ss["learn_head"] = take(read_int_param("head", 0, 0, 7))
        if ss["learn_head"] >= ss["learn_heads"]:
            notes.append(
                f"The link's `head` value {ss['learn_head']} is past its {ss['learn_heads']} head(s) "
                "(links count from 0); showing head 1."
            )
            ss["learn_head"] = 0
        ss["learn_step"] = take(read_choice_param("step", STEP_VIEWS, DEFAULTS["learn_step"]))
        ss["learn_url_notes"] = notes
    # Streamlit forgets the state of widgets a run does not draw, e.g. during a visit to another
    # page; a plain copy kept under another key brings the user's settings back on return.
    saved = ss.get("learn_saved", {})
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = saved.get(key, value)


def _write_url(mode: str, text: str) -> None:
    ss = st.session_state

    def unless_default(key: str, value: object, url_value: object = None) -> object:
        return None if value == DEFAULTS[key] else (value if url_value is None else url_value)

    step = unless_default("learn_step", ss["learn_step"])

    if mode != "sentence":
        kept_text = None if mode != "bert" or text == DEFAULT_TEXT else text  # the real model reads the text
        write_params(example=mode, text=kept_text, d_model=None, d_k=None, heads=None, seed=None, scale=None)
        write_params(mask=None, window=None, pe=None, head=None, step=step)
        return
    write_params(
        example=None,
        text=None if text == DEFAULT_TEXT else text,
        d_model=unless_default("learn_d_model", ss["learn_d_model"]),
        d_k=unless_default("learn_d_k", ss["learn_d_k"]),
        heads=unless_default("learn_heads", ss["learn_heads"]),
        seed=unless_default("learn_seed", ss["learn_seed"]),
        scale=unless_default("learn_scale", ss["learn_scale"], "0"),
        mask=unless_default("learn_mask", ss["learn_mask"]),
        window=unless_default("learn_window", ss["learn_window"])
        if ss["learn_mask"] in ("local", "strided")
        else None,
        pe=unless_default("learn_pe", ss["learn_pe"], "1"),
        head=unless_default("learn_head", ss["learn_head"]),
        step=step,
    )


# ---- widgets (each *_ui draws and returns values; no computing here) -------------------------


def _pick_sentence() -> None:
    pick = st.session_state.get("learn_pick")
    if pick in SENTENCES:
        st.session_state["learn_text"] = SENTENCES[pick][1]
    st.session_state["learn_pick"] = None  # a ready example is a one-off action, not a state


def sentence_ui() -> str:
    st.pills(
        "Ready examples",
        list(SENTENCES),
        format_func=lambda k: SENTENCES[k][0],
        key="learn_pick",
        on_change=_pick_sentence,
    )
    return st.text_input(
        "Sentence",
        key="learn_text",
        max_chars=MAX_CHARS,
        placeholder="Type a sentence, e.g. The cat sat on the mat",
        help=f"Split into words and punctuation; the first {MAX_TOKENS} tokens are used.",
    )


def settings_ui() -> dict:
    """The model controls, in one bordered row. Returns ToySettings keyword arguments."""
    with st.container(border=True):
        c = st.columns([1, 1, 1.3, 1, 1.2, 1.3, 1])
        c[0].number_input("d_model", 1, 64, step=1, key="learn_d_model", help="Width of every token vector.")
        c[1].number_input("Heads", 1, 8, step=1, key="learn_heads", help="Heads that attend in parallel.")
        c[2].selectbox(
            "d_k per head",
            D_K_CHOICES,
            format_func=lambda v: "auto" if v == 0 else str(v),
            key="learn_d_k",
            help="Width of one head's queries, keys and values. Auto is d_model ÷ heads, "
            "the usual choice (BERT: 768 ÷ 12 = 64).",
        )
        c[3].number_input("Seed", 0, 2**31 - 1, step=1, key="learn_seed", help="Same seed, same numbers.")
        c[4].toggle("Scale by √d_k", key="learn_scale", help="Switch off to see the softmax saturate.")
        c[4].toggle(
            "Positions", key="learn_pe", help="Add sinusoidal positional encodings to the embeddings."
        )
        c[5].selectbox(
            "Mask",
            MASK_KINDS,
            key="learn_mask",
            help="causal: only earlier tokens. local: a window each side. strided: recent tokens "
            "plus every stride-th earlier one.",
        )
        mask = st.session_state["learn_mask"]
        c[6].number_input(
            "Window / stride",
            0,
            16,
            step=1,
            key="learn_window",
            disabled=mask not in ("local", "strided"),
            help="local: how many tokens each side a token sees. strided: the stride (1 or more).",
        )
    ss = st.session_state
    return {
        "d_model": int(ss["learn_d_model"]),
        "n_heads": int(ss["learn_heads"]),
        "d_k": int(ss["learn_d_k"]) or None,
        "seed": int(ss["learn_seed"]),
        "scale": bool(ss["learn_scale"]),
        "mask": mask,
        "window": int(ss["learn_window"]),
        "positional": bool(ss["learn_pe"]),
    }


def head_ui(n_heads: int) -> int:
    if st.session_state.get("learn_head", 0) not in range(n_heads):
        st.session_state["learn_head"] = 0
    if n_heads == 1:
        return 0
    head = st.segmented_control(
        "Head shown in steps 2 to 6 (numbered from 1)",
        list(range(n_heads)),
        format_func=lambda h: f"Head {h + 1}",
        key="learn_head",
        required=True,
    )
    return int(head or 0)


# ---- which steps are on screen ----------------------------------------------------------------


def _step_views(mode: str) -> list[str]:
    # only the toy model's page has the all-heads section
    return [v for v in STEP_VIEWS if v != "heads" or mode == "sentence"]


def shown(step: int | str) -> bool:
    """Whether a step (1 to 7, or "heads") is on screen in the chosen view."""
    view = st.session_state.get("learn_step", DEFAULTS["learn_step"])
    return view == "all" or view == str(step)


def step_picker_ui(mode: str) -> None:
    """The row of steps above the matrices; the choice is kept in the URL (`step`)."""
    views = _step_views(mode)
    if st.session_state.get("learn_step") not in views:
        st.session_state["learn_step"] = DEFAULTS["learn_step"]
    st.segmented_control(
        "Step on screen",
        views,
        format_func=STEP_VIEW_LABELS.get,
        key="learn_step",
        required=True,
        help="One step at a time fits a projector; “All steps” puts the whole layer on one page.",
    )


def _go_to(view: str) -> None:
    st.session_state["learn_step"] = view


def step_pager_ui(mode: str) -> None:
    """Previous and next buttons under a single step."""
    views = [v for v in _step_views(mode) if v != "all"]
    view = st.session_state.get("learn_step")
    if view not in views:
        return
    i = views.index(view)
    back = views[i - 1] if i > 0 else None
    ahead = views[i + 1] if i + 1 < len(views) else None
    st.divider()
    # previous at the left edge, next at the right edge, whichever of them there is
    align = "distribute" if back and ahead else ("right" if ahead else "left")
    with st.container(horizontal=True, horizontal_alignment=align):
        if back:
            st.button(f"← {STEP_VIEW_LABELS[back]}", key="learn_prev", on_click=_go_to, args=(back,))
        if ahead:
            st.button(
                f"{STEP_VIEW_LABELS[ahead]} →",
                key="learn_next",
                on_click=_go_to,
                args=(ahead,),
                type="primary",
            )


# ---- display helpers ------------------------------------------------------------------------


def _chart(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, config=PLOT_CONFIG, width="stretch")


def _shape(name: str, shape: tuple[int, ...]) -> str:
    return f"{name}: ({' × '.join(str(s) for s in shape)})"


def _dims(n: int, prefix: str = "") -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(n)]


def _step_intro(number: int, title: str, formula: str, text: str, shapes: list[str]) -> None:
    """Header, then the formula (with the shapes under it) beside the explanation, full width:
    the matrices go below, where they get the whole screen."""
    st.divider()
    st.subheader(f"Step {number} · {title}", anchor=f"step-{number}")
    left, right = st.columns([1, 1], gap="large", vertical_alignment="center")
    with left:
        st.latex(formula)
        st.caption("Shapes: " + " · ".join(shapes))
    with right:
        st.markdown(text)


def _show_tokens(tok: Tokenized) -> None:
    st.caption(f"Tokens (T = {len(tok.tokens)}), as plain text:")
    st.text("  ·  ".join(tok.tokens))


# The seven steps' formulas and texts, shared by both modes.
STEP_TEXT = {
    1: (
        "Embeddings",
        # two lines: on one, the formula is wider than its half of a 1280 px screen and gets cut
        r"\begin{gathered} X = \begin{bmatrix} x_1 \\ \vdots \\ x_T \end{bmatrix}"
        r" \in \mathbb{R}^{T \times d_{model}} \\ x_i = e(w_i)\;\bigl[+\, PE_i\bigr] \end{gathered}",
        "Each token becomes a row of numbers. A trained model learns these rows; here each one is "
        "drawn from a random generator seeded by the token's text, so a repeated word gets the same "
        "row wherever it stands. Nothing in X says where a token sits until positional encoding "
        "adds a position-dependent wave to each row.",
    ),
    2: (
        "Queries, keys and values",
        r"\begin{gathered} Q = X W^Q,\quad K = X W^K,\quad V = X W^V \\"
        r"W^Q_i,\ W^K_i,\ W^V_i \in \mathbb{R}^{d_{model} \times d_k} \end{gathered}",
        "Three weight matrices give the same row three roles. The query is what a token is looking "
        "for, the key is what it offers to the others, and the value is what it hands over when "
        "chosen. Every head has its own three matrices, so each head can look for something else.",
    ),
    3: (
        "Scores QKᵀ",
        r"S = Q K^{\top},\qquad S_{ij} = q_i \cdot k_j = \sum_{m=1}^{d_k} q_{im}\, k_{jm}",
        "Every query meets every key in a dot product. Cell (i, j) is large when what token i looks "
        "for lines up with what token j offers. The matrix is T × T: one more token adds a row and "
        "a column, which is why the cost of attention grows with the square of the length.",
    ),
    4: (
        "Scaling by √d_k",
        r"S' = \frac{Q K^{\top}}{\sqrt{d_k}}",
        "A dot product adds up d_k products, so its spread grows with d_k: with entries of variance "
        "1 its variance is about d_k. Dividing by √d_k brings the spread back to about 1, which keeps "
        "the softmax of the next step from locking onto a single key.",
    ),
    5: (
        "Softmax",
        r"A_{ij} = \operatorname{softmax}(S'_i)_j = \frac{e^{S'_{ij}}}{\sum_{m=1}^{T} e^{S'_{im}}}",
        "The softmax turns each row of scores into weights that are positive and add up to 1. Row i "
        "is token i's attention: how much of every token it will take in. The wider the gaps between "
        "scores, the more lopsided the row.",
    ),
    6: (
        "Weighted sum of the values",
        r"Z = A V,\qquad z_i = \sum_{j=1}^{T} A_{ij}\, v_j",
        "Each token's new vector is a blend of all the value vectors, mixed in the proportions of its "
        "attention row. A token that puts most of its weight on one other token mostly copies that "
        "token's value.",
    ),
    7: (
        "Output projection W^O, residual and layer norm",
        r"\begin{gathered} Y = \operatorname{LayerNorm}\bigl(X + \operatorname{Concat}(Z_1, \dots, Z_H)\,"
        r" W^O\bigr) \\ \operatorname{LayerNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
        r" \end{gathered}",
        "The heads' outputs are set side by side and multiplied by W^O, which mixes them and brings "
        "the width back to d_model. The residual connection adds the layer's input X back, so the "
        "layer only has to learn a correction. Layer norm then gives each token's row mean 0 and "
        "variance 1 (with learned scale γ = 1 and shift β = 0 here), keeping numbers in a steady range.",
    ),
}

MASK_TEXT = {
    "causal": "Causal mask: a token sees itself and the tokens before it, as in GPT-style decoders.",
    "local": "Local mask: a token sees the tokens within the window on either side of it.",
    "strided": "Strided mask: a token sees the most recent tokens and every stride-th earlier one.",
}


def _intro(number: int, shapes: list[str], extra: str = "", text: str | None = None) -> None:
    """A step's header, formula and explanation; text replaces the standard explanation."""
    title, formula, standard = STEP_TEXT[number]
    body = standard if text is None else text
    _step_intro(number, title, formula, body + (" " + extra if extra else ""), shapes)


# ---- the sentence mode ----------------------------------------------------------------------


def _render_sentence(text: str) -> None:
    values = settings_ui()
    try:
        settings = ToySettings(**values)
    except ValueError as err:
        st.warning(f"These settings do not fit together: {err}.", icon=":material/warning:")
        return
    tok = tokenize(text)
    if not tok.tokens:
        st.info(
            "Type a sentence in the box above, or pick one of the ready examples, and every step of "
            "attention will be computed on it.",
            icon=":material/edit_note:",
        )
        return
    if tok.truncated:
        st.warning(
            f"Your text has {tok.total} tokens. This page keeps the first {MAX_TOKENS}, so every "
            "matrix still fits on the screen; the rest is left out.",
            icon=":material/content_cut:",
        )
    _show_tokens(tok)
    tr = cached_trace(tok.tokens, settings)
    labels = short_labels(tok.tokens)
    step_picker_ui("sentence")
    head = head_ui(settings.n_heads) if any(shown(n) for n in range(2, 7)) else 0
    _sentence_steps(tr, settings, labels, head)
    if shown("heads"):
        _multi_head_section(tr, labels)
    if settings.scale and shown(4):  # with scaling off, step 5 shows the saturation chart itself
        st.divider()
        with st.expander("Why divide by √d_k? Softmax saturation", expanded=False):
            _saturation_body(settings)
    step_pager_ui("sentence")


def _sentence_steps(tr: Trace, s: ToySettings, labels: list[str], head: int) -> None:
    t, d, dk, h = len(labels), s.d_model, tr.d_k, s.n_heads
    hl = f" (head {head + 1} of {h})" if h > 1 else ""
    mask = None if tr.mask is None else ~tr.mask
    qk = {"row_title": ROW_TITLE, "col_title": COL_TITLE}

    if shown(1):
        extra = (
            "Here positional encoding is on, so the same word at two places gets two different rows."
            if s.positional
            else "Positional encoding is off: a repeated word (“The” and “the” count as one) has "
            "identical rows."
        )
        _intro(1, [_shape("X", (t, d))], extra)
        if s.positional:
            a, b = st.columns(2)
            with a:
                _chart(
                    heatmap(tr["embeddings"], labels, _dims(d), title="token embeddings e(w)", share=0.5),
                    "s1e",
                )
            with b:
                _chart(
                    heatmap(tr["positions"], labels, _dims(d), title="positional encoding PE", share=0.5),
                    "s1p",
                )
        _chart(heatmap(tr["X"], labels, _dims(d), title="X, the layer's input", col_title="dimension"), "s1")

    if shown(2):
        shapes = [_shape("W^Q_i, W^K_i, W^V_i", (d, dk)), _shape("Q_i, K_i, V_i", (t, dk)), f"{h} head(s)"]
        _intro(2, shapes, f"Below: head {head + 1} of {h}." if h > 1 else "")
        cols = st.columns(3)
        for col, name in zip(cols, ("Q", "K", "V"), strict=True):
            with col:
                _chart(
                    heatmap(
                        tr[name][head],
                        labels,
                        _dims(dk),
                        title=f"{name}{hl}",
                        col_title="dimension",
                        share=1 / 3,
                    ),
                    f"s2{name}",
                )

    if shown(3):
        _intro(3, [_shape("Q_i", (t, dk)), _shape("K_iᵀ", (dk, t)), _shape("scores", (t, t))])
        _chart(heatmap(tr["scores"][head], labels, labels, title=f"scores QKᵀ{hl}", **qk), "s3")

    if shown(4):
        mask_note = MASK_TEXT.get(s.mask, "")
        if mask_note:
            mask_note += " The hidden cells become −∞, so the softmax gives them weight exactly 0."
        if s.scale:
            _intro(4, [f"√d_k = √{dk} = {np.sqrt(dk):.4f}", _shape("scaled scores", (t, t))], mask_note)
            title = f"scaled scores QKᵀ/√d_k{hl}"
        else:
            _intro(4, [_shape("scores", (t, t)), "not divided"], mask_note)
            st.warning(
                "Scaling is switched off: the scores go into the softmax as they are. Step 5 shows what "
                "that does to the attention weights.",
                icon=":material/warning:",
            )
            title = f"unscaled scores (scaling off){hl}"
        _chart(heatmap(tr["scaled"][head], labels, labels, title=title, masked=mask, **qk), "s4")

    if shown(5):
        probs = tr["probs"][head]
        _intro(5, [_shape("attention weights A", (t, t)), "each row sums to 1"])
        if s.scale:
            _chart(
                heatmap(probs, labels, labels, title=f"attention weights{hl}", probabilities=True, **qk), "s5"
            )
            st.caption(f"Largest weight in a row, on average: {probs.max(axis=-1).mean():.4f}.")
        else:
            scaled_probs = cached_trace(tuple(tr.tokens), replace(s, scale=True))["probs"][head]
            # side by side while the numbers fit in half the width, else one above the other
            a, b = st.columns(2) if t <= 8 else (st.container(), st.container())
            with a:
                fig = heatmap(
                    probs, labels, labels, title=f"without scaling (in use){hl}", probabilities=True, **qk
                )
                _chart(fig, "s5")
            with b:
                fig = heatmap(
                    scaled_probs,
                    labels,
                    labels,
                    title="with scaling, for comparison",
                    probabilities=True,
                    **qk,
                )
                _chart(fig, "s5cmp")
            st.metric(
                "Largest weight in a row, on average, without scaling",
                f"{probs.max(axis=-1).mean():.4f}",
                delta=f"{probs.max(axis=-1).mean() - scaled_probs.max(axis=-1).mean():+.4f} vs with scaling",
                delta_color="inverse",
            )
            _saturation_body(s)

    if shown(6):
        _intro(6, [_shape("A", (t, t)), _shape("V_i", (t, dk)), _shape("Z_i", (t, dk))])
        _chart(
            heatmap(tr["context"][head], labels, _dims(dk), title=f"Z = AV{hl}", col_title="dimension"), "s6"
        )

    if shown(7):
        shapes = [
            _shape("Concat", (t, h * dk)),
            _shape("W^O", (h * dk, d)),
            _shape("X + output", (t, d)),
            f"ε = {s.ln_eps:g}",
        ]
        _intro(7, shapes)
        _chart(
            heatmap(tr["output"], labels, _dims(d), title="output = Concat · W^O", col_title="dimension"),
            "s7o",
        )
        _chart(
            heatmap(tr["residual"], labels, _dims(d), title="residual X + output", col_title="dimension"),
            "s7r",
        )
        title = "LayerNorm(X + output): the layer's result"
        _chart(heatmap(tr["normed"], labels, _dims(d), title=title, col_title="dimension"), "s7n")


def _multi_head_section(tr: Trace, labels: list[str]) -> None:
    h, dk = tr.n_heads, tr.d_k
    st.divider()
    st.header("All heads together", anchor="multi-head")
    st.latex(
        r"\operatorname{MultiHead}(X) = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)\, W^O,"
        r"\qquad \text{head}_i = \operatorname{softmax}\!\Bigl("
        r"\tfrac{X W^Q_i\,(X W^K_i)^{\top}}{\sqrt{d_k}}\Bigr) X W^V_i"
    )
    st.markdown(
        "Each head runs steps 2 to 6 with its own weights, so each can attend in its own way: one may "
        "follow the previous token, another a related word. Their results are placed side by side, "
        "and W^O blends them into one vector per token."
    )
    per_row = min(h, 4)
    numbers = len(labels) * per_row <= 16  # about 90 px per printed number on a 1500 px page
    if not numbers:
        st.caption("The numbers are left out where the cells are too small to hold them; hover to read one.")
    for start in range(0, h, per_row):
        cols = st.columns(per_row)
        for i, col in zip(range(start, min(start + per_row, h)), cols, strict=False):
            with col:
                fig = heatmap(
                    tr["probs"][i],
                    labels,
                    labels,
                    title=f"head {i + 1}",
                    row_title=ROW_TITLE,
                    col_title=COL_TITLE,
                    probabilities=True,
                    show_numbers=numbers,
                    share=1 / per_row,
                )
                _chart(fig, f"mh{i}")
    concat_cols = [f"h{i + 1}·{j + 1}" for i in range(h) for j in range(dk)]
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.caption(
            f"Concatenation: the heads' Z side by side, ({len(labels)} × {h * dk}); "
            "column hN·m is head N, dimension m."
        )
        _chart(heatmap(tr["concat"], labels, concat_cols, title="Concat(Z₁, …, Z_H)", share=0.5), "mhc")
    with right:
        st.caption(f"W^O, ({h * dk} × {tr['W_O'].shape[1]}): one row per concatenated column.")
        _chart(
            heatmap(
                tr["W_O"],
                concat_cols,
                _dims(tr["W_O"].shape[1]),
                title="W^O",
                col_title="output dimension",
                share=0.5,
            ),
            "mhw",
        )


def _saturation_body(settings: ToySettings) -> None:
    curve = cached_saturation(settings.seed)
    st.markdown(
        f"**Softmax saturation.** Random queries and keys with entries of variance 1 (seed "
        f"{settings.seed}), {curve.n_keys} keys per row, averaged over {curve.n_trials} draws for each "
        "d_k. Without the division the largest weight climbs towards 1 and the spread collapses as "
        "d_k grows: the softmax turns into a hard pick of one key, its gradient all but vanishes, and "
        "training stalls. With the division both curves stay flat whatever d_k is."
    )
    _chart(saturation_chart(settings.seed, settings.head_dim, settings.scale), "saturation")


# ---- the worked examples --------------------------------------------------------------------

INPUT_TITLES = {"X": "X: x₁ and x₂", "Q": "Q", "K": "K", "V": "V", "W_O": "W^O (ours, not the article's)"}


def _input_labels(ex: WorkedExample, name: str, shape: tuple[int, int]) -> tuple[list[str], list[str]]:
    if name in ("X", "Q"):
        rows = list(ex.query_tokens)
    elif name in ("K", "V"):
        rows = list(ex.key_tokens)
    else:
        rows = _dims(shape[0], "row ")
    return rows, _dims(shape[1])


def _reset_edits() -> None:
    st.session_state["learn_edit_version"] = st.session_state.get("learn_edit_version", 0) + 1


def inputs_ui(ex: WorkedExample) -> tuple[dict[str, np.ndarray], list[str]]:
    """One editable table per input. Returns the (possibly edited) arrays and notes on fixes made."""
    import pandas as pd  # here, not at the top: the default page never needs it (0.2 s to import)

    version = st.session_state.get("learn_edit_version", 0)
    names = list(ex.inputs)
    out: dict[str, np.ndarray] = {}
    notes: list[str] = []
    # Q, K, V on one row, then X and W^O, so every table is wide enough to show all its columns
    first = [n for n in names if n in ("Q", "K", "V")]
    rest = [n for n in names if n not in first]
    cols = list(st.columns(len(first)))
    if rest:
        cols += list(st.columns(max(len(rest), 2)))[: len(rest)]
    for col, name in zip(cols, first + rest, strict=True):
        original = ex.inputs[name]
        rows, columns = _input_labels(ex, name, original.shape)
        with col:
            st.markdown(f"**{INPUT_TITLES[name]}**")
            df = pd.DataFrame(original, index=rows, columns=columns)
            edited = st.data_editor(
                df,
                key=f"learn_edit_{ex.slug}_{name}_{version}",
                num_rows="fixed",
                column_config={
                    c: st.column_config.NumberColumn(
                        c, min_value=-INPUT_LIMIT, max_value=INPUT_LIMIT, step=0.01
                    )
                    for c in columns
                },
            )
            if name in ex.input_notes:
                st.caption(ex.input_notes[name])
        arr = pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
        if not np.isfinite(arr).all():
            notes.append(f"{INPUT_TITLES[name]}: an empty cell counts as 0.")
            arr = np.nan_to_num(arr, nan=0.0, posinf=INPUT_LIMIT, neginf=-INPUT_LIMIT)
        if np.abs(arr).max(initial=0.0) > INPUT_LIMIT:
            notes.append(f"{INPUT_TITLES[name]}: numbers are kept within ±{INPUT_LIMIT:g}.")
            arr = np.clip(arr, -INPUT_LIMIT, INPUT_LIMIT)
        out[name] = arr
    return out, notes


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _table_height(n_rows: int) -> int:
    """Every row visible, no inner scroll bar: 35 px a row plus the header."""
    return 35 * (n_rows + 1) + 3


def _fmt_printed(value: float, decimals: int | None) -> str:
    return f"{value:g}" if decimals is None else f"{value:.{decimals}f}"


VERDICT = {"slip": "✗ slip at this step", "propagated": "✗ carried from an earlier slip"}
SHORT_VERDICT = {"slip": "✗ slip", "propagated": "✗ carried over"}


def _check_table(check: StepCheck, rows: list[str], cols: list[str]) -> pd.DataFrame:
    import pandas as pd  # see inputs_ui

    flags = {f.index: f for f in check.flags}
    records = []
    for index in np.ndindex(check.true.shape):
        r, c = index
        flag = flags.get(index)
        records.append(
            {
                "entry": f"{rows[r]} → {cols[c]}",
                "article": _fmt_printed(float(check.printed[index]), check.decimals),
                "true": f"{check.true[index]:.4f}",
                "from its numbers": f"{check.from_printed[index]:.4f}",
                "verdict": SHORT_VERDICT[flag.kind] if flag else "✓ agrees",
            }
        )
    return pd.DataFrame.from_records(records)


def _summary_table(ex: WorkedExample, checks: tuple[StepCheck, ...]) -> pd.DataFrame:
    import pandas as pd  # see inputs_ui

    names = {c.step: f"{c.number}. {STEP_TEXT[c.number][0]}" for c in checks}
    records = []
    for check in checks:
        rows, cols = _check_labels(ex, check)
        for f in check.flags:
            records.append(
                {
                    "step": names[check.step],
                    "entry": f"{rows[f.index[0]]} → {cols[f.index[1]]}",
                    "article prints": _fmt_printed(f.printed, check.decimals),
                    "true value": f"{f.true:.4f}",
                    "from its own numbers": f"{f.from_printed:.4f}",
                    "verdict": VERDICT[f.kind],
                }
            )
    return pd.DataFrame.from_records(records)


def _check_labels(ex: WorkedExample, check: StepCheck) -> tuple[list[str], list[str]]:
    rows = list(ex.query_tokens)
    if check.step == "context":
        return rows, _dims(check.true.shape[1], "dim ")
    return rows, list(ex.key_tokens)


def _example_step(number: int, ex: WorkedExample, tr: Trace, check: StepCheck, shapes: list[str]) -> None:
    """One step of a worked example: formula and text, then true values (flags outlined) beside
    the article's printed numbers."""
    name = {3: "scores", 4: "scaled", 5: "probs", 6: "context"}[number]
    _intro(number, shapes, check.note)
    col_labels = list(ex.key_tokens) if name != "context" else _dims(tr[name].shape[-1], "dim ")
    flagged = [f.index for f in check.flags]
    left, right = st.columns([1, 1.3], gap="large")
    with left:
        fig = heatmap(
            tr[name][0],
            list(ex.query_tokens),
            col_labels,
            title="true values" + (" (red outline: the article differs)" if flagged else ""),
            row_title=ROW_TITLE,
            col_title=COL_TITLE if name != "context" else "dimension",
            probabilities=name == "probs",
            flagged=flagged,
            share=0.41,  # the left column of [1, 1.3] with a large gap: (820 - 48) / 2.3 px of 820
        )
        _chart(fig, f"ex{number}")
    with right:
        if check.printed is None:
            st.info("The article prints no numbers for this step.", icon=":material/info:")
        else:
            n_bad = len(check.flags)
            verdict = (
                "all agree with the true values." if not n_bad else f"{n_bad} of {check.printed.size} differ."
            )
            st.markdown(f"**The article's numbers:** {verdict}")
            rows, cols = _check_labels(ex, check)
            table = _check_table(check, rows, cols)
            st.dataframe(
                table, hide_index=True, key=f"learn_check_{number}", height=_table_height(len(table))
            )
            st.caption(
                "“From its numbers” redoes the step from what the article printed just before: a "
                "slip is wrong even then; a carried-over value is right given the earlier slip."
            )


def _render_example(ex: WorkedExample) -> None:
    st.subheader(ex.title, anchor="worked-example")
    st.caption(f"Source: {ex.source}. Its inputs are loaded below; every step is recomputed from them.")
    checks = cached_checks(ex.slug)
    by_step = {c.step: c for c in checks}
    n_flags = sum(len(c.flags) for c in checks)
    n_slips = sum(f.kind == "slip" for c in checks for f in c.flags)

    st.markdown("#### The article's arithmetic, checked")
    if n_flags:
        n_carried = n_flags - n_slips
        st.markdown(
            f"{_count(n_flags, 'printed number differs', 'printed numbers differ')} from the true "
            f"values: {_count(n_slips, 'is a slip', 'are slips')} made at that step, and "
            f"{_count(n_carried, 'follows', 'follow')} from an earlier slip (right, given the article's "
            "own previous numbers). The column *from its own numbers* redoes each step from what the "
            "article printed just before, to tell the two apart."
        )
        summary = _summary_table(ex, checks)
        st.dataframe(summary, hide_index=True, key="learn_summary", height=_table_height(len(summary)))
    else:
        st.markdown("Every printed number agrees with the true value.")
    for remark in ex.remarks:
        st.info(remark, icon=":material/menu_book:")

    st.markdown("#### Inputs: edit any number and every step below follows")
    inputs, notes = inputs_ui(ex)
    edited = any(not np.array_equal(inputs[k], ex.inputs[k]) for k in ex.inputs)
    for note in notes:
        st.warning(note)
    if edited:
        st.info(
            "You have changed the article's inputs: the heatmaps show your numbers, while the "
            "comparison with the article still refers to its own inputs.",
            icon=":material/edit:",
        )
    st.button("Reset to the article's numbers", key="learn_reset", on_click=_reset_edits, disabled=not edited)
    tr = ex.trace(inputs)
    step_picker_ui(ex.slug)

    tq, tk, dk = len(ex.query_tokens), len(ex.key_tokens), tr.d_k
    q_labels, k_labels = list(ex.query_tokens), list(ex.key_tokens)
    if shown(1):
        if "X" in tr:
            _intro(
                1,
                [_shape("X", tr["X"].shape)],
                text="Each token becomes a row of numbers. The article splits its sentence into two "
                "chunks, “The cat” and “sat on the mat”, and gives each a 4-number row, x₁ and x₂. A real "
                "model uses hundreds of numbers per token and learns them in training.",
            )
            _chart(
                heatmap(tr["X"], q_labels, _dims(tr["X"].shape[1]), title="X (given)", col_title="dimension"),
                "ex1",
            )
        else:
            _intro(
                1,
                ["no embeddings in this example"],
                text="A model would first turn each word into a row of numbers. This example skips that "
                "step: it starts from the query of “love” and the keys and values of all three words, "
                "each a single number.",
            )
            st.info(
                "This example starts from Q, K and V: the article gives no embeddings.",
                icon=":material/info:",
            )

    if shown(2):
        _intro(
            2,
            [_shape("Q", (tq, dk)), _shape("K", (tk, dk)), _shape("V", (tk, tr["V"].shape[-1]))],
            "The article gives Q, K and V themselves (editable above) and prints no W^Q, W^K, W^V.",
        )
        cols = st.columns(3)
        for col, name in zip(cols, ("Q", "K", "V"), strict=True):
            with col:
                rows = q_labels if name == "Q" else k_labels
                fig = heatmap(
                    tr[name][0],
                    rows,
                    _dims(tr[name].shape[-1]),
                    title=name,
                    col_title="dimension",
                    share=1 / 3,
                )
                _chart(fig, f"ex2{name}")

    if shown(3):
        _example_step(
            3,
            ex,
            tr,
            by_step["scores"],
            [_shape("Q", (tq, dk)), _shape("Kᵀ", (dk, tk)), _shape("S", (tq, tk))],
        )
    if shown(4):
        _example_step(
            4, ex, tr, by_step["scaled"], [f"√d_k = √{dk} = {np.sqrt(dk):.4f}", _shape("S'", (tq, tk))]
        )
    if shown(5):
        _example_step(5, ex, tr, by_step["probs"], [_shape("A", (tq, tk)), "each row sums to 1"])
    if shown(6):
        shapes = [_shape("A", (tq, tk)), _shape("V", tr["V"].shape[1:]), _shape("Z", (tq, tr["V"].shape[-1]))]
        _example_step(6, ex, tr, by_step["context"], shapes)

    if shown(7):
        _example_output_step(tr, q_labels)
    step_pager_ui(ex.slug)


def _example_output_step(tr: Trace, q_labels: list[str]) -> None:
    tq, dk = len(q_labels), tr.d_k
    if "normed" not in tr:
        _intro(7, ["not part of this example"])
        st.info(
            "The article stops at the weighted sum: it has no W^O, residual or layer norm.",
            icon=":material/info:",
        )
        return
    d = tr["X"].shape[1]
    _intro(
        7, [_shape("Z", (tq, dk)), _shape("W^O", tr["W_O"].shape), _shape("Y", (tq, d)), f"ε = {tr.ln_eps:g}"]
    )
    article_form = layer_norm_article_form(tr["residual"], tr.ln_eps)
    gap = float(np.abs(article_form - tr["normed"]).max())
    seen = "too small to see at 4 decimals" if gap < 5e-5 else "large enough to see at 4 decimals"
    st.caption(
        f"The article's form (x − μ)/(σ + ε) would differ from torch's by at most {gap:.1e} here, {seen}: "
        "the two part ways only when a row's spread σ comes close to ε."
    )
    for key, name, title in (
        ("ex7o", "output", "output = Z · W^O (W^O is ours)"),
        ("ex7r", "residual", "residual X + output"),
        ("ex7n", "normed", "LayerNorm(X + output), torch's form"),
    ):
        _chart(heatmap(tr[name], q_labels, _dims(d), title=title, col_title="dimension"), key)


# ---- the page -------------------------------------------------------------------------------


def render() -> None:
    st.title("Learn: attention from scratch")
    try:
        _render()
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("learn page failed")
        st.error(f"Something went wrong while drawing this page ({type(err).__name__}). Try other settings.")


def _render() -> None:
    _init_state()
    st.markdown(
        "Every number of one attention layer, computed in NumPy as you watch: type a sentence and "
        "follow it through the seven steps, or load an article's worked example and see its "
        "arithmetic checked."
    )
    for note in st.session_state.pop("learn_url_notes", []):
        st.warning(note, icon=":material/link:")
    mode = st.segmented_control(
        "What to compute", MODES, format_func=MODE_LABELS.get, key="learn_mode", required=True
    )
    mode = mode if mode in MODES else "sentence"
    if note := clean_widget_text("learn_text", MAX_CHARS, "sentence"):
        st.warning(note, icon=":material/content_cut:")
    text = st.session_state.get("learn_text") or ""
    if mode == "sentence":
        text = sentence_ui() or ""
        _render_sentence(text)
    elif mode == "bert":
        from dashboard.views.learn_real import render_real  # loads the model only when asked

        text = sentence_ui() or ""
        render_real(text)
    else:
        _render_example(EXAMPLES[mode])
    _write_url(mode, text)
    st.session_state["learn_saved"] = {k: st.session_state[k] for k in DEFAULTS if k in st.session_state}
