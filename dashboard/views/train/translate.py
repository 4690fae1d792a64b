"""The train page's second task: the translator (core/translate/) trained live or replayed from its
recorded run, in the frame page.py runs for every task. Its curves (the loss; the held-out exact
match and every cross-attention head's alignment on one step axis), every head's cross-attention on
the probe pair with the gold alignment outlined, what happened, measured (core/translate/findings.py)
up to the step shown, and the hand-off to explore (the recorded translator: explore opens no other).
"""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import streamlit as st

from core.translate.engine import TRANSLATOR_KEY
from core.translate.findings import ALIGNED_MIN, RIGHT_MIN, WEAK_MAX, Findings, measure
from core.translate.record import TranslationRecord, record_of
from dashboard.charts.train import head_name
from dashboard.charts.translate import cross_attention_grid, translation_curves
from dashboard.content import train as text
from dashboard.content import train_translate as tr
from dashboard.presenter import presenting
from dashboard.views.train import links, session
from dashboard.views.train.task import TaskView
from dashboard.widgets import chart, chart_filename, md


def _recorded_line(record: TranslationRecord) -> str:
    """The recorded run's settings, and the command that trains it again (not on a projector)."""
    s = record.settings
    return (tr.RECORDED_SHORT if presenting() else tr.RECORDED).format(
        layers=s.get("layers"),
        heads=s.get("heads"),
        width=s.get("width"),
        steps=int(record.steps[-1]),
        lr=float(s.get("lr", 0)),
        seed=s.get("seed"),
        seconds=float(record.seconds[-1]),
        command=tr.COMMAND,
    )


def _best(scores: np.ndarray) -> tuple[int, int]:
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head)


def _curves(record: TranslationRecord, total: int, shown: int | None, big: bool) -> None:
    index = len(record.steps) - 1 if shown is None else links.nearest_snapshot(record.steps, shown)
    titles = {
        "title": tr.CURVES_TITLE,
        "loss": tr.LOSS,
        "loss_axis": tr.LOSS_AXIS,
        "exact": tr.EXACT,
        "score_axis": tr.SCORE_AXIS,
        "best": tr.BEST,
        "level": tr.LEVEL.format(mark=ALIGNED_MIN),
        "step": tr.STEP_AXIS,
    }
    fig = translation_curves(
        record.steps,
        record.loss,
        record.exact_match,
        record.alignment,
        total_steps=total,
        titles=titles,
        best=_best(record.alignment[index]),
        level=ALIGNED_MIN,
        shown_step=shown,
        font=18 if big else 13,
        height=700 if big else 520,
    )
    chart(fig, "train_tr_curves", chart_filename("train", "translator-curves"))
    if not big:
        st.caption(tr.CURVES_CAPTION.format(n=record.settings.get("eval_pairs", "the"), mark=ALIGNED_MIN))


def _maps(record: TranslationRecord, index: int, big: bool) -> None:
    probe = record.probe[index]  # (L, H, T, R)
    n_layers, n_heads = probe.shape[:2]
    scores = record.alignment[index]
    step = int(record.steps[index])
    per_map = (1000 if big else 780) / max(n_heads, 1)
    fig = cross_attention_grid(
        probe,
        [*record.target, "</s>"],
        [*record.source, "</s>"],
        record.links,
        title=tr.MAPS_TITLE.format(step=step),
        axis_titles=(tr.ROW_AXIS, tr.COL_AXIS),
        scores=scores,
        best=_best(scores),
        font=15 if big else 11,
        height=int(min(per_map, 165 if big else 250) * n_layers + (150 if big else 130)),
    )
    chart(fig, "train_tr_maps", chart_filename("train", "cross-attention", f"step{step}"))
    if not big:
        source, target = " ".join(record.source), " ".join(record.target)
        st.caption(tr.MAPS_CAPTION.format(source=source, target=target))


def _order(found: Findings) -> str:
    head = head_name(*found.aligned_head) if found.aligned_head is not None else ""
    shown = {"aligned": found.aligned.step, "right": found.right.step, "gap": found.gap, "head": head}
    if found.order == "right first":
        return tr.FIRST_RIGHT.format(**shown, mark=RIGHT_MIN)
    if found.order == "aligned first":
        return tr.FIRST_ALIGNED.format(**shown, mark=ALIGNED_MIN)
    if found.order == "together":
        return tr.TOGETHER.format(**shown, mark=ALIGNED_MIN)
    exact = (
        tr.EXACT_BEST.format(best=found.right.best, step=found.right.best_step)
        if found.right.best > 0
        else tr.EXACT_NONE
    )
    if found.order == "only aligned":
        return tr.ONLY_ALIGNED.format(**shown, exact=exact, mark=ALIGNED_MIN)
    if found.order == "only right":
        aligned = {"best": found.aligned.best, "best_step": found.aligned.best_step}
        return tr.ONLY_RIGHT.format(**shown, **aligned, mark=RIGHT_MIN)
    return tr.NEITHER.format(
        a_best=found.aligned.best, a_step=found.aligned.best_step, exact=exact, mark=ALIGNED_MIN
    )


