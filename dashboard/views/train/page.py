"""The train page put together, for either task (links.TASKS: the letter GPT-2's induction heads,
or the translator's alignment, translate.py): the task, the run (the recorded one shipped with the
product, or your own), the settings and Start / Pause / Reset, the live section (a fragment that,
while training, trains a slice and redraws every TICK_SECONDS: the curves, every head's attention on
the probe), the step control once paused or done, then what happened, measured, and the hand-off to
explore. This module holds the frame and the letter task's own parts (a task.TaskView)."""

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
from dashboard.views.train import links, session, translate
from dashboard.views.train.findings import findings_ui
from dashboard.views.train.task import TaskView
from dashboard.views.train.widgets import controls_ui, settings_ui, source_ui, step_ui, task_ui
from dashboard.widgets import chart, chart_filename, error_md, md

LOG = logging.getLogger(__name__)
SHOWN_STEP = "train_shown_step"  # the training step on screen, for the link


def render() -> None:
    limits = current_limits()
    recorded = {task: VIEWS[task].recorded() is not None for task in links.TASKS}
    try:
        _render(limits, recorded)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("train page failed")
        st.error(f"Something went wrong while drawing this view ({type(err).__name__}). Press Reset.")
    finally:
        links.save(limits)


def _header(view: TaskView, notes: list[str], big: bool) -> None:
    """The title, the task picker and the task's introduction (on a projector: the picker only, in
    the sidebar, so the charts come first), then the notes about the link."""
    if not big:
        st.title(view.title)
    with st.sidebar if big else st.container():
        task_ui()
    if not big:
        st.markdown(view.intro)
    for note in notes:
        st.warning(note)


def _render(limits: Limits, recorded: dict[str, bool]) -> None:
    notes = links.init_state(limits, recorded)
    task = links.current_task()
    view, big = VIEWS[task], presenting()
    _header(view, notes, big)
    source = source_ui() if recorded[task] else "own"
    if source == "recorded":
        record = view.recorded()
        st.markdown(view.recorded_line(record))
    else:
        with st.sidebar.expander(text.SETTINGS, expanded=True) if big else st.container():
            settings_ui(limits, disabled=session.running(task), task=task)
        controls_ui(task)
        run = session.trainer(task)
        record = view.record_of(run) if run is not None else None
    if record is None:
        st.info(text.PRESS_START)
        st.session_state.pop(links.STEP_LINK_KEY, None)
        links.write_url(limits, recorded[task], None)
        return
    for note in _link_step(record, links.SNAP_KEYS[task]):
        st.warning(note)
    on = source == "own" and session.running(task)
    st.fragment(run_every=session.TICK_SECONDS if on else None)(_live)(limits, task, source, big)
    links.write_url(limits, recorded[task], st.session_state.get(SHOWN_STEP))


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


def _link_step(record, snap_key: str) -> list[str]:
    """A link's `step`, once: the nearest snapshot, with a note when it is outside the run."""
    asked = st.session_state.pop(links.STEP_LINK_KEY, None)
    if asked is None:
        return []
    index = links.nearest_snapshot(record.steps, asked)
    st.session_state[snap_key] = index
    first, last = int(record.steps[0]), int(record.steps[-1])
    if first <= asked <= last:
        return []
    shown = asked if abs(asked) < 10**12 else "(a huge number)"
    return [text.STEP_NOTE.format(asked=shown, first=first, last=last, nearest=int(record.steps[index]))]


def _live(limits: Limits, task: str, source: str, big: bool) -> None:
    """Train a slice (while running), then the curves and the heads' attention at the step shown,
    and once paused or done what happened. Runs alone every TICK_SECONDS while training (and when
    the step control moves); a finished run reruns the whole page."""
    view = VIEWS[task]
    run = session.trainer(task) if source == "own" else None
    on = run is not None and session.running(task)
    waiting = session.train_slice(run, limits) if on else None
    if on and run.done:
        session.pause(task)
        st.rerun()  # the whole page: the step control, the findings, the hand-off
    record = view.record_of(run) if run is not None else view.recorded()
    if run is not None:
        status = text.STATUS.format(step=run.step, steps=run.settings.steps, seconds=run.seconds)
        st.markdown(status + (text.STATUS_RUNNING if on else (text.STATUS_DONE if run.done else "")))
    if waiting:
        st.caption(text.WAITING.format(busy=waiting, most=limits.max_trainers))
    total = run.settings.steps if run is not None else int(record.steps[-1])
    left, right = st.columns([5, 6]) if big else (st.container(), st.container())
    with right:
        index = len(record.steps) - 1 if on else step_ui(record.steps, links.SNAP_KEYS[task])
    step = int(record.steps[index])
    st.session_state[SHOWN_STEP] = None if on else step
    if not on:
        write_params(step=step)  # a fragment rerun (the step control) keeps the link in step
    with left:
        view.curves(record, total, None if on else step, big)
    with right:
        view.maps(record, index, big)
        if not on:  # on a projector: beside the curves, under the maps
            view.after(record, run, big, step)


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


def _after(record: TrainingRecord, run, big: bool, shown: int) -> None:
    """Once paused or done: what happened, measured, and the hand-off to explore."""
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


VIEWS = {
    "letters": TaskView(
        title=text.TITLE,
        intro=text.INTRO,
        recorded=session.recorded_record,
        recorded_line=_recorded_line,
        record_of=lambda run: run.record(),
        curves=_curves,
        maps=_maps,
        after=_after,
    ),
    "translate": translate.VIEW,
}
