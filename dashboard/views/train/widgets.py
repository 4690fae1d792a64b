"""The train page's widgets: the task (the letter GPT-2 or the translator), the run (recorded or your
own), the settings, Start / Pause / Reset, and the step control over the snapshots (Previous / Next
on the clicker's keys, as explore's generate view does it). Each `*_ui` draws and returns what was
chosen; the work is in session.py. Every task's own run has its own settings' keys (links.task_keys)."""

from __future__ import annotations

import streamlit as st

from dashboard.content import train as text
from dashboard.content import train_translate as tr_text
from dashboard.hosted import Limits
from dashboard.presenter import prev_next_ui
from dashboard.views.train import session
from dashboard.views.train.links import (
    LEARNING_RATES,
    MAX_SEED,
    MIN_STEPS,
    SNAP_KEY,
    SOURCE_KEY,
    STEP_STEP,
    TASK_KEY,
    TASKS,
    head_choices,
    max_steps,
    task_keys,
)


def task_ui() -> str:
    """The letter GPT-2 (induction) or the translator (alignment), each said in a few words; switching
    pauses every run (the page trains only the task it shows)."""
    picked = st.radio(
        tr_text.TASK_LABEL,
        TASKS,
        format_func=tr_text.TASKS.get,
        captions=[tr_text.TASK_CAPTIONS[task] for task in TASKS],
        key=TASK_KEY,
        horizontal=True,
        on_change=session.pause_all,
    )
    return picked or TASKS[0]


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


def _clean_settings(limits: Limits, task: str) -> tuple[int, ...]:
    """Move `task`'s settings into their ranges before the widgets are drawn; the heads offered."""
    ss, keys = st.session_state, task_keys(task)
    heads = head_choices(limits, task)
    if ss.get(keys["heads"]) not in heads:
        ss[keys["heads"]] = heads[-1]
    if ss.get(keys["lr"]) not in LEARNING_RATES:
        ss[keys["lr"]] = min(LEARNING_RATES, key=lambda v: abs(v - float(ss.get(keys["lr"]) or 0)))
    ss[keys["steps"]] = min(max(int(ss.get(keys["steps"], MIN_STEPS)), MIN_STEPS), max_steps(limits))
    ss[keys["seed"]] = min(max(int(ss.get(keys["seed"], 0)), 0), MAX_SEED)
    return heads


def settings_ui(limits: Limits, disabled: bool, task: str = "letters") -> None:
    """Layers (letters only), heads, steps, learning rate and seed (their values land in session
    state, under `task`'s keys)."""
    keys = task_keys(task)
    heads = _clean_settings(limits, task)
    widths = [1.2, 1.3, 1.6, 1] if task == "translate" else [1, 1.2, 1.3, 1.6, 1]
    cols = iter(st.columns(widths))
    if task != "translate":
        with next(cols):
            st.segmented_control(
                text.LAYERS_LABEL,
                [1, 2],
                key=keys["layers"],
                required=True,
                disabled=disabled,
                help=text.LAYERS_HELP,
            )
    with next(cols):
        st.selectbox(
            text.HEADS_LABEL if task != "translate" else tr_text.HEADS_LABEL,
            heads,
            key=keys["heads"],
            disabled=disabled,
        )
    with next(cols):
        st.number_input(
            text.STEPS_LABEL,
            MIN_STEPS,
            max_steps(limits),
            step=STEP_STEP,
            key=keys["steps"],
            disabled=disabled,
        )
    with next(cols):
        st.select_slider(
            text.LR_LABEL, LEARNING_RATES, key=keys["lr"], format_func=lambda v: f"{v:g}", disabled=disabled
        )
    with next(cols):
        st.number_input(
            text.SEED_LABEL, 0, MAX_SEED, step=1, key=keys["seed"], disabled=disabled, help=text.SEED_HELP
        )
    if limits.hosted:
        st.caption(text.CAPPED.format(steps=max_steps(limits), heads=heads[-1]))


def controls_ui(task: str = "letters") -> None:
    """Start (or Resume) / Pause / Reset of `task`'s run (the live section says where the run is)."""
    run, on = session.trainer(task), session.running(task)
    resumable = run is not None and not run.done and run.settings == session.chosen_settings(task)
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button(
            text.RESUME if resumable else text.START,
            key="train_start",
            type="primary",
            icon=":material/play_arrow:",
            on_click=session.start,
            args=(task,),
            disabled=on,
            help=text.START_HELP,
        )
        st.button(
            text.PAUSE,
            key="train_pause",
            icon=":material/pause:",
            on_click=session.pause,
            args=(task,),
            disabled=not on,
        )
        st.button(
            text.RESET,
            key="train_reset",
            icon=":material/restart_alt:",
            on_click=session.reset,
            args=(task,),
            disabled=run is None,
        )


def step_ui(steps, key: str = SNAP_KEY) -> int:
    """The snapshot slider (labelled by training step) with Previous / Next on ← / PageUp and
    → / PageDown (a clicker); returns the snapshot's index (kept under `key`, one per task)."""
    ss = st.session_state
    n = len(steps)
    ss[key] = min(max(int(ss.get(key, n - 1)), 0), n - 1)
    with st.container(horizontal=True, vertical_alignment="bottom", key="train_step_row"):
        prev_next_ui("train", (text.PREV, text.NEXT), key, 0, n - 1)
        if n > 1:
            st.select_slider(
                text.STEP_LABEL,
                options=list(range(n)),
                format_func=lambda i: f"{int(steps[i]):,}",
                key=key,
            )
    return int(ss[key])
