"""The learn page's cached computations: the three sources' traces, the worked examples' checks and
the figures. Nothing here draws; the real BERT comes from dashboard.engines, as on every page."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.lesson.toy import SaturationCurve, ToySettings, softmax_saturation
from core.lesson.toy import trace as toy_trace
from core.lesson.trace import LayerTrace
from core.lesson.worked_examples import EXAMPLES, StepCheck
from core.models.registry import BUNDLED_KEY, BUNDLED_SPEC
from dashboard.charts.heatmap import matrix_heatmap
from dashboard.charts.learn import saturation_figure
from dashboard.engines import load_engine, load_with_progress

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
def bert_trace(text: str, layer: int) -> tuple[LayerTrace, int]:
    """One layer (0-indexed) of the bundled BERT on at most MAX_BERT_TOKENS word pieces ([CLS] and
    [SEP] counted), and the text's full count of word pieces. The page loads the engine first, with
    its progress shown (bert_engine); a cached function draws nothing, so this one only fetches it."""
    engine = load_engine(BUNDLED_KEY, "numpy")
    enc = engine.encode(text)
    total = len(enc.ids)
    if total > MAX_BERT_TOKENS:
        # cut the text after the last word piece that still fits beside [CLS] and [SEP]
        text = text[: enc.offsets[MAX_BERT_TOKENS - 2][1]]
    return engine.trace(text, layer), total


@st.cache_data(max_entries=16, show_spinner=False)
def saturation(seed: int) -> SaturationCurve:
    return softmax_saturation(seed)


# Figures are cached as objects (cache_resource: no pickling). Building a Plotly figure costs
# milliseconds of validation, and a page holds a dozen; st.plotly_chart only reads them.
@st.cache_resource(max_entries=256, show_spinner=False)
def heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], **kwargs) -> go.Figure:
    """dashboard.charts.heatmap.matrix_heatmap, cached."""
    return matrix_heatmap(values, rows, cols, **kwargs)


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
