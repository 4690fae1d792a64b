"""What a run did, stated in words and one chart, from core/train/findings.py's measurements: the
fastest drop of the repeats' loss and whether the induction score rose with it, the previous-token
and induction heads, and the repeats' loss with each head cut (or, with one layer, what happened
instead). The ablation costs one pass per head over a few held-out sequences: computed once per run
and step, kept in session state (the recorded run's once per process)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from core.measures.induction import INDUCTION_MIN, induction_heads
from core.train.checkpoint import engine_from_params
from core.train.findings import PREVIOUS_MIN, best_head, fastest_drop, repeat_loss_with_ablation
from core.train.record import TrainingRecord
from core.train.trainer import Trainer
from dashboard.charts.train import ablation_bars, head_name
from dashboard.content import train as text
from dashboard.engines import load_engine
from dashboard.views.train.session import eval_batch
from dashboard.widgets import chart, chart_filename

ABLATION_KEY = "train_ablation"


def statements(record: TrainingRecord) -> list[str]:
    """The drop, the previous-token head and the induction head (or what one layer did instead)."""
    lines = []
    drop = fastest_drop(record)
    layers = record.previous_token.shape[1]
    if drop is None:
        lines.append(text.NO_DROP)
    else:
        line = text.DROP.format(
            start=drop.start, end=drop.end, before=drop.loss_before, after=drop.loss_after
        )
        if layers > 1:
            shown = {"ind_before": drop.induction_before, "ind_after": drop.induction_after}
            line += (text.DROP_WITH if drop.with_induction else text.DROP_WITHOUT).format(**shown)
        lines.append(line)
    last_prev, last_ind = record.previous_token[-1], record.induction[-1]
    found = best_head(last_prev, range(1), PREVIOUS_MIN)
    if found:
        lines.append(text.PREVIOUS_HEAD.format(head=found[1] + 1, score=found[2]))
    else:
        lines.append(text.NO_PREVIOUS.format(score=float(last_prev[0].max()), minimum=PREVIOUS_MIN))
    if layers == 1:
        lines.append(
            text.ONE_LAYER.format(
                first=record.loss_repeat[0],
                last=record.loss_repeat[-1],
                first_fresh=record.loss_first[0],
                last_fresh=record.loss_first[-1],
                score=float(last_ind.max()),
            )
        )
    elif found := induction_heads(last_ind, layers=range(1, layers)):
        lines.append(induction_line(found, last_ind, record.probe_length))
    else:
        lines.append(text.NO_INDUCTION.format(score=float(last_ind[1:].max()), minimum=INDUCTION_MIN))
    return lines


def heads_named(heads: list[tuple[int, int]]) -> str:
    """(layer, head) pairs, 0-indexed, in words from 1, by layer: "layer 2, heads 1, 3 and 4"."""
    parts = []
    for layer in sorted({layer for layer, _ in heads}):
        numbers = [str(head + 1) for at, head in sorted(heads) if at == layer]
        listed = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
        parts.append(f"layer {layer + 1}, head{'s' if len(numbers) > 1 else ''} {listed}")
    return "; ".join(parts)


def induction_line(found: tuple[tuple[int, int], ...], scores: np.ndarray, length: int) -> str:
    """The induction heads (INDUCTION_MIN, the rule explore uses), the highest named when several
    are, and one line on how explore's measurement differs (its tokens, not the probe)."""
    (layer, head), one = found[0], len(found) == 1
    highest = (text.INDUCTION_ONE if one else text.INDUCTION_HIGHEST).format(
        layer=layer + 1, head=head + 1, score=scores[layer, head]
    )
    named = heads_named(list(found))
    line = text.INDUCTION_HEADS.format(
        heads=named[0].upper() + named[1:], verb="is an" if one else "are", noun="head" if one else "heads",
        minimum=INDUCTION_MIN, length=length, highest=highest,
    )  # fmt: skip
    return line + " " + text.INDUCTION_ELSEWHERE.format(minimum=INDUCTION_MIN)


@st.cache_resource(max_entries=2, show_spinner=False)
def _recorded_ablation(folder: str, settings_key: str, settings: dict) -> tuple[float, np.ndarray]:
    """The shipped model's ablation, once per process."""
    return repeat_loss_with_ablation(load_engine(folder, "numpy"), eval_batch(settings))


def ablation(record: TrainingRecord, run: Trainer | None, folder: Path | None) -> tuple[float, np.ndarray]:
    """(the repeats' loss with every head, (L, H) with each head cut) for this run at its last step."""
    if run is None:
        return _recorded_ablation(str(folder), repr(sorted(record.settings.items())), record.settings)
    ss = st.session_state
    memo = (id(run), run.step)
    if ss.get(ABLATION_KEY, (None,))[0] != memo:
        engine = engine_from_params(run.params, run.config)
        ss[ABLATION_KEY] = (memo, repeat_loss_with_ablation(engine, eval_batch(record.settings)))
    return ss[ABLATION_KEY][1]


def findings_ui(
    record: TrainingRecord, run: Trainer | None, folder: Path | None, big: bool, shown: int
) -> None:
    """The statements, then the ablation chart and its one line, headed by the step they measure
    (the run's last recorded one), and saying so when the maps show another (`shown`)."""
    last = int(record.steps[-1])
    heading = text.FINDINGS.format(step=last)
    if big:  # a projector: one block under the maps, no large heading
        st.markdown(f"**{heading}**\n" + "".join(f"\n- {line}" for line in statements(record)))
    else:
        st.subheader(heading)
        st.markdown("\n".join(f"- {line}" for line in statements(record)))
    if shown != last and not big:  # on a projector the heading's step says it, in one screen's height
        st.caption(text.FINDINGS_ELSEWHERE.format(last=last, shown=shown))
    with st.spinner(text.ABLATION_SPINNER):
        baseline, cut = ablation(record, run, folder)
    with st.expander(text.ABLATION_EXPANDER, icon=":material/content_cut:") if big else st.container():
        _ablation_chart(record, baseline, cut, big)


def _ablation_chart(record: TrainingRecord, baseline: float, cut: np.ndarray, big: bool) -> None:
    layer, head = np.unravel_index(int(np.argmax(cut)), cut.shape)
    st.markdown(
        text.ABLATION_BIGGEST.format(
            name=head_name(int(layer), int(head)).replace("L", "layer ").replace(" H", ", head "),
            baseline=baseline,
            loss=float(cut[layer, head]),
        )
    )
    fig = ablation_bars(
        cut,
        baseline,
        title=text.ABLATION_TITLE.format(baseline=baseline),
        x_title=text.ABLATION_AXIS,
        y_title=text.LOSS_AXIS,
        font=18 if big else 13,
        height=420 if big else 320,
    )
    chart(fig, "train_ablation_chart", chart_filename("train", "ablation", f"step{record.steps[-1]}"))
