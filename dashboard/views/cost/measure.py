"""The cost page's measurements, shared by every session of a server.

The price curves are measured once per server and shape (model width, heads, length cap), one length
at a time under a lock with a progress bar; each length is kept as it is measured, so a rerun in the
middle (any click: Streamlit stops the script at the next bar update) resumes where it stopped, and
a second session waits for the first instead of measuring at the same time (two measurements at
once would time each other). Variant timings and the whole-model sweeps are cached too
(st.cache_resource, bounded).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from core.cost.price import LENGTHS, Curve, Row, curves_from, measure_length, variant_curves
from core.cost.variant_model import Sweep, first_of_the_rest, sweep, sweep_radii, variant_effect
from core.cost.variants import Variant
from dashboard.content import cost as text
from dashboard.engines import compute_attention, load_engine
from dashboard.hosted import Limits

ENGINE = "numpy"  # the variants are an argument of the NumPy engine's forward pass
PERFORMER_M = (4, 16, 64, 256, 1024)


@dataclass(frozen=True)
class PriceShape:
    d_model: int
    n_heads: int
    max_n: int
    max_heads: int  # the layer's curve stops here

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(n for n in LENGTHS if n <= self.max_n)


def price_shape(d_model: int, n_heads: int, limits: Limits) -> PriceShape:
    """What is timed for a model of this width, within the server's limits (dashboard.hosted)."""
    return PriceShape(d_model, n_heads, min(limits.max_price_n, LENGTHS[-1]), limits.max_price_layer_n)


@dataclass
class PriceStore:
    rows: dict = field(default_factory=dict)  # (shape, n) -> Row
    lock: threading.Lock = field(default_factory=threading.Lock)


@st.cache_resource(show_spinner=False)
def price_store() -> PriceStore:
    return PriceStore()


def price_curves(shape: PriceShape) -> list[Curve]:
    """The measured curves of `shape`, measuring the lengths not yet measured on this server with a
    progress bar in the page."""
    store = price_store()
    with store.lock:
        missing = [n for n in shape.lengths if (shape, n) not in store.rows]
        if missing:
            bar = st.progress(0.0, text=text.MEASURING.format(n=missing[0], done=0, total=len(missing)))
            for done, n in enumerate(missing):
                bar.progress(
                    done / len(missing), text=text.MEASURING.format(n=n, done=done, total=len(missing))
                )
                row: Row = measure_length(n, shape.d_model, shape.n_heads, heads_up_to=shape.max_heads)
                store.rows[(shape, n)] = row
            bar.empty()
        return curves_from([(n, store.rows[(shape, n)]) for n in shape.lengths])


@st.cache_resource(max_entries=32, show_spinner=False)
def variant_timing(variant: Variant, d_k: int) -> tuple[Curve, Curve]:
    """Full attention's and the variant's output time at n = 16 .. 1024 (core.cost.price.variant_curves)."""
    return variant_curves(variant, d_k)


@st.cache_resource(max_entries=16, show_spinner=False)
def in_every_head(
    model_key: str, sentence: str, max_tokens: int, variant: Variant
) -> tuple[float, np.ndarray]:
    """`variant` in every head of the model on `sentence` (compute_attention's cached result): the
    embedding's change and each layer's (core.cost.variant_model.variant_effect)."""
    result = compute_attention(model_key, ENGINE, sentence, max_tokens)
    return variant_effect(load_engine(model_key, ENGINE), result, variant)


@dataclass(frozen=True)
class Sweeps:
    window: Sweep  # (radius, embedding change)
    window_answer: int | None  # the smallest radius from which on every change is within THRESHOLD
    performer: Sweep  # (m, embedding change)
    performer_from: int | None


@st.cache_resource(max_entries=8, show_spinner=False)
def sweeps(model_key: str, sentence: str, max_tokens: int) -> Sweeps:
    """The window radii of core.cost.variant_model.sweep_radii and the Performer's m in PERFORMER_M."""
    engine = load_engine(model_key, ENGINE)
    result = compute_attention(model_key, ENGINE, sentence, max_tokens)
    window = sweep(engine, result, Variant("window"), "w", sweep_radii(result.n_tokens))
    performer = sweep(engine, result, Variant("performer"), "m", PERFORMER_M)
    return Sweeps(window, first_of_the_rest(window), performer, first_of_the_rest(performer))
