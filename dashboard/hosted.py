"""Hosted mode: the limits of the public demo (Streamlit Community Cloud).

Turned on by the environment variable ATTENTION_EXPLORER_HOSTED=1 or by `hosted = true` in
.streamlit/secrets.toml (the app's Secrets on Community Cloud). In hosted mode only allowlisted
models load (the bundled one and the curated Hub ids; no free-text ids or local paths, from the
picker or from a link), inputs are capped lower, the lines view draws fewer lines, each visitor
may send a bounded number of new texts a minute, and only engines that run without PyTorch are
offered, so torch is never imported. The setting is read on every run (`current_limits()`).

A curated model whose memory does not fit the demo (`CuratedModel.hosted` is False: the decoders,
measured by the Cloud simulation in bench/README.md) is left out of the hosted picker, unless
ATTENTION_EXPLORER_HOSTED_MODELS names it (comma-separated Hub ids): for a host with more memory,
and for the simulation that measures it. Ids that are not curated are ignored.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

import streamlit as st

TRUE_WORDS = {"1", "true", "yes", "on"}
MB = 2**20
MORE_MODELS_SETTING = "ATTENTION_EXPLORER_HOSTED_MODELS"


@dataclass(frozen=True)
class Limits:
    hosted: bool  # True on the public demo
    max_tokens: int  # explore page: longer inputs are truncated, with a notice
    allow_custom_models: bool  # free-text Hub ids and local directories
    allow_torch_engine: bool  # the PyTorch reference engine (imports torch: ~4 s, ~450 MB)
    max_text_chars: int  # characters kept from a text box or URL before tokenising
    max_lines: int  # lines view: at most this many lines in one figure (fewer per token beyond it)
    max_texts_per_minute: int | None  # new texts one session may analyse a minute, over every page
    max_price_n: int  # cost page: the longest sequence whose attention is timed
    max_price_layer_n: int  # cost page: the longest for a layer's heads at once
    more_models: tuple[str, ...] = ()  # hosted: curated models offered although marked too large
    max_train_steps: int = 5000  # train page: the longest run one session may ask for
    max_train_heads: int = 8  # train page: heads per layer (the width is fixed: TrainSettings.width)
    max_trainers: int = 2  # train page: runs computing at once in this process; the others wait their turn
    shared_result_bytes: int = 320 * MB  # results kept for every session (engines.compute_attention)
    session_result_bytes: int = 512 * MB  # results one session keeps for the page it shows (session_result)


LOCAL = Limits(
    hosted=False,
    max_tokens=512,
    allow_custom_models=True,
    allow_torch_engine=True,
    max_text_chars=20_000,
    max_lines=50_000,
    max_texts_per_minute=None,
    max_price_n=4096,
    max_price_layer_n=2048,  # a layer's 12 heads at 4096 tokens hold about 4 GB
)
HOSTED = Limits(
    hosted=True,
    max_tokens=128,
    allow_custom_models=False,
    allow_torch_engine=False,
    max_text_chars=2_000,
    max_lines=6_000,
    max_texts_per_minute=30,
    max_price_n=1024,  # the demo's memory: a layer's heads at 1024 tokens hold about 250 MB
    max_price_layer_n=512,
    max_train_steps=1500,  # under a minute of NumPy training (30 ms a step) with the CPU to itself
    max_train_heads=4,
    max_trainers=2,  # the demo's cores: thirty students take turns in slices of half a second
    # the demo's 690 MB less both shipped models (about 580 MB resident) and two passes at once leave
    # about 50 MB: fifteen SmolLM2 results of 30 tokens (3 MB) for the room, and one for each
    # session of its own (thirty of them are already more than the 690 MB hold: bench/classroom.py)
    shared_result_bytes=48 * MB,
    session_result_bytes=4 * MB,
)


def _secret_flag() -> bool:
    try:
        return str(st.secrets.get("hosted", "")).strip().lower() in TRUE_WORDS
    except Exception:  # no secrets file, or not running under Streamlit: not hosted
        return False


def current_limits() -> Limits:
    env = os.environ.get("ATTENTION_EXPLORER_HOSTED", "").strip().lower()
    if not (env in TRUE_WORDS or _secret_flag()):
        return LOCAL
    more = tuple(m.strip() for m in os.environ.get(MORE_MODELS_SETTING, "").split(",") if m.strip())
    return replace(HOSTED, more_models=more) if more else HOSTED


# ---- a classroom on SmolLM2: what was measured ---------------------------------------------------


@dataclass(frozen=True)
class RoomMeasured:
    """The classroom benchmark's figures for a room on one hosted server (bench/classroom.py,
    `python -m bench.classroom --llm`; bench/README.md). The hosted demo's line about rooms is
    written from these, so a new measurement changes it here only."""

    students: int
    peak_mb: float  # the server's peak resident memory
    own_p95_s: float  # a student's own sentence on SmolLM2 (explore and compare), 95th percentile
    errors: int
    preset_p95_s: float | None = None  # the teacher's example and preset pair, 95th percentile
    memory_mb: float = 690  # Community Cloud's guaranteed memory
    own_target_s: float = 15.0  # the bounds (issue 49)
    preset_target_s: float = 3.0

    def holds(self) -> bool:
        return (
            self.peak_mb <= self.memory_mb
            and self.errors == 0
            and self.own_p95_s <= self.own_target_s
            and (self.preset_p95_s is None or self.preset_p95_s <= self.preset_target_s)
        )


# bench/README.md, "A classroom on SmolLM2 (issue 49)": `python -m bench.classroom --llm` on a quiet
# machine, 2026-11-29, with the queue and the shared results. Own sentences: explore 6.2 s, compare's own
# pair 13.8 s (p95); the teacher's inputs: explore's example 0.6 s, compare's preset 16.5 s (p95).
SMOLLM2_ROOM = RoomMeasured(students=30, peak_mb=956, own_p95_s=13.8, errors=0, preset_p95_s=16.5)


def room_note(room: RoomMeasured = SMOLLM2_ROOM) -> str | None:
    """The line the hosted demo shows where SmolLM2 is picked when the measured room does not fit
    this server, with the figures; None when it does."""
    if room.holds():
        return None
    missed = [
        f"memory peaked at {room.peak_mb:,.0f} MB of the demo's {room.memory_mb:,.0f} MB"
        if room.peak_mb > room.memory_mb
        else "",
        f"one in twenty of their own sentences took over {room.own_p95_s:.0f} s"
        if room.own_p95_s > room.own_target_s
        else "",
        f"one in twenty opened the teacher's example or preset after over {room.preset_p95_s:.0f} s"
        if room.preset_p95_s is not None and room.preset_p95_s > room.preset_target_s
        else "",
        f"{room.errors} of their clicks failed" if room.errors else "",
    ]
    said = [m for m in missed if m]
    return (
        f"A whole class on SmolLM2 is too much for this public demo: with {room.students} students at "
        f"once, {', '.join(said[:-1]) + ' and ' if len(said) > 1 else ''}{said[-1]} "
        "(bench/classroom.py). A few visitors at a time are fine; for a class, run the app on the "
        "classroom's own machine (docs/hosting.md)."
    )


# ---- new texts a minute ---------------------------------------------------------------------------


class TooManyTexts(Exception):
    """This session sent more new texts in the last minute than hosted mode allows."""


TOO_MANY_TEXTS = (
    "This public demo analyses at most {limit} new texts a minute for each visitor, so that everyone "
    "gets a turn. Wait a few seconds, then try again."
)


def _clock() -> float:
    return time.monotonic()


def count_new_text(place: str, key: tuple, limit: int | None) -> None:
    """Hosted mode: raise TooManyTexts past `limit` new texts in 60 s for this session, counted over
    every page, so one visitor cannot keep the shared CPU busy. `key` names the input (model,
    engine, text, token cap); `place` is where it is shown ("explore", "compare2"…): an input already
    shown there is not counted again."""
    ss = st.session_state
    if limit is None or ss.get(f"{place}_counted_key") == key:
        return
    now = _clock()
    recent = [t for t in ss.get("hosted_text_times", []) if now - t < 60.0]
    if len(recent) >= limit:
        ss["hosted_text_times"] = recent
        raise TooManyTexts
    ss["hosted_text_times"] = [*recent, now]
    ss[f"{place}_counted_key"] = key