def _heads(found: Findings, n_layers: int, n_heads: int) -> tuple[str, str]:
    """The best head at the measured step, and the heads that do not align (a whole layer said so)."""
    layer, head, accuracy = found.best_head
    best = tr.BEST_HEAD.format(layer=layer + 1, head=head + 1, step=found.step, accuracy=accuracy)
    if not found.weak:
        return best, tr.NO_WEAK.format(most=WEAK_MAX)
    if len(found.weak) == n_layers * n_heads:
        return best, tr.ALL_WEAK.format(most=WEAK_MAX)
    named = ", ".join(f"{head_name(lay, hd)} ({value:.0%})" for lay, hd, value in found.weak)
    weak = tr.WEAK.format(most=WEAK_MAX, heads=named)
    for whole in sorted({lay for lay, _, _ in found.weak}):
        if sum(lay == whole for lay, _, _ in found.weak) == n_heads:
            weak += tr.WEAK_LAYER.format(layer=whole + 1)
    return best, weak


def statements(record: TranslationRecord, index: int) -> dict[str, str]:
    """Measured up to snapshot `index`: which came first, the heads or the translations ("order"),
    how far the heads had aligned while most translations were wrong ("early", when known), the
    loss ("loss"), the best head ("best") and the heads that do not align ("weak")."""
    found = measure(record, index)
    lines = {"order": _order(found)}
    if found.early is not None:
        step, exact, align = found.early
        early = tr.EARLY_AHEAD if align >= WEAK_MAX else tr.EARLY_BEHIND
        lines["early"] = early.format(step=step, exact=exact, align=align)
    loss = {"first": found.loss_first, "now": found.loss_now, "now_step": found.step}
    if found.halved.step is not None:
        then = float(record.loss[links.nearest_snapshot(record.steps, found.halved.step)])
        lines["loss"] = tr.HALVED.format(step=found.halved.step, then=then, **loss)
    else:
        lines["loss"] = tr.NOT_HALVED.format(best=found.halved.best, best_step=found.halved.best_step, **loss)
    lines["best"], lines["weak"] = _heads(found, *record.alignment.shape[1:])
    return lines


def _after(record: TranslationRecord, run, big: bool, shown: int) -> None:
    """Once paused or done: what happened by the step shown, measured, and the hand-off to explore."""
    if run is not None and run.step == 0:
        return
    if run is not None and not run.done:
        st.caption(text.FINDINGS_NOT_YET)
    index = links.nearest_snapshot(record.steps, shown)
    heading = text.FINDINGS.format(step=int(record.steps[index]))
    lines = statements(record, index)
    if big:  # a projector: one block under the maps; the loss's line goes to the sidebar, to fit
        shown_lines = [lines["order"], *([lines["early"]] if "early" in lines else [])]
        shown_lines.append(lines["best"] + " " + lines["weak"])
        st.markdown(f"**{heading}**\n" + "".join(f"\n- {line}" for line in shown_lines))
    else:
        st.subheader(heading)
        st.markdown("\n".join(f"- {line}" for line in lines.values()))
    with st.sidebar if big else st.container():  # on a projector the hand-off folds away too
        if big:
            st.markdown(lines["loss"])
        _open_ui(run)


def _open_ui(run) -> None:
    """A button that opens this translator on explore: the recorded one, or your run saved first."""
    try:
        model = TRANSLATOR_KEY if run is None else str(session.saved_dir(run, "translate"))
    except OSError as err:
        st.warning(text.SAVE_FAILED.format(reason=md(err.strerror or type(err).__name__)))
        return
    url = f"explore?model={quote(model, safe='')}"
    st.link_button(tr.OPEN, url, icon=":material/open_in_new:", type="primary", help=tr.OPEN_HELP)
    st.caption(tr.OPEN_RECORDED_CAPTION if run is None else text.OPEN_CAPTION)


VIEW = TaskView(
    title=tr.TITLE,
    intro=tr.INTRO,
    recorded=session.recorded_translation,
    recorded_line=_recorded_line,
    record_of=record_of,
    curves=_curves,
    maps=_maps,
    after=_after,
)
