"""The train page's links: its query parameters as one dashboard.state.PageLinks table.

URL parameters: run ("recorded" or "own"), layers (1 or 2), heads, steps, lr, seed (the settings of
your own run) and step (the training step the step control shows; the nearest snapshot is shown).
A value outside its range becomes the nearest valid one, and the page says so. The ranges of steps
and heads come from dashboard/hosted.py's Limits (lower on the public demo). A link is read on the
session's first run; the URL is written at the end of every run.
"""

from __future__ import annotations

import math

import streamlit as st

from core.train.trainer import TrainSettings
from dashboard.hosted import Limits
from dashboard.state import PageLinks, Parsed, UrlParam, choice_param, clamped_int_param

PAGE = "train"
BASE = TrainSettings()  # the core's defaults: what the page does not let a user change
HEAD_CHOICES = tuple(h for h in (1, 2, 4, 8) if BASE.width % h == 0)  # the width must divide evenly
LEARNING_RATES = tuple(sorted({1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, BASE.lr}))
MIN_STEPS, STEP_STEP = 50, 50
MAX_SEED = 9_999
SOURCE_KEY, SNAP_KEY, STEP_LINK_KEY = "train_run", "train_snap", "train_step_link"
KEYS = {name: f"train_{name}" for name in ("layers", "heads", "steps", "lr", "seed")}


def head_choices(limits: Limits) -> tuple[int, ...]:
    return tuple(h for h in HEAD_CHOICES if h <= limits.max_train_heads) or (1,)


def max_steps(limits: Limits) -> int:
    return max(MIN_STEPS, limits.max_train_steps)


def default_steps(limits: Limits) -> int:
    return min(BASE.steps, max_steps(limits))


def default_heads(limits: Limits) -> int:
    choices = head_choices(limits)
    return BASE.heads if BASE.heads in choices else choices[-1]


def _nearest(name: str, raw: str, choices: tuple, default, distance, shown=str) -> Parsed:
    """`raw` as the nearest of `choices` (by `distance`), with a note when it is not one of them."""
    try:
        value = float(raw)
    except ValueError:
        return default, f"The link's `{name}` value is not a number; using {shown(default)}."
    if not math.isfinite(value):
        return default, f"The link's `{name}` value is not a number; using {shown(default)}."
    best = min(choices, key=lambda c: distance(c, value))
    if math.isclose(best, value, rel_tol=1e-9):
        return best, None
    return best, f"The link's `{name}` value is not one this page offers; using {shown(best)}, the nearest."


def _lr_distance(choice: float, value: float) -> float:
    return abs(math.log(choice) - math.log(value)) if value > 0 else choice  # 0 or less: the smallest


def page_links(limits: Limits, recorded: bool) -> PageLinks:
    heads, default_head = head_choices(limits), default_heads(limits)
    return PageLinks(
        PAGE,
        (
            choice_param("run", SOURCE_KEY, "recorded" if recorded else "own", ("recorded", "own")),
            clamped_int_param("layers", KEYS["layers"], min(BASE.layers, 2), 1, 2),
            UrlParam(
                "heads",
                KEYS["heads"],
                default_head,
                lambda raw: _nearest("heads", raw, heads, default_head, lambda c, v: abs(c - v)),
            ),
            clamped_int_param("steps", KEYS["steps"], default_steps(limits), MIN_STEPS, max_steps(limits)),
            UrlParam(
                "lr",
                KEYS["lr"],
                BASE.lr,
                lambda raw: _nearest("lr", raw, LEARNING_RATES, BASE.lr, _lr_distance, lambda v: f"{v:g}"),
                show=lambda v: f"{v:g}",
            ),
            clamped_int_param("seed", KEYS["seed"], BASE.seed, 0, MAX_SEED),
            UrlParam("step", STEP_LINK_KEY, None, _parse_step),
        ),
        keep=(SOURCE_KEY, *KEYS.values()),
    )


def _parse_step(raw: str) -> Parsed:
    """Any whole number: the nearest snapshot is shown once the run is known."""
    try:
        return int(raw), None
    except ValueError:  # also for numbers of more than 4,300 digits
        return None, "The link's `step` value is not a whole number; showing the last snapshot."


def init_state(limits: Limits, recorded: bool) -> list[str]:
    """Seed the page state from the link once per session; return messages about bad URL values."""
    links = page_links(limits, recorded)
    notes = links.read_url()
    links.restore()
    ss = st.session_state
    if ss.get(SOURCE_KEY) == "recorded" and not recorded:
        ss[SOURCE_KEY] = "own"
    return notes


def nearest_snapshot(steps, step: int) -> int:
    """The index of the snapshot whose training step is nearest `step`."""
    return min(range(len(steps)), key=lambda i: abs(int(steps[i]) - step))


def write_url(limits: Limits, recorded: bool, step: int | None) -> None:
    page_links(limits, recorded).write_url(step=step)


def save(limits: Limits, recorded: bool) -> None:
    page_links(limits, recorded).save()
