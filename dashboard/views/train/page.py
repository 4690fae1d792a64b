"""The train page put together: the run (the recorded one shipped with the product, or your own),
the settings and Start / Pause / Reset, the live section (a fragment that, while training, trains a
slice and redraws every TICK_SECONDS: the curves, every head's attention on the probe), the step
control once paused or done, then what happened, measured, and the hand-off to explore."""

from __future__ import annotations

import logging
from urllib.parse import quote

import streamlit as st

from core.models.shipped import SHIPPED_COMMAND, SHIPPED_KEY
from core.train.data import LETTERS, START_TEXT
from core.train.record import TrainingRecord
from dashboard.charts.train import attention_grid, training_curves
from dashboard.content import train as text
from dashboard.hosted import Limits, current_limits
from dashboard.presenter import presenting
from dashboard.state import write_params
from dashboard.views.train import links, session
from dashboard.views.train.findings import findings_ui
from dashboard.views.train.widgets import controls_ui, settings_ui, source_ui, step_ui
from dashboard.widgets import chart, chart_filename, error_md, md

LOG = logging.getLogger(__name__)
SHOWN_STEP = "train_shown_step"  # the training step on screen, for the link


def render() -> None:
    if not presenting():  # on a projector the charts come first
        st.title(text.TITLE)
        st.markdown(text.INTRO)
    limits = current_limits()
    recorded = session.recorded_record() is not None
    try:
        _render(limits, recorded)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("train page failed")
        st.error(f"Something went wrong while drawing this view ({type(err).__name__}). Press Reset.")
    finally:
        links.save(limits, recorded)


def _render(limits: Limits, recorded: bool) -> None:
    for note in links.init_state(limits, recorded):
        st.warning(note)
    big = presenting()
    source = source_ui() if recorded else "own"
    if source == "recorded":
        record = session.recorded_record()
        st.markdown(_recorded_line(record))
    else:
        with st.sidebar.expander(text.SETTINGS, expanded=True) if big else st.container():
            settings_ui(limits, disabled=session.running())
        controls_ui()
        run = session.trainer()
        record = run.record() if run is not None else None
    if record is None:
        st.info(text.PRESS_START)
        st.session_state.pop(links.STEP_LINK_KEY, None)
        links.write_url(limits, recorded, None)
        return
    for note in _link_step(record):
        st.warning(note)
    on = source == "own" and session.running()
    st.fragment(run_every=session.TICK_SECONDS if on else None)(_live)(limits, source, big)
    links.write_url(limits, recorded, st.session_state.get(SHOWN_STEP))


def _recorded_line(record: TrainingRecord) -> str:
    s = record.settings
    return text.RECORDED.format(
        layers=s.get("layers"),
        heads=s.get("heads"),
        steps=int(record.steps[-1]),
        lr=float(s.get("lr", 0)),
        seed=s.get("seed"),
        seconds=float(record.seconds[-1]),
        command=SHIPPED_COMMAND,
    )


def _link_step(record: TrainingRecord) -> list[str]:
    """A link's `step`, once: the nearest snapshot, with a note when it is outside the run."""
    asked = st.session_state.pop(links.STEP_LINK_KEY, None)
    if asked is None:
        return []
    index = links.nearest_snapshot(record.steps, asked)
    st.session_state[links.SNAP_KEY] = index
    first, last = int(record.steps[0]), int(record.steps[-1])
    if first <= asked <= last:
        return []
    shown = asked if abs(asked) < 10**12 else "(a huge number)"
    return [text.STEP_NOTE.format(asked=shown, first=first, last=last, nearest=int(record.steps[index]))]


