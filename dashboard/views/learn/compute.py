"""The learn page's cached computations: the sources' traces, the worked examples' checks and the
figures. Nothing here draws; the real BERT and the decoder come from dashboard.engines, as on every
page."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.lesson.attention import causal_mask, share_kv_heads
from core.lesson.layers import gelu, gelu_tanh, silu
from core.lesson.toy import SaturationCurve, ToySettings, softmax_saturation
from core.lesson.toy import trace as toy_trace
from core.lesson.trace import LayerTrace
from core.lesson.worked_examples import EXAMPLES, StepCheck
from core.models.bert import TextError
from core.models.registry import BUNDLED_KEY, BUNDLED_SPEC
from dashboard.charts.heatmap import PAGE, PRESENTER, matrix_heatmap
from dashboard.charts.learn import activation_figure, causal_figure, saturation_figure
from dashboard.content.pairs import LEARN_PAIR_TOO_LONG
from dashboard.engines import load_engine, load_with_progress
from dashboard.presenter import presenting

MAX_BERT_TOKENS = 64  # as for the toy model: every T x T matrix still fits on the screen


@st.cache_data(max_entries=64, show_spinner=False)
def sentence_trace(tokens: tuple[str, ...], settings: ToySettings) -> LayerTrace:
    return toy_trace(tokens, settings)


@st.cache_data(max_entries=8, show_spinner=False)
def example_checks(slug: str) -> tuple[StepCheck, ...]:
    return EXAMPLES[slug].checks()


def bert_engine():
    """The bundled model on the NumPy engine: the one object the explore page uses too. The first
    load in a process shows its stages (and, where the model is downloaded, a progress bar)."""
    return load_with_progress(BUNDLED_SPEC, "numpy")


# cache_resource: a trace holds the layer's weights (about 2 MB), shared rather than copied per run
@st.cache_resource(max_entries=16, show_spinner=False)
def bert_trace(text: str, layer: int, pair: str | None = None) -> tuple[LayerTrace, int]:
    """One layer (0-indexed) of the bundled BERT on at most MAX_BERT_TOKENS word pieces ([CLS] and
    [SEP] counted), and the text's full count of word pieces. The page loads the engine first, with
    its progress shown (bert_engine); a cached function draws nothing, so this one only fetches it.
    `pair`: sentence B, joined as BERT joins a pair ([CLS] A [SEP] B [SEP], segment ids 0 and 1);
    a pair is not cut (cutting B would change what it holds): TextError when it does not fit."""
    engine = load_engine(BUNDLED_KEY, "numpy")
    if pair is not None:
        total = len(engine.encode(text, pair).ids)
        if total > MAX_BERT_TOKENS:
            raise TextError(LEARN_PAIR_TOO_LONG.format(total=total, most=MAX_BERT_TOKENS))
        return engine.trace(text, layer, pair), total
    enc = engine.encode(text)
    total = len(enc.ids)
    if total > MAX_BERT_TOKENS:
        # cut the text after the last word piece that still fits beside [CLS] and [SEP]
        text = text[: enc.offsets[MAX_BERT_TOKENS - 2][1]]
    return engine.trace(text, layer), total


def block_steps(engine, ids: Sequence[int], layer: int) -> dict[str, np.ndarray]:
    """Block `layer`'s steps on token ids, as forward(ids, trace_layers=[layer]).steps[layer] holds
    them, from the blocks up to it only: the blocks after it change nothing it shows (on SmolLM2,
    layer 1 is one block's work, not thirty)."""
    ids = np.asarray(ids)
    engine.check_ids(ids, 0)
    return engine.layers_from(0, engine.embed(ids), stop=layer + 1, trace_layers=[layer]).steps[layer]


# cache_resource, as bert_trace: the trace holds the layer's weights, shared rather than copied
@st.cache_resource(max_entries=8, show_spinner=False)
def decoder_trace(model_key: str, text: str, layer: int) -> tuple[LayerTrace, int]:
    """One block (0-indexed) of the GPT-2 `model_key` (loaded on the NumPy engine beforehand) on the
    first MAX_BERT_TOKENS tokens of text, and the text's full count of tokens. Every array is the
    engine's own: forward(ids, trace_layers=[layer]).steps, the block's weights, and for the first
    block the two embedding tables' rows that X sums. Only the blocks up to `layer` run (block_steps)."""
    engine = load_engine(model_key, "numpy")
    ids = list(engine.encode(text).ids)
    total, ids = len(ids), ids[:MAX_BERT_TOKENS]
    steps = dict(block_steps(engine, ids, layer))
    # the engine's "normed" is LayerNorm_2 (the MLP's input), not BERT's post-LN result of step 7
    steps["ln2"] = steps.pop("normed")
    weights = engine.layers[layer]
    arrays = {**steps, "w_o": weights.w_o, "b_o": weights.b_o, "w_1": weights.w_1}
    arrays |= {"ln_gamma": weights.ln1_gamma, "ln_beta": weights.ln1_beta}
    for name in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v"):
        arrays[name] = getattr(weights, name)
    if layer == 0:  # learned positions: X is the sum of these two rows
        arrays["embeddings"] = engine.token_embeddings[ids]
        arrays["positions"] = engine.position_embeddings[: len(ids)]
    tokens = tuple(_token_label(engine.decode(i)) for i in ids)
    trace = LayerTrace(
        query_tokens=tokens,
        key_tokens=tokens,
        arrays=arrays,
        n_heads=engine.config.n_head,
        d_k=engine.config.n_embd // engine.config.n_head,
        scale=bool(engine.config.scale_attn_weights),
        mask=causal_mask(len(ids)),
        ln_eps=engine.config.layer_norm_epsilon,
        given=("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o", "w_1", "ln_gamma", "ln_beta"),
    )
    return trace, total


# cache_resource, as decoder_trace
@st.cache_resource(max_entries=8, show_spinner=False)
def llama_trace(model_key: str, text: str, layer: int) -> tuple[LayerTrace, int]:
    """One block (0-indexed) of the Llama `model_key` (SmolLM2), as decoder_trace: every array is the
    engine's own (block_steps: forward's traced steps, from the blocks up to it). Steps 2 to 6 draw
    one query head, so "key" and "value" are its group's, shared over the query heads
    (share_kv_heads); step 2 shows them before RoPE, and the RoPE stop shows the turned ones
    ("query_rot", "key_rot") that step 3 multiplies. The key/value heads themselves are kept as
    "key_kv" / "key_kv_rot" / "value_kv"."""
    engine = load_engine(model_key, "numpy")
    ids = list(engine.encode(text).ids)
    total, ids = len(ids), ids[:MAX_BERT_TOKENS]
    steps = block_steps(engine, ids, layer)
    heads, weights = engine.n_heads, engine.block_weights(layer)
    arrays = {name: steps[name] for name in ("x", "scores", "scaled", "masked", "probs", "context")}
    arrays |= {name: steps[name] for name in ("concat", "output", "residual", "ffn", "layer_output")}
    arrays |= {"rms1": steps["rmsnorm"], "rms2": steps["normed"], "query": steps["query_raw"]}
    arrays |= {"key": share_kv_heads(steps["key_raw"], heads), "value": share_kv_heads(steps["value"], heads)}
    arrays |= {"query_rot": steps["query"], "key_rot": share_kv_heads(steps["key"], heads)}
    arrays |= {"key_kv": steps["key_raw"], "key_kv_rot": steps["key"], "value_kv": steps["value"]}
    for name in ("w_q", "w_k", "w_v", "w_o", "w_gate", "w_up", "w_down", "norm1", "norm2"):
        arrays[name] = getattr(weights, name)
    tokens = tuple(_token_label(engine.decode(i)) for i in ids)
    trace = LayerTrace(
        query_tokens=tokens,
        key_tokens=tokens,
        arrays=arrays,
        n_heads=heads,
        d_k=engine.head_size,
        mask=causal_mask(len(ids)),
        ln_eps=engine.config.rms_norm_eps,
        given=("w_q", "w_k", "w_v", "w_o", "w_gate", "w_up", "w_down", "norm1", "norm2"),
    )
    return trace, total


def _token_label(text: str) -> str:
    """A decoded token as an axis label: its leading space left out (a token of spaces kept)."""
    return text.strip() or text


@st.cache_data(max_entries=16, show_spinner=False)
def saturation(seed: int) -> SaturationCurve:
    return softmax_saturation(seed)


# Figures are cached as objects (cache_resource: no pickling). Building a Plotly figure costs
# milliseconds of validation, and a page holds a dozen; st.plotly_chart only reads them.
@st.cache_resource(max_entries=256, show_spinner=False)
def heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], **kwargs) -> go.Figure:
    """dashboard.charts.heatmap.matrix_heatmap, cached."""
    return matrix_heatmap(values, rows, cols, **kwargs)


