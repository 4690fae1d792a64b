"""The stops of the learn page's translator mode (translator.py): one head's cross-attention in one
decoder layer, from its two inputs to the norm after the residual, then the check against the
model's forward pass and the head's matrix with the grammar's alignment. Each stop draws only when
the view shows it (widgets.shown). Every number is core/translate/lesson.py's; every figure in a
caption is computed from them here.

Rows are the French words being written (row t: the decoder step that writes word t), columns the
English words read. The row followed is outlined in red. Chart keys: "tr_" + the step's name.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from core.translate.lesson import CHECKED, CrossStep
from core.translate.parse import pair_of
from dashboard.charts.heatmap import PAGE, PRESENTER, cell_outline, row_outline
from dashboard.charts.learn import short_labels
from dashboard.charts.marks import gold_outlines
from dashboard.content import learn_translator as text
from dashboard.presenter import presenting
from dashboard.views.learn import compute
from dashboard.views.learn.sources import SHOWN_DIMS
from dashboard.views.learn.stop_parts import NARROW, first_dims, shape_text, stop_intro, stop_matrix
from dashboard.views.learn.widgets import shown
from dashboard.widgets import chart, chart_filename, md

PRESENTER_HEIGHT = 350  # a matrix on a 1920 x 1080 projector, under the stop's heading and text
TOLERANCE = 1e-5
DECIMALS = 2  # a vector's numbers: enough to read, and room for eight of them in half the screen
# Fixed stylesheet (no user text): the check's table at the projector's body size
_BIG_TABLE = "<style>.st-key-tr_check_table table { font-size: 1.25rem !important; }</style>"


class _Stop:
    """What every stop reads: the step, the row followed, the axis labels, the words."""

    def __init__(self, step: CrossStep, row: int):
        self.step, self.row = step, row
        self.rows = short_labels(step.target_tokens)  # French, being written
        self.cols = short_labels(step.source_tokens)  # English, read
        self.word = md(step.target_tokens[row])  # the translator's own vocabulary, escaped all the same
        self.head = step.head + 1

    def outline(self, n_cols: int) -> list[dict]:
        return [row_outline(self.row, n_cols)]

    def matrix(self, view: str, name: str, values: np.ndarray, rows, cols, share: float, **kwargs) -> None:
        """One chart of the stop, its title above it; on a projector no taller than the screen holds."""
        title = text.CHARTS[name].format(head=self.head, root=math.sqrt(self.step.d_k))
        if presenting():
            kwargs.setdefault("height", min(PRESENTER_HEIGHT, 60 + PRESENTER.row_px * len(rows)))
        stop_matrix(view, f"tr_{name}", title, values, rows, cols, share=share, **kwargs)

    def dims(self, view: str, name: str, share: float, english: bool = False) -> None:
        """A (rows × width) array's first dimensions (as many as a third or a half of the screen
        holds at 2 decimals), the French row followed outlined."""
        n = SHOWN_DIMS if share > 0.4 or presenting() else NARROW
        values, dims, dim_title = first_dims(self.step[name], n)
        rows = self.cols if english else self.rows
        shapes = [] if english else self.outline(len(dims))
        kwargs = {"col_title": dim_title, "shapes": shapes, "decimals": DECIMALS}
        self.matrix(view, name, values, rows, dims, share, **kwargs)

    def attention(self, view: str, name: str, share: float, array: str | None = None, **kwargs) -> None:
        """A (T × S) matrix (the step's `array`, default `name`): French rows, English columns."""
        kwargs.setdefault("shapes", self.outline(len(self.cols)))
        kwargs.setdefault("decimals", 4 if presenting() or share > 0.6 else DECIMALS)  # beside another: 2
        titles = {"row_title": text.ROW_TITLE, "col_title": text.COL_TITLE}
        self.matrix(view, name, self.step[array or name], self.rows, self.cols, share, **titles, **kwargs)


def draw_stops(step: CrossStep, row: int, sentence: str, gaps: tuple[dict, dict]) -> None:
    s = _Stop(step, row)
    for view, draw in (
        ("1", _inputs),
        ("2", _projections),
        ("3", _scores),
        ("4", _scaling),
        ("5", _softmax),
        ("6", _weighted_sum),
        ("7", _output),
    ):
        if shown(view):
            draw(s)
    if shown("check"):
        _check(s, sentence, gaps)


def _intro(stop: _Stop, view: str, shapes: list[str], /, **fields) -> None:
    title, formula, body = text.STEPS[view]
    number = f"Step {view} · " if view.isdigit() else ""
    stop_intro(view, number + title, formula, body.format(word=stop.word, **fields), shapes)


def _inputs(s: _Stop) -> None:
    step = s.step
    fed = md(step.decoder_inputs[s.row])
    _intro(s, "1", [shape_text("M", step["memory"].shape), shape_text("Y", step["state"].shape)], fed=fed)
    left, right = st.columns(2)
    with left:
        s.dims("1", "memory", 0.5, english=True)
    with right:
        s.dims("1", "state", 0.5)


def _projections(s: _Stop) -> None:
    step = s.step
    d_k, d_model = step.d_k, step["state"].shape[-1]
    t, n = len(s.rows), len(s.cols)
    shapes = [
        shape_text("W_h", (d_model, d_k)),
        shape_text("Q_h", (t, d_k)),
        shape_text("K_h, V_h", (n, d_k)),
    ]
    fields = {"head": s.head, "c0": step.head * d_k + 1, "c1": (step.head + 1) * d_k, "d_model": d_model}
    _intro(s, "2", shapes, t=t, s=n, **fields)
    for col, name in zip(st.columns(3), ("query", "key", "value"), strict=True):
        with col:
            s.dims("2", name, 1 / 3, english=name != "query")


def _scores(s: _Stop) -> None:
    step = s.step
    scores = step["scores"][s.row]
    top = int(np.argmax(scores))
    shapes = [shape_text("Q_h", step["query"].shape), shape_text("K_hᵀ", step["key"].T.shape)]
    fields = {"t": len(s.rows), "s": len(s.cols), "top": md(step.source_tokens[top])}
    _intro(s, "3", [*shapes, shape_text("S", step["scores"].shape)], **fields)
    s.attention("3", "scores", 1.0, shapes=[*s.outline(len(s.cols)), cell_outline(s.row, top, width=3)])
    q, k = step["query"][s.row], step["key"][top]
    terms = " + ".join(f"{a:.2f} × {b:.2f}" for a, b in zip(q[:3], k[:3], strict=True))
    said = text.SCORE_SUM.format(word=s.word, top=md(step.source_tokens[top]), terms=terms)
    st.caption(said.replace("VALUE", f"{float(scores[top]):.4f}").replace("DK", str(step.d_k)))


def _scaling(s: _Stop) -> None:
    step = s.step
    root = math.sqrt(step.d_k)
    gap = float(np.abs(step["scaled"] - step["scaled_folded"]).max())
    same = text.SAME_EXACTLY.format(root=root) if gap == 0 else text.SAME_ROUNDED.format(gap=gap)
    formula_fields = {"d_k": step.d_k, "root": root, "same": same}
    title, formula, body = text.STEPS["4"]
    formula = formula.replace("DK", str(step.d_k)).replace("ROOT", f"{root:g}")
    shapes = [f"√d_k = √{step.d_k} = {root:g}", shape_text("S'", step["scaled"].shape)]
    stop_intro("4", f"Step 4 · {title}", formula, body.format(word=s.word, **formula_fields), shapes)
    left, right = st.columns([1.2, 1], gap="large")
    with left:
        s.attention("4", "scaled", 1.2 / 2.2)
    with right:
        rows = [r.format(root=f"{root:g}") for r in text.SCALE_ROWS]
        values = np.stack([step["scores"][s.row], step["scaled"][s.row], step["scaled_folded"][s.row]])
        decimals = 4 if presenting() else DECIMALS
        kwargs = {"col_title": text.COL_TITLE, "height": None, "decimals": decimals}
        s.matrix("4", "scale_row", values, rows, s.cols, 1 / 2.2, **kwargs)


def _softmax(s: _Stop) -> None:
    step = s.step
    t = len(s.rows)
    _intro(s, "5", [shape_text("A", step["probs"].shape), "each row sums to 1"], s=len(s.cols))
    left, right = st.columns([len(s.cols) + 3, t + 3], gap="medium")
    share = (len(s.cols) + 3) / (len(s.cols) + t + 6)
    with left:
        s.attention("5", "probs", share, probabilities=True, show_colorbar=False)
    with right:
        hidden = np.triu(np.ones((t, t), dtype=bool), k=1)
        title = text.CHARTS["self_probs"]
        st.markdown(f"**{title}**")
        fig = compute.causal_chart(
            step["self_probs"],
            s.rows,
            short_labels(step.decoder_inputs),
            hidden=hidden,
            hidden_text="0",
            sizing=PRESENTER if presenting() else PAGE,
            share=1 - share,
            decimals=4 if presenting() else DECIMALS,
            probabilities=True,
            show_colorbar=False,
            row_title=text.ROW_TITLE,
            col_title=text.SELF_COL,
            shapes=[row_outline(s.row, t)],
            height=min(PRESENTER_HEIGHT, 60 + PRESENTER.row_px * t) if presenting() else None,
        )
        chart(fig, "tr_self_probs", filename=chart_filename("learn", "translator", "self-attention"))
    probs = step["probs"][s.row]
    n_hidden = int(hidden[s.row].sum())
    said = text.SOFTMAX_ROW.format(word=s.word, top=probs.max(), low=probs.min(), hidden=n_hidden, t=t)
    st.caption(said)


def _weighted_sum(s: _Stop) -> None:
    step = s.step
    shapes = [shape_text("A", step["probs"].shape), shape_text("V_h", step["value"].shape)]
    _intro(s, "6", [*shapes, shape_text("Z_h", step["context"].shape)])
    left, right = st.columns([1, 1], gap="large")
    with left:
        s.dims("6", "context", 0.5)
    with right:
        _sum_table(s)


def _sum_table(s: _Stop) -> None:
    """Row followed: each English word's weight times its value vector (first dimensions), largest
    weight first, and their sum, z: the row of Z on the left."""
    step = s.step
    weights, values = step["probs"][s.row], step["value"][:, :NARROW]
    order = np.argsort(-weights)
    rows = [f"{weights[i]:.4f} × {s.cols[i]}" for i in order] + [text.SUM_ROW]
    terms = np.vstack([weights[order, None] * values[order], step["context"][s.row, :NARROW]])
    dims, dim_title = [str(d + 1) for d in range(NARROW)], f"{text.DIM_TITLE} (first {NARROW} of {step.d_k})"
    outline = [row_outline(len(rows) - 1, NARROW)]
    s.matrix("6", "sum", terms, rows, dims, 0.5, col_title=dim_title, row_title=text.SUM_ROWS, shapes=outline)


def _output(s: _Stop) -> None:
    step = s.step
    d_model, d_k = step["output"].shape[-1], step.d_k
    shapes = [shape_text("Concat", step["concat"].shape), shape_text("W^O", step["w_o"].shape)]
    shapes += [shape_text("Y'", step["normed"].shape), f"ε = {step.eps:g}"]
    _intro(s, "7", shapes, n_heads=step.n_heads, d_model=d_model, head=s.head, d_k=d_k)
    for col, name in zip(st.columns(3), ("head_output", "output", "normed"), strict=True):
        with col:
            s.dims("7", name, 1 / 3)
    out, part = step["output"][s.row], step["head_output"][s.row]
    residual = step["residual"][s.row]
    centred = (residual - residual.mean()) / np.sqrt(residual.var() + step.eps)
    share = float(np.linalg.norm(part) / max(np.linalg.norm(out), 1e-12))
    said = text.OUTPUT_ROW.format(
        word=s.word, head=s.head, share=share, mean=centred.mean(), std=centred.std()
    )
    st.caption(said)


def _check(s: _Stop, sentence: str, gaps: tuple[dict, dict]) -> None:
    step = s.step
    gap64, gap32 = gaps
    _intro(s, "check", ["float64 and float32", f"tolerance {TOLERANCE:g}"])
    left, right = st.columns([1.15, 1], gap="large")
    with left:
        ok = 0
        rows = []
        for name in CHECKED:
            size = float(np.abs(step[name]).max())
            good = gap64[name] <= TOLERANCE and gap32[name] <= TOLERANCE * max(1.0, size)
            ok += good
            where, what = text.CHECK_NAMES[name]
            shape = " × ".join(map(str, step[name].shape))
            verdict = text.CHECK_OK if good else text.CHECK_BAD
            rows.append(
                (where, what, shape, f"{size:.3g}", f"{gap64[name]:.1e}", f"{gap32[name]:.1e}", verdict)
            )
        table = {c: [r[i] for r in rows] for i, c in enumerate(text.CHECK_COLUMNS)}
        with st.container(key="tr_check_table"):  # fixed labels and numbers only: no user text
            st.table(table, hide_index=True)
        if presenting():
            st.html(_BIG_TABLE)
        line = text.CHECK_LINE.format(
            ok=ok, n=len(CHECKED), gap64=max(gap64.values()), gap32=max(gap32.values())
        )
        st.markdown(line)
        said = st.empty()  # under the table: the matrix takes the right's height
    with right:
        said.caption(_aligned(s, sentence))


def _aligned(s: _Stop, sentence: str) -> str:
    """This head's whole matrix, the grammar's alignment outlined where it writes this translation;
    returns what to say about the alignment."""
    step = s.step
    pair = pair_of(sentence)
    words = tuple(w for w in step.target_tokens if w != "</s>")
    gold = pair.alignment if pair is not None and tuple(pair.target) == words else ()
    outlines = gold_outlines(gold)
    s.attention("check", "aligned", 0.46, array="probs", probabilities=True, shapes=outlines)
    if pair is None:
        return text.NOT_GRAMMAR
    if not gold:
        return text.GOLD_OTHER
    links: dict[int, set[int]] = {}
    for t, c in gold:
        links.setdefault(t, set()).add(c)
    right = sum(int(np.argmax(step["probs"][t])) in cs for t, cs in links.items())
    return f"{text.GOLD_SAME} {text.ALIGN_LINE.format(head=s.head, right=right, total=len(links))}"
