"""This session's runs: one trainer per task (the letter GPT-2, core/train/trainer.py; the translator,
core/translate/trainer.py) kept in session state, started, paused, reset and trained in slices; the
recorded runs shipped with the product; the folder a trained model is saved to for explore.

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
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import streamlit as st

from core.models import shipped
from core.train.data import Batch
from core.train.record import RECORD_FILE, TrainingRecord, load_record
from core.train.trainer import SnapshotRun, Trainer, TrainSettings, held_out_batch
from core.translate import engine as translate_engine
from core.translate.record import TranslationRecord
from core.translate.record import load_record as load_translation
from core.translate.trainer import TranslateSettings, Translator
from dashboard.hosted import Limits
from dashboard.trained_models import TRAINED_ROOT
from dashboard.views.train.links import BASE, KEYS, TR_BASE, TR_KEYS

SLICE_SECONDS = 0.5  # one tick's training; the live charts are redrawn after each
TICK_SECONDS = 0.8  # how often the live fragment runs while training: at least once a second
ABLATION_SEQUENCES = 16  # held-out sequences the ablation reads (each head cut: one pass over them)


@dataclass(frozen=True)
class RunKeys:
    """Where one task's run lives in session state."""

    trainer: str
    running: str
    saved: str


RUN_KEYS = {
    "letters": RunKeys("train_trainer", "train_running", "train_saved_dir"),
    "translate": RunKeys("train_tr_trainer", "train_tr_running", "train_tr_saved_dir"),
}


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


def base_translate_settings() -> TranslateSettings:
    """The same for the translator (width, layers, batch, held-out pairs...); tests shrink it."""
    return TR_BASE


def chosen_settings(task: str = "letters") -> TrainSettings | TranslateSettings:
    """The settings in `task`'s widgets, on top of its base settings."""
    ss = st.session_state
    translate = task == "translate"
    defaults, keys = (TR_BASE, TR_KEYS) if translate else (BASE, KEYS)
    picked = {name: ss.get(key, getattr(defaults, name)) for name, key in keys.items()}
    steps = int(picked["steps"])
    chosen = {
        "heads": int(picked["heads"]),
        "steps": steps,
        "lr": float(picked["lr"]),
        "seed": int(picked["seed"]),
    }
    if translate:  # a short run warms up for a fifth of it at most; the default run keeps its 100 steps
        base = base_translate_settings()
        return replace(base, **chosen, warmup=min(base.warmup, max(1, steps // 5)))
    return replace(base_settings(), **chosen, layers=int(picked["layers"]))


def trainer(task: str = "letters") -> SnapshotRun | None:
    return st.session_state.get(RUN_KEYS[task].trainer)


def running(task: str = "letters") -> bool:
    run = trainer(task)
    return bool(st.session_state.get(RUN_KEYS[task].running)) and run is not None and not run.done


def start(task: str = "letters") -> None:
    """Resume the paused run, or begin a new one when the settings differ from it (or none exists)."""
    ss = st.session_state
    wanted = chosen_settings(task)
    current = trainer(task)
    if current is None or current.settings != wanted or current.done:
        forget_saved(task)
        ss[RUN_KEYS[task].trainer] = Translator(wanted) if task == "translate" else Trainer(wanted)
    ss[RUN_KEYS[task].running] = True


def pause(task: str = "letters") -> None:
    st.session_state[RUN_KEYS[task].running] = False


def pause_all() -> None:
    """Every task's run (the page trains only the task it shows)."""
    for task in RUN_KEYS:
        pause(task)


def reset(task: str = "letters") -> None:
    ss = st.session_state
    ss[RUN_KEYS[task].running] = False
    ss.pop(RUN_KEYS[task].trainer, None)
    forget_saved(task)


def train_slice(run: SnapshotRun, limits: Limits) -> int | None:
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


def translation_dir() -> Path | None:
    """The shipped translator's folder when it holds a training record (looked up on each call)."""
    folder = translate_engine.TRANSLATOR_DIR
    return folder if (folder / RECORD_FILE).is_file() else None


@st.cache_resource(max_entries=2, show_spinner=False)
def _recorded_translation(path: str, stamp: float) -> TranslationRecord | None:
    return load_translation(path)


def recorded_translation() -> TranslationRecord | None:
    """The shipped translator's record, read once per process (and again when the file changes)."""
    folder = translation_dir()
    if folder is None:
        return None
    try:
        stamp = (folder / RECORD_FILE).stat().st_mtime
    except OSError:
        return None
    return _recorded_translation(str(folder), stamp)


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


def saved_dir(run: SnapshotRun, task: str = "letters") -> Path:
    """The run's model saved (once per run and step) in this session's temporary folder."""
    ss = st.session_state
    folder = _session_folder() / f"run-{id(run):x}-step{run.step}"
    if ss.get(RUN_KEYS[task].saved) != str(folder) or not (folder / "model.safetensors").is_file():
        forget_saved(task)
        run.save(folder)
        ss[RUN_KEYS[task].saved] = str(folder)
    return folder


def forget_saved(task: str = "letters") -> None:
    """Delete the model this session saved last for `task` (a new run replaces it)."""
    old = st.session_state.pop(RUN_KEYS[task].saved, None)
    if old and Path(old).is_relative_to(TRAINED_ROOT):
        shutil.rmtree(old, ignore_errors=True)
