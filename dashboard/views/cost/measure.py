"""The cost page's measurements, shared by every session of a server.

The price curves are measured once per server and shape (model width, heads, length cap), one length
at a time under a lock with a progress bar; each length is kept as it is measured, so a rerun in the
middle (any click: Streamlit stops the script at the next bar update) resumes where it stopped, and
a second session waits for the first instead of measuring at the same time (two measurements at
once would time each other). Variant timings and the whole-model sweeps are cached too
(st.cache_resource, bounded). For a decoder, one more token at each context n with the KV cache and
without it is measured the same way (kept per model and n, resumable, under the same lock), the first
context at once and the rest at once only when that first one predicts a short wait.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from core.cost.generation import next_token_curves
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


# ---- one more token (decoders) ---------------------------------------------------------------------

AUTO_SECONDS = 2.0  # a sweep estimated to take longer waits for the button
NEXT = "next"  # the price store's rows of one more token: (NEXT, model key, n) -> Row
RECOMPUTED = "recomputing the context"  # core.cost.generation's curve names
CACHED = "with the KV cache"


def next_contexts(max_tokens: int, cap: int) -> tuple[int, ...]:
    """The contexts n timed for a model of `max_tokens` positions (n + 1 of them are used), at most
    `cap`: powers of two from 16 and the longest, as core.cost.generation.CONTEXTS for GPT-2; from
    1 for a short model, so that a curve has three points when it can."""
    last = min(max_tokens - 1, cap)
    if last < 1:
        return ()
    for start in (16, 1):
        found = [2**i for i in range(last.bit_length()) if start <= 2**i < last] + [last]
        if len(found) >= 3:
            break
    return tuple(found)


def _work(engine, new: int, past: int) -> float:
    """FLOPs of a forward pass of `new` tokens after `past` cached ones, per layer 24·T·D² (the
    projections and the MLP) and 4·T·(P + T)·D (scores and weighted sum), and the last position's
    logits, 2·D·V: what the estimate scales by."""
    d, config = engine.config.n_embd, engine.config
    layer = 24 * new * d * d + 4 * new * (past + new) * d
    return engine.n_layers * layer + 2 * d * config.vocab_size


def _context_work(engine, n: int) -> float:
    """What next_token_curves runs at context n: the cache built once, three cached steps, three
    full passes over n + 1 positions."""
    return _work(engine, n, 0) + 3 * _work(engine, 1, n) + 3 * _work(engine, n + 1, 0)


@dataclass(frozen=True)
class NextTiming:
    contexts: tuple[int, ...]  # every context to time
    rows: tuple[tuple[int, Row], ...]  # the ones measured so far, shortest first
    probe: float  # seconds of one full pass at the first context (the fastest of its three)
    estimate: float  # seconds the contexts not yet measured are expected to take

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.contexts)

    def curves(self) -> tuple[Curve, Curve]:
        """(with the cache, recomputing) over the measured contexts."""
        found = {c.name: c for c in curves_from(list(self.rows))}
        return found[CACHED], found[RECOMPUTED]


def next_timing(model_key: str, engine, contexts: tuple[int, ...], everything: bool) -> NextTiming:
    """One more token at each context (core.cost.generation.next_token_curves, one context at a
    time, kept in the price store as it is measured, under its lock: a rerun resumes, and two
    measurements never time each other). The first context is always measured, as the probe that
    the estimate scales; the rest when `everything` or when the estimate is under AUTO_SECONDS."""
    store = price_store()
    key = (NEXT, model_key)
    with store.lock:
        _measure_next(store, key, engine, contexts[:1], None)
        if everything or _estimate(store, key, engine, contexts) <= AUTO_SECONDS:
            _measure_next(store, key, engine, contexts[1:], text.NEXT_MEASURING)
        rows = tuple((n, store.rows[(*key, n)]) for n in contexts if (*key, n) in store.rows)
        probe = store.rows[(*key, contexts[0])][RECOMPUTED][0]
        return NextTiming(contexts, rows, probe, _estimate(store, key, engine, contexts))


def _estimate(store: PriceStore, key: tuple, engine, contexts) -> float:
    """Seconds the contexts not yet measured should take: one full pass at the first context (the
    fastest of three: the first call of a model pays for page faults), scaled by each one's work
    (_context_work)."""
    missing = [n for n in contexts if (*key, n) not in store.rows]
    first = contexts[0]
    seconds = store.rows[(*key, first)][RECOMPUTED][0]
    return seconds * sum(_context_work(engine, n) for n in missing) / _work(engine, first + 1, 0)


def _measure_next(store: PriceStore, key: tuple, engine, contexts, message: str | None) -> None:
    """Time the contexts not yet in the store, with a progress bar when `message` is given."""
    missing = [n for n in contexts if (*key, n) not in store.rows]
    bar = st.progress(0.0) if message and missing else None
    for done, n in enumerate(missing):
        if bar is not None:
            bar.progress(done / len(missing), text=message.format(n=n, done=done, total=len(missing)))
        cached, recomputed = next_token_curves(engine, contexts=(n,))
        store.rows[(*key, n)] = {c.name: (c.seconds[0], c.peak_bytes[0]) for c in (cached, recomputed)}
    if bar is not None:
        bar.empty()
