"""Nothing long starts by itself: a view whose work would take longer than ASK_AFTER seconds on this
machine asks first, at the top of the view, saying how long, and then counts it with a bar.

The estimate: the multiply-adds of the work (per token position a transformer layer does about 12·D²
of them: Q, K, V and the output projection 4·D², the feed-forward 8·D²; a next-token distribution
V·D more), over this machine's speed, measured once per process on a float32 matrix product of a
transformer block's shape (the median of a few), times the ratio between what such work of this
model took here the last time and its multiply-adds' share (PRIOR until it has been timed:
conservative, so a long work is not estimated short). A pass on its own also pays fixed costs
(reading the weights, the per-layer steps), counted as PASS_POSITIONS positions more.

A view calls `may_start(work, sig, ...)`: True when the work is short or was asked for this input in
this session, else it draws the ask line and its button and returns False (the view then draws
nothing that needs the work). The work runs inside `counting(work, said)`, whose callback moves a
bar "Ablated 40 of 270 heads · about 6 s left" and which records the time taken. `shelf(kind, size)`
keeps finished results for every session of the server, so a view knows a result is ready without
asking (a result computed by another session is not asked for again).

ASK_AFTER is read from the environment variable ATTENTION_EXPLORER_ASK_AFTER (seconds; "inf": never
ask), default 3.
Letters: L layers, D width, V vocabulary.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

import numpy as np
import streamlit as st

from dashboard.content import long_work as text
from dashboard.work_queue import in_turn, place_line

DEFAULT_ASK_AFTER = 3.0
# seconds taken per second estimated, before this model's work of a kind has been timed: measured
# 0.6-2.2 for SmolLM2's batched sweeps and corpus pass, 6-10 for the small bundled model's single
# passes (Python's own steps weigh more there) on a 2-core machine under load (bench/README.md)
PRIOR = 3.0
PASS_POSITIONS = 32  # a pass's fixed costs, in token positions' worth of multiply-adds
SPEED_SHAPE = (128, 768, 3072)  # the product timed: 128 positions through a 768-wide block's W1
SPEED_TRIES = 5
PIECES_PER_WORD = 1.5  # token positions per word of English, generously (text_positions)
STARTED = "long_work_started"  # session key: {kind: [input signatures asked for]}
REMEMBERED = 16  # inputs remembered per kind in a session
UPDATES = 50  # moves of a bar, at most, however many steps the work has


def ask_after() -> float:
    """Seconds of estimated work above which a view asks first."""
    raw = os.environ.get("ATTENTION_EXPLORER_ASK_AFTER", "").strip()
    try:
        return float(raw) if raw else DEFAULT_ASK_AFTER
    except ValueError:
        return DEFAULT_ASK_AFTER


# ---- the estimate -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """A piece of work: `runs` passes of a model over `positions` token positions each, plus
    `outputs` next-token distributions per pass (a decoder's output read)."""

    kind: str  # what is done: "ablation", "attribution", "corpus", "atlas"...
    model_key: str
    runs: int
    positions: int
    layers: int
    width: int
    vocab: int = 0
    outputs: int = 0
    other: float = 0.0  # multiply-adds besides the passes (the cost page times bare products)
    batched: bool = False  # the runs go through the model together: no pass pays its fixed costs alone

    def multiply_adds(self) -> float:
        per_position = 12 * self.layers * self.width**2
        positions = self.positions + (0 if self.batched else PASS_POSITIONS)
        per_run = positions * per_position + self.outputs * self.vocab * self.width
        return float(self.runs) * per_run + self.other

    @classmethod
    def on(cls, kind: str, model_key: str, result, engine, runs: int, outputs: int = 0) -> Work:
        """`runs` passes over `result`'s input, L and D read from its hidden states (L + 1, T, D), V
        from the engine when it has a next-token output."""
        _, positions, width = np.shape(result.hidden_states)
        vocab = int(getattr(engine, "vocab_size", 0) or 0)
        return cls(kind, model_key, runs, positions, result.n_layers, width, vocab, outputs)

    @classmethod
    def over(cls, kind: str, model_key: str, engine, sentences) -> Work:
        """One pass per sentence (text_positions each): a corpus read by `engine`."""
        layers, width, _ = model_shape(engine)
        return cls(kind, model_key, len(sentences), text_positions(sentences), layers, width)


def text_positions(sentences) -> int:
    """Token positions a pass over one of `sentences` reads, on average: a generous guess from the
    words (PIECES_PER_WORD each, and two special tokens), the texts not tokenized to ask."""
    words = sum(len(s.split()) for s in sentences) / max(len(sentences), 1)
    return max(1, round(words * PIECES_PER_WORD) + 2)


def prepare_command(model_key: str) -> str:
    """The command that computes a model's corpus vectors and atlas ahead of time (core/prepare.py),
    the model named when it is plain to type."""
    named = f" --model {model_key}" if re.fullmatch(r"[\w./-]+", model_key) else ""
    return f"python -m core prepare{named}"


def model_shape(engine) -> tuple[int, int, int]:
    """(L, D, V) of an engine (V 0 when it has no next-token output): the NumPy engines name D
    `width` or keep it in their config, the torch references in their model's."""
    config = getattr(engine, "config", None) or getattr(getattr(engine, "model", None), "config", None)
    width = getattr(engine, "width", None) or getattr(config, "hidden_size", None)
    width = width or getattr(config, "n_embd", 0)
    return int(engine.n_layers), int(width), int(getattr(engine, "vocab_size", 0) or 0)


_speed: list[float] = []  # multiply-adds per second, measured once per process
_ratios: dict[tuple[str, str], float] = {}  # (model key, kind) -> seconds taken / seconds estimated
_lock = threading.Lock()


def measure_speed() -> float:
    """Multiply-adds per second of a float32 product of SPEED_SHAPE, the median of SPEED_TRIES (a few
    tens of ms in all): on a busy machine the median sees the share of the cores a long work gets,
    where the best would catch a quiet moment."""
    rows, width, wide = SPEED_SHAPE
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, width), dtype=np.float32)
    b = rng.standard_normal((width, wide), dtype=np.float32)
    times = []
    for _ in range(SPEED_TRIES):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return rows * width * wide / max(float(np.median(times)), 1e-9)


