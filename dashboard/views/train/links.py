"""The train page's links: its query parameters as one dashboard.state.PageLinks table.

URL parameters: task ("letters", the default, or "translate"), run ("recorded" or "own"), layers (1
or 2, letters only), heads, steps, lr, seed (the settings of your own run of the task shown: each
task keeps its own in session state) and step (the training step the step control shows; the
nearest snapshot is shown). A value outside its range becomes the nearest valid one, and the page
says so. The ranges of steps and heads come from dashboard/hosted.py's Limits (lower on the public
demo). A link is read on the session's first run, into the task it names (the other task starts
from its defaults); the URL is written at the end of every run.
"""

from __future__ import annotations

import math

import streamlit as st

from core.train.trainer import TrainSettings
from core.translate.trainer import TranslateSettings
from dashboard.hosted import Limits
from dashboard.state import PageLinks, Parsed, UrlParam, choice_param, clamped_int_param, parse_choice

PAGE = "train"
TASKS = ("letters", "translate")  # the letter GPT-2's induction heads; the translator's alignment
BASE = TrainSettings()  # the core's defaults: what the page does not let a user change
TR_BASE = TranslateSettings()  # ... and the translator's
HEAD_CHOICES = tuple(h for h in (1, 2, 4, 8) if BASE.width % h == 0)  # the width must divide evenly
TR_HEAD_CHOICES = tuple(h for h in (1, 2, 4, 8) if TR_BASE.width % h == 0)
LEARNING_RATES = tuple(sorted({1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, BASE.lr, TR_BASE.lr}))
MIN_STEPS, STEP_STEP = 50, 50
MAX_SEED = 9_999
SOURCE_KEY, SNAP_KEY, STEP_LINK_KEY = "train_run", "train_snap", "train_step_link"
TASK_KEY, TR_SNAP_KEY = "train_task", "train_tr_snap"
KEYS = {name: f"train_{name}" for name in ("layers", "heads", "steps", "lr", "seed")}
TR_KEYS = {name: f"train_tr_{name}" for name in ("heads", "steps", "lr", "seed")}
SNAP_KEYS = {"letters": SNAP_KEY, "translate": TR_SNAP_KEY}


def task_keys(task: str) -> dict[str, str]:
    """The session keys of `task`'s settings, by setting name."""
    return TR_KEYS if task == "translate" else KEYS


def current_task() -> str:
    task = st.session_state.get(TASK_KEY)
    return task if task in TASKS else TASKS[0]


def head_choices(limits: Limits, task: str = "letters") -> tuple[int, ...]:
    offered = TR_HEAD_CHOICES if task == "translate" else HEAD_CHOICES
    return tuple(h for h in offered if h <= limits.max_train_heads) or (1,)


def max_steps(limits: Limits) -> int:
    return max(MIN_STEPS, limits.max_train_steps)


def default_steps(limits: Limits, task: str = "letters") -> int:
    return min((TR_BASE if task == "translate" else BASE).steps, max_steps(limits))


def default_heads(limits: Limits, task: str = "letters") -> int:
    choices, base = head_choices(limits, task), TR_BASE if task == "translate" else BASE
    return base.heads if base.heads in choices else choices[-1]


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


def _settings_params(limits: Limits, task: str) -> tuple[UrlParam, ...]:
    """The link parameters of `task`'s own run (the same names for both tasks: the link's task says
    which run they set)."""
    keys, base = task_keys(task), TR_BASE if task == "translate" else BASE
    heads, default_head = head_choices(limits, task), default_heads(limits, task)
    layers = (
        ()
        if task == "translate"
        else (clamped_int_param("layers", keys["layers"], min(base.layers, 2), 1, 2),)
    )
    return (
        *layers,
        UrlParam(
            "heads",
            keys["heads"],
            default_head,
            lambda raw: _nearest("heads", raw, heads, default_head, lambda c, v: abs(c - v)),
        ),
        clamped_int_param("steps", keys["steps"], default_steps(limits, task), MIN_STEPS, max_steps(limits)),
        UrlParam(
            "lr",
            keys["lr"],
            base.lr,
            lambda raw: _nearest("lr", raw, LEARNING_RATES, base.lr, _lr_distance, lambda v: f"{v:g}"),
            show=lambda v: f"{v:g}",
        ),
        clamped_int_param("seed", keys["seed"], base.seed, 0, MAX_SEED),
    )


def page_links(limits: Limits, recorded: bool, task: str | None = None) -> PageLinks:
    """The table for `task` (the one shown by default): its run's settings under the shared names."""
    task = task or current_task()
    return PageLinks(
        PAGE,
        (
            choice_param("task", TASK_KEY, TASKS[0], TASKS),
            choice_param("run", SOURCE_KEY, "recorded" if recorded else "own", ("recorded", "own")),
            *_settings_params(limits, task),
            UrlParam("step", STEP_LINK_KEY, None, _parse_step),
        ),
        keep=(SOURCE_KEY, TASK_KEY, *KEYS.values(), *TR_KEYS.values()),
    )


def _parse_step(raw: str) -> Parsed:
    """Any whole number: the nearest snapshot is shown once the run is known."""
    try:
        return int(raw), None
    except ValueError:  # also for numbers of more than 4,300 digits
        return None, "The link's `step` value is not a whole number; showing the last snapshot."


def init_state(limits: Limits, recorded: dict[str, bool]) -> list[str]:
    """Seed the page state from the link once per session (the link's task from the link, the other
    task from its defaults); return messages about bad URL values. `recorded`: whether each task has
    a recorded run."""
    ss = st.session_state
    linked = page_links(limits, True, TASKS[0])
    notes = []
    if not linked.url_was_read():
        task = str(parse_choice("task", st.query_params.get("task"), TASKS, TASKS[0])[0])
        notes = page_links(limits, recorded[task], task).read_url()
        for other in TASKS:
            for param in _settings_params(limits, other):
                ss.setdefault(param.key, param.default)
    linked.restore()
    if ss.get(SOURCE_KEY) == "recorded" and not recorded[current_task()]:
        ss[SOURCE_KEY] = "own"
    return notes


def nearest_snapshot(steps, step: int) -> int:
    """The index of the snapshot whose training step is nearest `step`."""
    return min(range(len(steps)), key=lambda i: abs(int(steps[i]) - step))


def write_url(limits: Limits, recorded: bool, step: int | None) -> None:
    task = current_task()
    page_links(limits, recorded, task).write_url(
        step=step, **({"layers": None} if task == "translate" else {})
    )


def save(limits: Limits) -> None:
    page_links(limits, True).save()
