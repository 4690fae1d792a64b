"""This session's run: the trainer (core/train/trainer.py) kept in session state, started, paused,
reset and trained in slices; the recorded run shipped with the product; the folder a trained model
is saved to for explore.

Sharing the server: every session's training happens in slices of SLICE_SECONDS inside the page's
live fragment, and a slice runs only while it holds one of `Limits.max_trainers` slots, one
BoundedSemaphore shared by every session of the process (st.cache_resource). A session that finds
every slot taken trains nothing this tick and says it is waiting; the next tick tries again. So with
thirty students at once, at most max_trainers NumPy runs compute at a time, in turns of half a
second, and the pages of everyone else stay responsive.
"""

from __future__ import annotations

import shutil
import threading
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np
import streamlit as st

from core.models import shipped
from core.train.data import Batch
from core.train.record import TrainingRecord, load_record
from core.train.trainer import Trainer, TrainSettings, held_out_batch
from dashboard.hosted import Limits
from dashboard.trained_models import TRAINED_ROOT
from dashboard.views.train.links import BASE, KEYS

SLICE_SECONDS = 0.5  # one tick's training; the live charts are redrawn after each
TICK_SECONDS = 0.8  # how often the live fragment runs while training: at least once a second
ABLATION_SEQUENCES = 16  # held-out sequences the ablation reads (each head cut: one pass over them)
TRAINER, RUNNING, SAVED = "train_trainer", "train_running", "train_saved_dir"


@st.cache_resource(show_spinner=False)
def _slots(n: int) -> threading.BoundedSemaphore:
    """The slots every session of this process shares: at most n slices train at once."""
    return threading.BoundedSemaphore(n)


@st.cache_resource(show_spinner=False)
def _busy() -> dict:
    """How many slices are training right now (for the waiting message), shared like the slots."""
    return {"n": 0, "lock": threading.Lock()}


def base_settings() -> TrainSettings:
    """What the page leaves at the core's defaults (width, context, batch...); tests shrink it."""
    return BASE


def chosen_settings() -> TrainSettings:
    """The settings in the widgets, on top of base_settings()."""
    ss = st.session_state
    picked = {name: ss.get(key, getattr(BASE, name)) for name, key in KEYS.items()}
    return replace(
        base_settings(),
        layers=int(picked["layers"]),
        heads=int(picked["heads"]),
        steps=int(picked["steps"]),
        lr=float(picked["lr"]),
        seed=int(picked["seed"]),
    )


def trainer() -> Trainer | None:
    return st.session_state.get(TRAINER)


def running() -> bool:
    return bool(st.session_state.get(RUNNING)) and trainer() is not None and not trainer().done


def start() -> None:
    """Resume the paused run, or begin a new one when the settings differ from it (or none exists)."""
    ss = st.session_state
    wanted = chosen_settings()
    current = trainer()
    if current is None or current.settings != wanted or current.done:
        forget_saved()
        ss[TRAINER] = Trainer(wanted)
    ss[RUNNING] = True


def pause() -> None:
    st.session_state[RUNNING] = False


def reset() -> None:
    ss = st.session_state
    ss[RUNNING] = False
    ss.pop(TRAINER, None)
    forget_saved()


def train_slice(run: Trainer, limits: Limits) -> int | None:
    """Train for one slice if a slot is free; returns None when it was, else how many runs are
    training now (to say why this one waits)."""
    slots, busy = _slots(limits.max_trainers), _busy()
    if not slots.acquire(blocking=False):
        return max(busy["n"], limits.max_trainers)
    with busy["lock"]:
        busy["n"] += 1
    try:
        run.run(seconds=SLICE_SECONDS)
    finally:
        with busy["lock"]:
            busy["n"] -= 1
        slots.release()
    return None


# ---- the recorded run --------------------------------------------------------------------------


def recorded_dir() -> Path | None:
    return shipped.shipped_model_dir()


@st.cache_resource(max_entries=2, show_spinner=False)
def _recorded(path: str, stamp: float) -> TrainingRecord | None:
    return load_record(path)


def recorded_record() -> TrainingRecord | None:
    """The shipped run's record, read once per process (and again when its files change)."""
    folder = recorded_dir()
    if folder is None:
        return None
    try:
        stamp = (folder / "model.safetensors").stat().st_mtime
    except OSError:
        return None
    return _recorded(str(folder), stamp)


def eval_batch(settings: dict) -> Batch:
    """The held-out batch a run with these settings scores on (the trainer builds it from the seed),
    cut to ABLATION_SEQUENCES sequences."""
    fields = {k: v for k, v in settings.items() if k in TrainSettings.__dataclass_fields__}
    batch = held_out_batch(TrainSettings(**fields))
    return Batch(*(np.asarray(a)[:ABLATION_SEQUENCES] for a in (batch.inputs, batch.targets, batch.repeat)))


# ---- saving for explore ------------------------------------------------------------------------


def _session_folder() -> Path:
    ss = st.session_state
    if "train_session_id" not in ss:
        ss["train_session_id"] = uuid.uuid4().hex
    return TRAINED_ROOT / ss["train_session_id"]


def saved_dir(run: Trainer) -> Path:
    """The run's model saved (once per run and step) in this session's temporary folder."""
    ss = st.session_state
    folder = _session_folder() / f"run-{id(run):x}-step{run.step}"
    if ss.get(SAVED) != str(folder) or not (folder / "model.safetensors").is_file():
        forget_saved()
        run.save(folder)
        ss[SAVED] = str(folder)
    return folder


def forget_saved() -> None:
    """Delete the model this session saved last (a new run replaces it)."""
    old = st.session_state.pop(SAVED, None)
    if old and Path(old).is_relative_to(TRAINED_ROOT):
        shutil.rmtree(old, ignore_errors=True)
