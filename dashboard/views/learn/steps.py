"""The one renderer of the seven steps (and the heads side by side), whatever made the numbers.

`draw_steps(trace, source, head)` reads a core.lesson.trace.LayerTrace by its names (x, query, key, value,
scores, scaled, probs, context, concat, w_o, output, residual, normed) and draws the steps the view
shows. What differs between the sources (toy model, worked example, real BERT or GPT-2 layer) is said
by a StepSource: texts and formulas that replace the standard ones, notes, steps the source lacks,
the article's numbers to check, how many dimensions of a wide matrix to print, views drawn between
steps (a decoder's). Chart keys are the trace's names ("scores", "probs", ...), so a test finds a
step's chart by name. User text reaches the page only as Plotly labels, never through markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from core.lesson.trace import LayerTrace
from core.lesson.worked_examples import StepCheck
from dashboard.charts.heatmap import PAGE, PRESENTER, cell_outline, maps_per_row, number_repeats
from dashboard.charts.learn import short_labels
from dashboard.content.learn import (
    CHART_TITLES,
    COL_TITLE,
    DIM_TITLE,
    FLAG_CAPTION,
    HEADS_FORMULA,
    HEADS_TEXT,
    HEADS_TITLE,
    ROW_TITLE,
    SATURATION,
    SCALING_OFF,
    STEP_TEXT,
    TOO_WIDE,
    W_O_FOLDED,
    WHY_SCALE,
)
from dashboard.presenter import presenting
from dashboard.views.learn import compute
from dashboard.views.learn.checks import draw_check
from dashboard.views.learn.widgets import shown
from dashboard.widgets import chart, chart_filename, csv_download

# the step each chart belongs to, for the names of saved images and tables
STEP_OF = {"x": 1, "embeddings": 1, "positions": 1, "query": 2, "key": 2, "value": 2, "scores": 3}
STEP_OF |= {"scaled": 4, "probs": 5, "probs_scaled": 5, "saturation": 5, "context": 6}
STEP_OF |= dict.fromkeys(("output", "residual", "normed"), 7)


@dataclass(frozen=True, eq=False)
class StepSource:
    """What is special about where a trace's numbers came from."""

    views: tuple[str, ...]  # the step views offered, in order (content.learn.STEP_VIEWS or fewer)
    titles: Mapping[int, str] = field(default_factory=dict)  # step -> title replacing the standard
    texts: Mapping[int, str] = field(default_factory=dict)  # step -> explanation replacing the standard
    formulas: Mapping[int, str] = field(default_factory=dict)  # step -> LaTeX replacing the standard
    notes: Mapping[int, str] = field(default_factory=dict)  # step -> said after the explanation
    missing: Mapping[int, str] = field(default_factory=dict)  # step -> why this source has no numbers
    checks: Mapping[str, StepCheck] = field(default_factory=dict)  # trace name -> the article's numbers
    shown_dims: int | None = None  # print only the first n dimensions of a wider matrix (a real model)
    compare_probs: np.ndarray | None = None  # (H, T, T) with scaling, beside unscaled probs (toy model)
    saturation_seed: int | None = None  # show why scaling matters, with this seed's curves (toy model)
    after: Mapping[int, Callable[[], None]] = field(default_factory=dict)  # step -> more, drawn after it