# A matrix on a 1920 x 1080 projector, under the deck's bar, the step's heading and its text: a
# 14-token sentence's rows at full height (720 px) ran past the screen's bottom edge
PRESENTER_MATRIX_PX = 440


def presenter_height(rows: Sequence[str]) -> int:
    """A matrix's height on a projector: its rows at the projector's size, up to PRESENTER_MATRIX_PX."""
    return min(PRESENTER_MATRIX_PX, 60 + PRESENTER.row_px * len(rows))


def matrix_figure(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], **kwargs) -> go.Figure:
    """A step's matrix (heatmap) sized for the page or, in presenter mode, for a projector: there no
    taller than presenter_height unless `height` says, so it fits under the step's heading and text."""
    if not presenting():
        return heatmap(values, rows, cols, sizing=PAGE, **kwargs)
    kwargs.setdefault("height", presenter_height(rows))
    return heatmap(values, rows, cols, sizing=PRESENTER, **kwargs)


@st.cache_resource(max_entries=64, show_spinner=False)
def causal_chart(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], **kwargs) -> go.Figure:
    """dashboard.charts.learn.causal_figure, cached."""
    return causal_figure(values, rows=rows, cols=cols, **kwargs)


@st.cache_resource(max_entries=32, show_spinner=False)
def saturation_chart(seed: int, d_k: int, scaling_on: bool) -> go.Figure:
    curve = saturation(seed)
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


GELU_RANGE = np.linspace(-4.0, 4.0, 161)  # the activation curves' inputs


def gelu_gap() -> float:
    """The largest gap between GELU's tanh form and its exact (erf) form over GELU_RANGE."""
    return float(np.abs(gelu_tanh(GELU_RANGE) - gelu(GELU_RANGE)).max())


@st.cache_resource(max_entries=2, show_spinner=False)
def silu_chart() -> go.Figure:
    """A Llama's SiLU (the gate of its SwiGLU MLP) beside ReLU and GELU, computed by core.lesson.layers."""
    x = GELU_RANGE
    return activation_figure(x, {"SiLU (Llama's gate)": silu(x), "ReLU": np.maximum(x, 0), "GELU": gelu(x)})


def gelu_chart() -> go.Figure:
    """GPT-2's GELU (tanh form) beside the exact form and ReLU, computed by core.lesson.layers."""
    x = GELU_RANGE
    return activation_figure(
        x, {"GELU, tanh form (GPT-2)": gelu_tanh(x), "GELU, exact (BERT)": gelu(x), "ReLU": np.maximum(x, 0)}
    )