def machine_speed() -> float:
    with _lock:
        if not _speed:
            _speed.append(measure_speed())
        return _speed[0]


def _raw_seconds(work: Work) -> float:
    return work.multiply_adds() / machine_speed()


def estimate(work: Work) -> float:
    """Seconds the work should take here: its multiply-adds at this machine's speed, times what such
    work of this model took the last time (PRIOR before)."""
    with _lock:
        ratio = _ratios.get((work.model_key, work.kind), PRIOR)
    return _raw_seconds(work) * ratio


def record(work: Work, seconds: float) -> None:
    """What the work took: the next estimate of this kind on this model scales with it."""
    raw = _raw_seconds(work)
    if raw > 0 and seconds > 0:
        with _lock:
            _ratios[(work.model_key, work.kind)] = seconds / raw


def about(seconds: float) -> str:
    """ "6 s", "25 s", "2 min": whole seconds up to 10, then fives, minutes from 90 s."""
    if seconds >= 90:
        return text.MINUTES.format(n=max(2, round(seconds / 60)))
    step = 1 if seconds < 10 else 5
    return text.SECONDS.format(n=max(1, step * round(seconds / step)))


# ---- asking first -----------------------------------------------------------------------------------


def _asked(kind: str) -> list:
    started = st.session_state.setdefault(STARTED, {})
    return started.setdefault(kind, [])


def may_start(work: Work, sig: Hashable, what: str, button: str, note: str = "") -> bool:
    """Whether the view may do `work` for the input `sig` now: it is short, or its button was pressed
    for this input in this session. Otherwise one line says how long it takes (with `note` after it)
    and the button starts it; False until it is pressed."""
    asked = _asked(work.kind)
    if sig in asked:
        return True
    seconds = estimate(work)
    if seconds <= ask_after():
        return True
    line = text.ASK if work.runs > 1 else text.ASK_ONE_RUN
    said = line.format(what=what, about=about(seconds), runs=work.runs)
    slot = st.empty()  # the ask goes once pressed: the bar takes its place
    with slot.container():
        st.caption(said + (f" {note}" if note else ""))
        key, icon = f"long_work_{work.kind}", ":material/play_arrow:"
        if not st.button(button, key=key, icon=icon, help=text.BUTTON_HELP):
            return False
    slot.empty()
    asked.append(sig)
    del asked[:-REMEMBERED]
    return True


# ---- counting ---------------------------------------------------------------------------------------


@contextmanager
def counting(
    work: Work | None, said: str, *, first: AbstractContextManager | None = None
) -> Iterator[Callable[[int, int], None]]:
    """A bar that counts: `said` ("Ablated {done} of {total} heads") and the time left at the pace
    so far. Yields the progress(done, total) callback; the bar goes when the work is done, and the
    time it took is recorded for the next estimate (`work` None: not recorded).
    The work holds one of the server's workers (dashboard.work_queue): a page waiting for one says
    its place in line first. `first`: the lock of what is computed (a re-entrant one, which the
    computation takes again), taken before the worker: a session waiting for another session's same
    computation must not hold one of the room's few workers while it waits."""
    with first or nullcontext(), in_turn(place_line()):
        yield from _counted(work, said)


def _counted(work: Work | None, said: str) -> Iterator[Callable[[int, int], None]]:
    bar = st.progress(0.0, text=said.format(done=0, total="…"))
    start = time.perf_counter()
    seen = {"total": 0}  # "first": the count it started at; "done": the last count
    guess = estimate(work) if work is not None else None

    def _left(elapsed: float, share: float) -> float:
        """Seconds left: the pace so far, leaning on the estimate while little is done (a sweep's
        first batch also pays for starting up, which would make the pace alone too slow)."""
        by_pace = elapsed / share * (1 - share)
        return by_pace if guess is None else share * by_pace + (1 - share) * max(guess - elapsed, 0.0)

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        first = seen.setdefault("first", done)  # a resumed work starts past 0
        seen["total"], seen["done"] = total, done
        if done < total and done % max(1, total // UPDATES):
            return
        line = said.format(done=done, total=total)
        if first < done < total:
            line += text.LEFT.format(about=about(_left(now - start, (done - first) / (total - first))))
        bar.progress(min(1.0, done / max(total, 1)), text=line)

    try:
        yield progress
    except Exception:  # an error the view says; a rerun stopping the script (not an Exception) leaves
        bar.empty()  # the bar to the next run
        raise
    bar.empty()
    # recorded when it was computed here to the end (not read from disk after all), as if whole
    share = 1.0 - seen.get("first", 0) / max(seen["total"], 1)  # a resumed work did less
    if work is not None and seen["total"] and seen.get("done") == seen["total"] and share > 0:
        record(work, (time.perf_counter() - start) / share)


# ---- finished results, shared -----------------------------------------------------------------------


class Shelf:
    """The last `size` results of one kind of work, shared by every session of the server."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def put(self, key: Hashable, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def shelf(kind: str, size: int) -> Shelf:
    """The server's shelf for `kind` (one per kind and size)."""
    return Shelf(size)