@dataclass(frozen=True, eq=False)
class _Step:
    """One drawing: the trace, its source, the head shown and the axis labels."""

    tr: LayerTrace
    src: StepSource
    head: int
    rows: list[str]  # the queries' labels
    cols: list[str]  # the keys' labels

    @property
    def of_head(self) -> str:
        return f" (head {self.head + 1} of {self.tr.n_heads})" if self.tr.n_heads > 1 else ""

    @property
    def sub(self) -> str:
        return "_i" if self.tr.n_heads > 1 else ""

    def dims(self, values: np.ndarray, narrow: bool = False) -> tuple[np.ndarray, list[str], str]:
        """(the columns printed, their labels, the column axis' title): all of them, or the first
        shown_dims (half as many in a chart a third of the page wide)."""
        width, n = values.shape[-1], self.src.shown_dims
        if n is not None and narrow:
            n = max(1, n // 2)
        if n is None or width <= n:
            return values, _numbers(width), DIM_TITLE
        return values[..., :n], _numbers(n), f"{DIM_TITLE} (first {n} of {width})"


def _numbers(n: int) -> list[str]:
    return [str(j + 1) for j in range(n)]


def _shape(name: str, shape: tuple[int, ...]) -> str:
    return f"{name}: ({' × '.join(map(str, shape))})"


def _name(s: _Step, key: str) -> str:
    """What a saved chart or table is called: attention-explorer_learn_step5_probs_head1."""
    step = STEP_OF.get(key)
    where = f"step{step}" if step else "heads"
    head = f"head{s.head + 1}" if step in (2, 3, 4, 5, 6) and s.tr.n_heads > 1 else None
    return chart_filename("learn", where, key, head)


def _chart(s: _Step, fig, key: str) -> None:
    chart(fig, key, filename=_name(s, key))


def draw_steps(trace: LayerTrace, source: StepSource, head: int) -> None:
    """Draw the steps the chosen view shows (1 to 7, the heads, or all)."""
    step = _Step(trace, source, head, short_labels(trace.query_tokens), short_labels(trace.key_tokens))
    steps = (_embeddings, _projections, _scores, _scaled, _softmax, _context, _output)
    for number, draw in enumerate(steps, 1):
        if shown(number):
            draw(step)
        source.after.get(number, lambda: None)()  # a decoder's extra stop, if any (it checks shown())
    if "heads" in source.views and shown("heads"):
        _heads(step)


def _titled_chart(
    s: _Step, title: str, key: str, values: np.ndarray, rows: list[str], cols: list[str], **kwargs
) -> None:
    """A chart narrower than the page, its title written above it: inside the figure, a long title
    would run into the column axis' title, which a narrow chart centres close to it."""
    st.markdown(f"**{title}**")
    _chart(s, compute.matrix_figure(values, rows, cols, **kwargs), key)


def _intro(s: _Step, number: int, shapes: list[str]) -> None:
    """Header, then the formula (with the shapes under it) beside the explanation, full width: the
    matrices go below, where they get the whole screen."""
    title, formula, text = STEP_TEXT[number]
    title, text = s.src.titles.get(number, title), s.src.texts.get(number, text)
    if note := s.src.notes.get(number):
        text = f"{text} {note}"
    if not presenting():  # a projector's controls are folded away: the room goes to the matrices
        st.divider()
    st.subheader(f"Step {number} · {title}", anchor=f"step-{number}")
    left, right = st.columns([1, 1], gap="large", vertical_alignment="center")
    with left:
        st.latex(s.src.formulas.get(number, formula))
        st.caption("Shapes: " + " · ".join(shapes))
    with right:
        st.markdown(text)


def _missing(s: _Step, number: int, shapes: list[str]) -> None:
    _intro(s, number, shapes)
    st.info(s.src.missing.get(number, "This source has no numbers for this step."), icon=":material/info:")


def _embeddings(s: _Step) -> None:
    tr = s.tr
    if "x" not in tr:
        _missing(s, 1, ["no embeddings here"])
        return
    _intro(s, 1, [_shape("X", tr["x"].shape)])
    if "positions" in tr and np.any(tr["positions"]):
        left, right = st.columns(2)
        for col, name in ((left, "embeddings"), (right, "positions")):
            values, dims, _ = s.dims(tr[name])
            with col:
                title = CHART_TITLES[name]
                _titled_chart(s, title, name, values, s.rows, dims, col_title=DIM_TITLE, share=0.5)
    values, dims, dim_title = s.dims(tr["x"])
    _chart(s, compute.matrix_figure(values, s.rows, dims, title=CHART_TITLES["x"], col_title=dim_title), "x")
    _csv(s, "x", values, dims, rows=s.rows, corner=DIM_CORNER)


def _projections(s: _Step) -> None:
    tr, sub = s.tr, s.sub
    t_q, t_k, d_k = len(s.rows), len(s.cols), tr.d_k
    shapes = []
    if "w_q" in tr:
        shapes.append(_shape(f"W^Q{sub}, W^K{sub}, W^V{sub}", (tr["w_q"].shape[0], d_k)))
    if t_q == t_k:
        shapes.append(_shape(f"Q{sub}, K{sub}, V{sub}", (t_q, d_k)))
    else:
        shapes += [_shape(f"Q{sub}", (t_q, d_k)), _shape(f"K{sub}, V{sub}", (t_k, d_k))]
    if tr.n_heads > 1:
        shapes.append(f"{tr.n_heads} heads; below, head {s.head + 1}")
    _intro(s, 2, shapes)
    for col, name in zip(st.columns(3), ("query", "key", "value"), strict=True):
        values, dims, dim_title = s.dims(tr[name][s.head], narrow=True)
        rows = s.rows if name == "query" else s.cols
        title = f"{CHART_TITLES[name]}{s.of_head}"
        with col:
            _titled_chart(s, title, name, values, rows, dims, col_title=dim_title, share=1 / 3)
            _csv(s, name, values, dims, rows=rows, corner=DIM_CORNER)


def _scores(s: _Step) -> None:
    t_q, t_k, d_k, sub = len(s.rows), len(s.cols), s.tr.d_k, s.sub
    _intro(s, 3, [_shape(f"Q{sub}", (t_q, d_k)), _shape(f"K{sub}ᵀ", (d_k, t_k)), _shape("S", (t_q, t_k))])
    _attention_chart(s, "scores", f"{CHART_TITLES['scores']}{s.of_head}")


def _scaled(s: _Step) -> None:
    tr, square = s.tr, (len(s.rows), len(s.cols))
    if tr.scale:
        _intro(s, 4, [f"√d_k = √{tr.d_k} = {np.sqrt(tr.d_k):.4f}", _shape("S'", square)])
        title = CHART_TITLES["scaled"]
    else:
        _intro(s, 4, [_shape("S", square), "not divided"])
        st.warning(SCALING_OFF, icon=":material/warning:")
        title = CHART_TITLES["unscaled"]
    masked = None if tr.mask is None else ~tr.mask
    _attention_chart(s, "scaled", f"{title}{s.of_head}", masked=masked)
    if s.src.saturation_seed is not None and tr.scale:  # with scaling off, step 5 shows it
        with st.expander(WHY_SCALE, expanded=False):
            _saturation(s)


def _softmax(s: _Step) -> None:
    _intro(s, 5, [_shape("A", (len(s.rows), len(s.cols))), "each row sums to 1"])
    probs = s.tr["probs"][s.head]
    if s.src.compare_probs is not None and not s.tr.scale:
        _compare_scaling(s, probs, s.src.compare_probs[s.head])
        return
    _attention_chart(s, "probs", f"{CHART_TITLES['probs']}{s.of_head}", probabilities=True)
    if "probs" not in s.src.checks:
        st.caption(f"Largest weight in a row, on average: {probs.max(axis=-1).mean():.4f}.")


def _compare_scaling(s: _Step, probs: np.ndarray, scaled_probs: np.ndarray) -> None:
    """Unscaled weights (in use) beside the scaled ones, then why scaling matters."""
    qk = {"row_title": ROW_TITLE, "col_title": COL_TITLE, "probabilities": True}
    # side by side while the numbers fit in half the width, else one above the other
    side = len(s.cols) <= 8
    a, b = st.columns(2) if side else (st.container(), st.container())
    share = 0.5 if side else 1.0
    # the key "probs" stays with the trace's own weights, as in every other view of this step
    for col, key, name, values in (
        (a, "probs", "probs_unscaled", probs),
        (b, "probs_scaled", "probs_scaled", scaled_probs),
    ):
        title = CHART_TITLES[name] + (s.of_head if key == "probs" else "")
        with col:
            _titled_chart(s, title, key, values, s.rows, s.cols, share=share, **qk)
    mean, scaled_mean = probs.max(axis=-1).mean(), scaled_probs.max(axis=-1).mean()
    st.metric(
        "Largest weight in a row, on average, without scaling",
        f"{mean:.4f}",
        delta=f"{mean - scaled_mean:+.4f} vs with scaling",
        delta_color="inverse",
    )
    if s.src.saturation_seed is not None:
        _saturation(s)


def _context(s: _Step) -> None:
    t_q, t_k, d_v, sub = len(s.rows), len(s.cols), s.tr["value"].shape[-1], s.sub
    _intro(s, 6, [_shape("A", (t_q, t_k)), _shape(f"V{sub}", (t_k, d_v)), _shape(f"Z{sub}", (t_q, d_v))])
    _attention_chart(s, "context", f"{CHART_TITLES['context']}{s.of_head}", dims=True)


def _output(s: _Step) -> None:
    tr = s.tr
    if "output" not in tr:
        _missing(s, 7, ["not part of this example"])
        return
    width = tr["concat"].shape[-1]
    shapes = [_shape("Concat", tr["concat"].shape), _shape("W^O", (width, tr["output"].shape[-1]))]
    if "normed" in tr:
        shapes += [_shape("Y", tr["normed"].shape), f"ε = {tr.ln_eps:g}"]
    _intro(s, 7, shapes)
    titles = {**CHART_TITLES, "output": CHART_TITLES["output_bias" if "b_o" in tr else "output"]}
    last = [name for name in ("output", "residual", "normed") if name in tr][-1]
    for name in ("output", "residual", "normed"):
        if name in tr:
            values, dims, dim_title = s.dims(tr[name])
            fig = compute.matrix_figure(values, s.rows, dims, title=titles[name], col_title=dim_title)
            _chart(s, fig, name)
            if name == last:  # the step's result: the normed output (or the output, without a norm)
                _csv(s, name, values, dims, rows=s.rows, corner=DIM_CORNER)


# ---- the matrices of steps 3 to 6, checked against an article when there is one --------------------


def _attention_chart(
    s: _Step, name: str, title: str, *, dims: bool = False, probabilities: bool = False, masked=None
) -> None:
    """One head's matrix (rows: queries); beside it, when the source checks this step, the article's
    printed numbers with their verdicts, and the differing cells outlined in red."""
    values = s.tr[name][s.head]
    cols, col_title = s.cols, COL_TITLE
    if dims:
        values, cols, col_title = s.dims(values)
    kwargs = {"row_title": ROW_TITLE, "col_title": col_title, "probabilities": probabilities}
    check = s.src.checks.get(name)
    if check is None:
        _chart(s, compute.matrix_figure(values, s.rows, cols, title=title, masked=masked, **kwargs), name)
        _csv(s, name, values, cols)
        return
    outlines = tuple(cell_outline(*flag.index) for flag in check.flags)
    left, right = st.columns([1, 1.3], gap="large")
    with left:
        # share: the left column of [1, 1.3] with a large gap, (820 - 48) / 2.3 px of 820
        _titled_chart(s, title, name, values, s.rows, cols, shapes=outlines, share=0.41, **kwargs)
        if check.flags:
            st.caption(FLAG_CAPTION)
        _csv(s, name, values, cols)
    with right:
        draw_check(check, s.tr.query_tokens, s.tr.key_tokens)


ATTENTION_CORNER = "query (from) \\ key (to)"
DIM_CORNER = "token \\ dimension"


def _csv(
    s: _Step, name: str, values: np.ndarray, cols: list[str], rows=None, corner=ATTENTION_CORNER
) -> None:
    """The matrix on screen as a labelled table (rows: the queries, "from", unless `rows`)."""
    labels = number_repeats(s.rows if rows is None else rows), number_repeats(cols)
    csv_download(values, *labels, _name(s, name), key=f"csv_{name}", corner=corner)


# ---- the heads side by side, and why scale -----------------------------------------------------------


def _heads(s: _Step) -> None:
    tr = s.tr
    h, t = tr.n_heads, len(s.rows)
    if not presenting():
        st.divider()
    st.header(HEADS_TITLE, anchor="multi-head")
    st.latex(HEADS_FORMULA)
    st.markdown(HEADS_TEXT)
    # 12 heads: four rows of three; fewer where a map's columns would be too narrow (18 letters)
    per_row = maps_per_row(h, s.rows, len(s.cols), 3 if h > 8 else 4, PRESENTER if presenting() else PAGE)
    numbers = t * per_row <= 16  # about 90 px per printed number on a 1500 px page
    said = "One scale for every head: white is weight 0, dark blue weight 1."
    if not numbers:
        said += " The numbers are left out where the cells are too small to hold them; hover to read one."
    st.caption(said)
    for start in range(0, h, per_row):
        for i, col in zip(range(start, min(start + per_row, h)), st.columns(per_row), strict=False):
            with col:
                fig = compute.matrix_figure(
                    tr["probs"][i],
                    s.rows,
                    s.cols,
                    title=f"head {i + 1}",
                    row_title=ROW_TITLE if i == start else "",  # once a row: the cells get the room
                    col_title=COL_TITLE,
                    probabilities=True,
                    show_numbers=numbers,
                    show_colorbar=False,  # one scale for all, said once above
                    share=1 / per_row,
                )
                name = chart_filename("learn", "heads", f"head{i + 1}")
                chart(fig, f"head_{i}", filename=name)
                labels = number_repeats(s.rows), number_repeats(s.cols)
                csv_download(tr["probs"][i], *labels, name, key=f"csv_head_{i}", corner=ATTENTION_CORNER)
    if "w_o" not in tr or (s.src.shown_dims is not None and tr["concat"].shape[-1] > s.src.shown_dims):
        st.caption(TOO_WIDE.format(t=t, d_model=tr["concat"].shape[-1]))
        return
    with st.expander(W_O_FOLDED, icon=":material/merge:") if presenting() else st.container():
        _concat_and_w_o(s)  # a projector's screen holds the heads' maps; W^O opens under them


def _concat_and_w_o(s: _Step) -> None:
    tr = s.tr
    h, d_k, d_out = tr.n_heads, tr.d_k, tr["w_o"].shape[1]
    concat_cols = [f"h{i + 1}·{j + 1}" for i in range(h) for j in range(d_k)]
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.caption(
            f"Concatenation: the heads' Z side by side, ({len(s.rows)} × {h * d_k}); "
            "column hN·m is head N, dimension m."
        )
        fig = compute.matrix_figure(tr["concat"], s.rows, concat_cols, title="Concat(Z₁, …, Z_H)", share=0.5)
        _chart(s, fig, "concat")
    with right:
        st.caption(f"W^O, ({h * d_k} × {d_out}): one row per concatenated column.")
        fig = compute.matrix_figure(
            tr["w_o"], concat_cols, _numbers(d_out), title="W^O", col_title="output dimension", share=0.5
        )
        _chart(s, fig, "w_o")


def _saturation(s: _Step) -> None:
    seed = s.src.saturation_seed
    curve = compute.saturation(seed)
    st.markdown(SATURATION.format(seed=seed, n_keys=curve.n_keys, n_trials=curve.n_trials))
    _chart(s, compute.saturation_chart(seed, s.tr.d_k, s.tr.scale), "saturation")
