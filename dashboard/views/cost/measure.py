"""The cost page's measurements, shared by every session of a server.

The price curves are measured once per server and shape (model width, heads, length cap), one length
at a time under a lock with a bar that counts, asked for first when that would be long on this
machine (price_first, dashboard/long_work.py: SmolLM2's took about a minute on a busy laptop); each
length is kept as it is measured, so a rerun in the middle (any click: Streamlit stops the script
at the next bar update) resumes where it stopped, and a second session waits for the first instead
of measuring at the same time (two measurements at once would time each other). Variant timings and
the whole-model sweeps are cached too (st.cache_resource, bounded). For a decoder, one more token at
each context n with the KV cache and without it is measured the same way (kept per model and n,
resumable, under the same lock): a first visit times the short contexts within a couple of seconds,
the rest on request.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from core.cost.generation import next_token_curves
from core.cost.price import LENGTHS, Curve, Row, curves_from, measure_length, variant_curves
from core.cost.variant_model import Sweep, first_of_the_rest, sweep, sweep_radii, variant_effect
from core.cost.variants import Variant
from dashboard import long_work
from dashboard.content import cost as text
from dashboard.engines import compute_attention, load_engine
from dashboard.hosted import Limits

ENGINE = "numpy"  # the variants are an argument of the NumPy engine's forward pass
PERFORMER_M = (4, 16, 64, 256, 1024)
TIMED_CALLS = 6  # core.cost.price.measure_length calls each step once untimed, then 5 times


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
    lock: threading.RLock = field(default_factory=threading.RLock)  # re-entrant: price_first takes it first


@st.cache_resource(show_spinner=False)
def price_store() -> PriceStore:
    return PriceStore()


def price_curves(shape: PriceShape, progress=None) -> list[Curve]:
    """The measured curves of `shape`, measuring the lengths not yet measured on this server, calling
    progress(done, total) over them (price_first draws its bar)."""
    store = price_store()
    with store.lock:
        missing = [n for n in shape.lengths if (shape, n) not in store.rows]
        for done, n in enumerate(missing):
            if progress is not None:
                progress(done, len(missing))
            row: Row = measure_length(n, shape.d_model, shape.n_heads, heads_up_to=shape.max_heads)
            store.rows[(shape, n)] = row
        if missing and progress is not None:
            progress(len(missing), len(missing))
        return curves_from([(n, store.rows[(shape, n)]) for n in shape.lengths])


def _price_missing(shape: PriceShape) -> list[int]:
    rows = price_store().rows
    return [n for n in shape.lengths if (shape, n) not in rows]


def price_work(model_key: str, shape: PriceShape) -> long_work.Work:
    """Timing the lengths not yet measured: each step's multiply-adds (Q Kᵀ and the weights times V,
    for one head and, up to max_heads, a layer's; the four projections), TIMED_CALLS times each."""
    d_k, width, total = shape.d_model // shape.n_heads, shape.d_model, 0.0
    for n in _price_missing(shape):
        heads = shape.n_heads if n <= shape.max_heads else 0
        total += TIMED_CALLS * ((1 + heads) * 2 * n * n * d_k + 4 * n * width**2) + 3 * n * width**2
    return long_work.Work("price", model_key, runs=1, positions=0, layers=0, width=width, other=total)


def price_first(model_key: str, shape: PriceShape) -> bool:
    """The price curves of `shape` measured now when they are not yet: at once when that is short
    here, else after the button the ask draws (long_work.may_start), with a bar that counts. False
    while the page waits for the button."""
    missing = _price_missing(shape)
    if not missing:
        return True
    work = price_work(model_key, shape)
    what = text.PRICE_ASK.format(n=len(missing), first=missing[0], last=missing[-1])
    if not long_work.may_start(work, shape, what, text.PRICE_BUTTON.format(n=len(missing))):
        return False
    with long_work.counting(work, text.PRICE_PROGRESS, first=price_store().lock) as progress:
        price_curves(shape, progress)
    return True


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

AUTO_SECONDS = 2.0  # what a first visit may spend timing; the rest of the sweep waits for a button
# the price store's rows of one more token: (NEXT, model key, n) -> (Row, wall seconds, whether it
# was measured while a page opened)
NEXT = "next"
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


