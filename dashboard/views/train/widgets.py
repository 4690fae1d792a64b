"""The train page's widgets: the run (recorded or your own), the settings, Start / Pause / Reset, and
the step control over the snapshots (Previous / Next on the clicker's keys, as explore's generate
view does it). Each `*_ui` draws and returns what was chosen; the work is in session.py."""

from __future__ import annotations

import streamlit as st

from dashboard.content import train as text
from dashboard.hosted import Limits
from dashboard.presenter import prev_next_ui
from dashboard.views.train import session
from dashboard.views.train.links import (
    KEYS,
    LEARNING_RATES,
    MAX_SEED,
    MIN_STEPS,
    SNAP_KEY,
    SOURCE_KEY,
    STEP_STEP,
    head_choices,
    max_steps,
)


def source_ui() -> str:
    """Recorded run or your own (offered only when the product has a recorded run)."""
    picked = st.segmented_control(
        text.SOURCE_LABEL,
        list(text.SOURCES),
        format_func=text.SOURCES.get,
        key=SOURCE_KEY,
        required=True,
        help=text.SOURCE_HELP,
        label_visibility="collapsed",
    )
    return picked or "own"


def settings_ui(limits: Limits, disabled: bool) -> None:
    """Layers, heads, steps, learning rate and seed (their values land in session state)."""
    ss = st.session_state
    heads = head_choices(limits)
    if ss.get(KEYS["heads"]) not in heads:
        ss[KEYS["heads"]] = heads[-1]
    if ss.get(KEYS["lr"]) not in LEARNING_RATES:
        ss[KEYS["lr"]] = min(LEARNING_RATES, key=lambda v: abs(v - float(ss.get(KEYS["lr"]) or 0)))
    ss[KEYS["steps"]] = min(max(int(ss.get(KEYS["steps"], MIN_STEPS)), MIN_STEPS), max_steps(limits))
    ss[KEYS["seed"]] = min(max(int(ss.get(KEYS["seed"], 0)), 0), MAX_SEED)
    cols = st.columns([1, 1.2, 1.3, 1.6, 1])
    with cols[0]:
        st.segmented_control(
            text.LAYERS_LABEL,
            [1, 2],
            key=KEYS["layers"],
            required=True,
            disabled=disabled,
            help=text.LAYERS_HELP,
        )
    with cols[1]:
        st.selectbox(text.HEADS_LABEL, heads, key=KEYS["heads"], disabled=disabled)
    with cols[2]:
        st.number_input(
            text.STEPS_LABEL,
            MIN_STEPS,
            max_steps(limits),
            step=STEP_STEP,
            key=KEYS["steps"],
            disabled=disabled,
        )
    with cols[3]:
        st.select_slider(
            text.LR_LABEL, LEARNING_RATES, key=KEYS["lr"], format_func=lambda v: f"{v:g}", disabled=disabled
        )
    with cols[4]:
        st.number_input(
            text.SEED_LABEL, 0, MAX_SEED, step=1, key=KEYS["seed"], disabled=disabled, help=text.SEED_HELP
        )
    if limits.hosted:
        st.caption(text.CAPPED.format(steps=max_steps(limits), heads=heads[-1]))


def controls_ui() -> None:
    """Start (or Resume) / Pause / Reset (the live section says where the run is)."""
    run, on = session.trainer(), session.running()
    resumable = run is not None and not run.done and run.settings == session.chosen_settings()
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button(
            text.RESUME if resumable else text.START,
            key="train_start",
            type="primary",
            icon=":material/play_arrow:",
            on_click=session.start,
            disabled=on,
            help=text.START_HELP,
        )
        st.button(
            text.PAUSE, key="train_pause", icon=":material/pause:", on_click=session.pause, disabled=not on
        )
        st.button(
            text.RESET,
            key="train_reset",
            icon=":material/restart_alt:",
            on_click=session.reset,
            disabled=run is None,
        )


def step_ui(steps) -> int:
    """The snapshot slider (labelled by training step) with Previous / Next on ← / PageUp and
    → / PageDown (a clicker); returns the snapshot's index."""
    ss = st.session_state
    n = len(steps)
    ss[SNAP_KEY] = min(max(int(ss.get(SNAP_KEY, n - 1)), 0), n - 1)
    with st.container(horizontal=True, vertical_alignment="bottom", key="train_step_row"):
        prev_next_ui("train", (text.PREV, text.NEXT), SNAP_KEY, 0, n - 1)
        if n > 1:
            st.select_slider(
                text.STEP_LABEL,
                options=list(range(n)),
                format_func=lambda i: f"{int(steps[i]):,}",
                key=SNAP_KEY,
            )
    return int(ss[SNAP_KEY])