def _live(limits: Limits, source: str, big: bool) -> None:
    """Train a slice (while running), then the curves and the heads' attention at the step shown,
    and once paused or done what happened. Runs alone every TICK_SECONDS while training (and when
    the step control moves); a finished run reruns the whole page."""
    run = session.trainer() if source == "own" else None
    on = run is not None and session.running()
    waiting = session.train_slice(run, limits) if on else None
    if on and run.done:
        session.pause()
        st.rerun()  # the whole page: the step control, the findings, the hand-off
    record = run.record() if run is not None else session.recorded_record()
    if run is not None:
        status = text.STATUS.format(step=run.step, steps=run.settings.steps, seconds=run.seconds)
        st.markdown(status + (text.STATUS_RUNNING if on else (text.STATUS_DONE if run.done else "")))
    if waiting:
        st.caption(text.WAITING.format(busy=waiting, most=limits.max_trainers))
    total = run.settings.steps if run is not None else int(record.steps[-1])
    left, right = st.columns([5, 6]) if big else (st.container(), st.container())
    with right:
        index = len(record.steps) - 1 if on else step_ui(record.steps)
    step = int(record.steps[index])
    st.session_state[SHOWN_STEP] = None if on else step
    if not on:
        write_params(step=step)  # a fragment rerun (the step control) keeps the link in step
    with left:
        _curves(record, total, None if on else step, big)
    with right:
        _maps(record, index, big)
        if not on:  # on a projector: beside the curves, under the maps
            _after(record, source, big, step)


def _curves(record: TrainingRecord, total: int, shown: int | None, big: bool) -> None:
    titles = {
        "title": text.CURVES_TITLE,
        "first": text.LOSS_FIRST,
        "repeat": text.LOSS_REPEAT,
        "loss": text.LOSS_AXIS,
        "previous": text.PREVIOUS_AXIS,
        "induction": text.INDUCTION_AXIS,
        "step": text.STEP_AXIS,
    }
    fig = training_curves(
        record.steps,
        record.loss_first,
        record.loss_repeat,
        record.previous_token,
        record.induction,
        total_steps=total,
        titles=titles,
        shown_step=shown,
        font=18 if big else 13,
        height=760 if big else 560,
    )
    chart(fig, "train_curves", chart_filename("train", "curves"))


def _probe_letters(record: TrainingRecord) -> list[str]:
    return [START_TEXT if int(i) >= len(LETTERS) else LETTERS[int(i)] for i in record.probe]


def _maps(record: TrainingRecord, index: int, big: bool) -> None:
    attentions = record.attentions[index]  # (L, H, T, T)
    n_layers, n_heads = attentions.shape[:2]
    per_map = (900 if big else 760) / max(n_heads, 1)
    fig = attention_grid(
        attentions,
        _probe_letters(record),
        title=text.MAPS_TITLE.format(step=int(record.steps[index])),
        axis_titles=(text.FROM_AXIS, text.TO_AXIS),
        font=16 if big else 11,
        height=int(min(per_map, 270 if big else 260) * n_layers + (70 if big else 80)),
    )
    chart(fig, "train_maps", chart_filename("train", "attention", f"step{int(record.steps[index])}"))
    if not big:
        st.caption(text.MAPS_CAPTION.format(n=record.probe_length, shift=record.probe_length - 1))


def _after(record: TrainingRecord, source: str, big: bool, shown: int) -> None:
    """Once paused or done: what happened, measured, and the hand-off to explore."""
    run = session.trainer() if source == "own" else None
    if run is not None and run.step == 0:
        return
    folder = session.recorded_dir() if run is None else None
    if run is not None and not run.done:
        st.caption(text.FINDINGS_NOT_YET)
    findings_ui(record, run, folder, big, shown)
    with st.sidebar if big else st.container():  # on a projector the hand-off folds away too
        _open_ui(run, folder)


def _open_ui(run, folder) -> None:
    """A button that opens this model on explore's induction view (the trained one saved first)."""
    try:
        target = session.saved_dir(run) if run is not None else folder
    except OSError as err:
        st.warning(text.SAVE_FAILED.format(reason=md(err.strerror or type(err).__name__)))
        return
    model = SHIPPED_KEY if run is None else str(target)  # the recorded run is the picker's "letters"
    url = f"explore?view=induction&model={quote(model, safe='')}"
    st.link_button(text.OPEN, url, icon=":material/open_in_new:", type="primary", help=text.OPEN_HELP)
    st.caption(error_md(text.OPEN_CAPTION if run is not None else text.OPEN_RECORDED_CAPTION))