@dataclass(frozen=True)
class NextTiming:
    contexts: tuple[int, ...]  # every context to time
    rows: tuple[tuple[int, Row], ...]  # the ones measured so far, shortest first
    longest: tuple[int, float]  # the longest context measured and the wall seconds it took
    estimate: float  # seconds the button's sweep should take (estimate; and the page open's again)
    to_time: int  # contexts the button's sweep times: those not measured, and the page open's again

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.contexts)

    def curves(self) -> tuple[Curve, Curve]:
        """(with the cache, recomputing) over the measured contexts."""
        found = {c.name: c for c in curves_from(list(self.rows))}
        return found[CACHED], found[RECOMPUTED]


def estimate(measured: tuple[int, float], contexts) -> float:
    """Seconds that timing `contexts` should take: the wall time of the longest context measured
    (n, seconds), scaled with n + 1. A rough guide: a pass's fixed costs, which dominate short
    contexts, weigh less as n grows, and its n² part more."""
    n, seconds = measured
    return sum(seconds * (m + 1) / (n + 1) for m in contexts)


def next_timing(model_key: str, engine, contexts: tuple[int, ...], everything: bool) -> NextTiming:
    """One more token at each context (core.cost.generation.next_token_curves, one context at a
    time, shortest first, kept in the price store as it is measured, under its lock: a rerun
    resumes, and two measurements never time each other). On a page's open, the first context is
    always measured and the next ones while their estimate keeps the visit within AUTO_SECONDS;
    `everything` measures the rest with a progress bar."""
    store = price_store()
    with store.lock:
        if everything:
            _sweep(store, model_key, engine, contexts)
        else:
            _on_open(store, model_key, engine, contexts)
        found = [
            (n, store.rows[(NEXT, model_key, n)]) for n in contexts if (NEXT, model_key, n) in store.rows
        ]
    longest = (found[-1][0], found[-1][1][1])
    rest = [n for n in contexts if n > longest[0]]
    again = [wall for _, (_, wall, on_open) in found if on_open]  # a sweep times these again
    rows = tuple((n, row) for n, (row, *_) in found)
    return NextTiming(contexts, rows, longest, estimate(longest, rest) + sum(again), len(rest) + len(again))


def _on_open(store: PriceStore, model_key: str, engine, contexts) -> None:
    """The first context, then each next one while the visit's timing stays within AUTO_SECONDS."""
    spent = 0.0
    for n in contexts:
        measured = [m for m in contexts if (NEXT, model_key, m) in store.rows]
        if n in measured:
            continue
        if measured:
            last = measured[-1]
            if spent + estimate((last, store.rows[(NEXT, model_key, last)][1]), [n]) > AUTO_SECONDS:
                break
        spent += _measure_next(store, model_key, engine, n, on_open=True)


def _sweep(store: PriceStore, model_key: str, engine, contexts) -> None:
    """Every context not yet measured, and again those a page's open measured: the browser was busy
    drawing the page then, and its work counted in the clock (a button's sweep runs while it waits)."""
    rows = store.rows
    todo = [n for n in contexts if (NEXT, model_key, n) not in rows or rows[(NEXT, model_key, n)][2]]
    bar = st.progress(0.0) if len(todo) > 1 else None
    for done, n in enumerate(todo):
        if bar is not None:
            bar.progress(done / len(todo), text=text.NEXT_MEASURING.format(n=n, done=done, total=len(todo)))
        _measure_next(store, model_key, engine, n, on_open=False)
    if bar is not None:
        bar.empty()


def _measure_next(store: PriceStore, model_key: str, engine, n: int, on_open: bool) -> float:
    """Time one more token at context n into the store; the wall seconds it took."""
    if not any(key[:2] == (NEXT, model_key) for key in store.rows):
        # once untimed: a model's first pass pays for page faults on its weights, which would
        # inflate the first wall time, and the estimate scaled from it
        engine.forward(np.zeros(1, dtype=np.int64))
    start = time.perf_counter()
    cached, recomputed = next_token_curves(engine, contexts=(n,))
    row = {c.name: (c.seconds[0], c.peak_bytes[0]) for c in (cached, recomputed)}
    wall = time.perf_counter() - start
    store.rows[(NEXT, model_key, n)] = (row, wall, on_open)
    return wall
