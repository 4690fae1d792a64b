"""The head view's neuron view: where one attention weight comes from (issue 16 §5).

A cell (query token i, key token j) is chosen by clicking the head map (one invisible point per
cell, dashboard.charts.neuron.add_cell_targets) or with two token pickers; it is stored as the
page's focus → target pair (word references, explore_focus / explore_target), so the map's red box,
the focus view and the link all name it. With no pair chosen, the cell is the first word's row and
its largest weight. The section is a lazy expander: nothing is computed until it is open.

The arithmetic (core.measures.neuron.cell_arithmetic) works on the model's tokens, whatever the map merges
or hides; the weights come from the engine that made the result (layer_weights), so the numbers are
that engine's own. When the map shows norms ‖α f(x)‖ (dashboard/views/explore/flow.py), the section
still explains the weight α, and one line turns it into the map's norm (core.measures.flow, Kobayashi et al.
2020). A gap above text.ROUNDING between the recomputed and the engine's weight is not rounding: the
model's attention adds terms to q · k (e.g. relative-position scores, see
core.measures.neuron.relative_positions).
"""

from __future__ import annotations

import logging
import math
from functools import partial
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.measures.analysis import TokenView
from core.measures.flow import attention_norms, value_output_vectors
from core.measures.neuron import CellArithmetic, cell_arithmetic, relative_positions
from core.models.errors import ModelError
from core.models.registry import BUNDLED_KEY
from core.models.result import AttentionResult
from dashboard.charts.neuron import MAX_CLICK_CELLS, add_cell_targets, row_figure, vectors_figure
from dashboard.content import neuron as text
from dashboard.engines import load_engine
from dashboard.on_screen import added_tokens
from dashboard.presenter import presenting
from dashboard.state import signature
from dashboard.views.explore import links
from dashboard.views.explore.flow import Norms
from dashboard.views.explore.widgets import reset_widgets
from dashboard.widgets import chart, chart_filename, error_md, md

LOG = logging.getLogger(__name__)
OPEN_KEY = "explore_neuron_open"  # the expander's state: a click on the map opens it
TOP = 5  # how many of the largest products q × k are singled out
DIGITS = 4  # decimals of the weights shown; the check mark means agreement to these
LEARN_STEP = 3  # the learn page's step where q_i · k_j is computed


# ---- choosing the cell -----------------------------------------------------------------------------


def _set_cell(result: AttentionResult, i: int, j: int) -> None:
    """Store the cell as the page's focus → target pair (word references, as the focus view does)."""
    ss = st.session_state
    ss["explore_focus"], ss["explore_target"] = links.ref_of(result, i), links.ref_of(result, j)
    reset_widgets("focus")  # the focus view's pickers are seeded again from the pair
    reset_widgets("target")


def _on_cell_click(result: AttentionResult, view: TokenView) -> None:
    """Callback: a click on a cell of the head map picks that cell (each item's first token) and opens
    the section."""
    event = st.session_state.get("explore_head_chart") or {}
    for point in event.get("selection", {}).get("points", []):
        data = point.get("customdata")  # [row, col, value]; a typed array may arrive as {"0": r, ...}
        if isinstance(data, dict):
            data = [data.get("0"), data.get("1")]
        if (
            not isinstance(data, list)
            or len(data) < 2
            or not all(isinstance(v, int | float) for v in data[:2])
        ):
            continue
        row, col = int(data[0]), int(data[1])
        spans = view.shown_spans
        if 0 <= row < len(spans) and 0 <= col < len(spans):
            _set_cell(result, spans[row][0], spans[col][0])
            st.session_state[OPEN_KEY] = True
            return


def click_kwargs(
    fig: go.Figure, matrix: np.ndarray, result: AttentionResult, view: TokenView, *, norms: bool = False
) -> dict:
    """Make the head map's cells clickable (points added to `fig`); the keyword arguments for
    dashboard.widgets.chart that turn a click into this view's cell. {} when the map is too large.
    `norms`: the map shows norms, whose hover says the click explains the weight behind them."""
    if not add_cell_targets(fig, matrix, view.labels, hint=text.CLICK_NORMS if norms else text.CLICK):
        return {}
    return {"on_select": partial(_on_cell_click, result, view), "selection_mode": "points"}


def current_cell(result: AttentionResult, layer: int, head: int) -> tuple[int, int, bool]:
    """(i, j, chosen): the page's focus → target pair when both are set and name tokens of this text;
    otherwise the first word's row and its largest weight in this head (chosen False)."""
    ss = st.session_state
    if ss.get("explore_focus") and ss.get("explore_target"):
        i, j = links.token_of(result, ss["explore_focus"]), links.token_of(result, ss["explore_target"])
        if i is not None and j is not None:
            return i, j, True
    words = np.flatnonzero(~np.asarray(result.special_mask, dtype=bool))
    i = int(words[0]) if words.size else 0
    return i, int(np.argmax(result.attentions[layer, head, i])), False


def _on_pick(result: AttentionResult, key: str, cell: tuple[int, int], which: int) -> None:
    picked = list(cell)
    picked[which] = int(st.session_state[key])
    _set_cell(result, *picked)


def cell_picker_ui(result: AttentionResult, i: int, j: int) -> None:
    """Two selectboxes over every token (numbered from 1). Their keys carry the cell, so a click on
    the map (which changes it) brings fresh boxes showing the new cell."""
    tokens = result.tokens
    sig = signature(result.model, result.engine, tuple(tokens))
    cols = st.columns(2)
    for which, (col, label, value) in enumerate(
        ((cols[0], text.QUERY_PICKER, i), (cols[1], text.KEY_PICKER, j))
    ):
        key = f"explore_neuron_{'ij'[which]}_{sig}_{i}_{j}"
        with col:
            st.selectbox(
                label,
                list(range(len(tokens))),
                index=value,
                format_func=lambda t: f"{tokens[t]}  (#{t + 1})",
                key=key,
                on_change=_on_pick,
                args=(result, key, (i, j), which),
            )


# ---- the arithmetic --------------------------------------------------------------------------------


def _num(x: float, digits: int = DIGITS) -> str:
    """A number for a LaTeX formula: fixed decimals, negative ones in parentheses."""
    s = f"{x:.{digits}f}"
    return f"({s})" if x < 0 else s


def _latex(formula: str) -> None:
    """A formula; on a projector at large size (the presenter stylesheet enlarges text, not KaTeX)."""
    st.latex((r"\Large " if presenting() else "") + formula)


def _engine(result: AttentionResult):
    return load_engine((st.session_state.get("explore_result_key") or (BUNDLED_KEY,))[0], result.engine)


def _compute(
    result: AttentionResult, layer: int, head: int, i: int, j: int
) -> tuple[CellArithmetic, SimpleNamespace] | None:
    """The cell's arithmetic and the layer's weights from the engine that made the result, or None
    with the reason shown."""
    try:
        weights = _engine(result).layer_weights(layer)
    except ModelError as err:  # e.g. a torch architecture whose attention is not laid out like BERT's
        st.info(text.NO_WEIGHTS.format(why=error_md(err)))
        return None
    return cell_arithmetic(result.hidden_states[layer], weights, head, i, j, top=TOP), weights


def _relative_kind(result: AttentionResult) -> str | None:
    """The torch model's non-absolute position_embedding_type, if its config names one."""
    config = getattr(getattr(_engine(result), "model", None), "config", None)
    return relative_positions(config)


def _learn_link(result: AttentionResult, layer: int, head: int) -> str:
    url = links.learn_url(st.session_state.get("explore_text", ""), layer, head, LEARN_STEP)
    bundled = (st.session_state.get("explore_result_key") or (BUNDLED_KEY,))[0] == BUNDLED_KEY
    return text.TO_LEARN.format(layer=layer + 1, head=head + 1, url=url) + (
        "" if bundled else text.TO_LEARN_BUNDLED
    )


def _steps_ui(cell: CellArithmetic, result: AttentionResult, layer: int, i_tok: str, j_tok: str) -> None:
    """Steps 2 to 5 with the numbers."""
    big = presenting()
    name = chart_filename("explore", "neuron", f"layer{layer + 1}", f"head{cell.head + 1}")
    st.markdown(text.STEP_2.format(d_k=cell.d_k))
    _latex(text.STEP_2_FORMULA.format(d_k=cell.d_k))
    chart(
        vectors_figure(cell, result.tokens[cell.i], result.tokens[cell.j], big=big),
        "explore_neuron_qk",
        name + "_qk",
    )
    top_sum = float(np.sum(cell.products[cell.top], dtype=np.float64))
    st.caption(
        text.STEP_2_CAPTION.format(
            i_tok=i_tok, j_tok=j_tok, top=len(cell.top), top_sum=top_sum, score=cell.score
        )
    )
    st.markdown(text.STEP_3.format(d_k=cell.d_k))
    _latex(text.STEP_3_FORMULA.format(d_k=cell.d_k, score=_num(cell.score)))
    st.markdown(text.STEP_4)
    _latex(
        text.STEP_4_FORMULA.format(
            score=_num(cell.score), d_k=cell.d_k, root=_num(cell.sqrt_d_k), scaled=_num(cell.scaled)
        )
    )
    chart(row_figure(cell, result.tokens, big=big), "explore_neuron_row", name + "_row")
    st.caption(text.ROW_CAPTION.format(i_tok=i_tok, j_tok=j_tok))
    st.markdown(text.STEP_5)
    _latex(
        text.STEP_5_FORMULA.format(
            t=len(cell.probs_row),
            scaled=_num(cell.scaled),
            row_max=_num(cell.row_max),
            exp_j=_num(float(cell.exp_row[cell.j])),
            exp_sum=_num(cell.exp_sum),
            weight=_num(cell.weight),
        )
    )
    st.caption(text.STEP_5_WHY.format(row_max=f"{cell.row_max:.{DIGITS}f}"))


def _verdict_ui(cell: CellArithmetic, engine: float, norms: bool, relative: str | None) -> None:
    """The engine's weight beside the recomputed one: the same to DIGITS decimals, a rounding gap, or
    a gap no rounding explains (the model's attention adds terms to q · k)."""
    where = text.WHERE_NORMS if norms else text.WHERE_WEIGHTS
    shown, diff = f"{engine:.{DIGITS}f}", abs(engine - cell.weight)
    if shown == f"{cell.weight:.{DIGITS}f}":
        st.markdown(text.AGREE.format(where=where, engine=shown, digits=DIGITS))
        return
    line = text.DISAGREE if diff <= text.ROUNDING else text.NOT_REPRODUCED
    why = text.NOT_REPRODUCED_RELATIVE.format(kind=md(relative)) if relative else text.NOT_REPRODUCED_WHY
    st.markdown(
        line.format(where=where, engine=shown, diff=diff, weight=f"{cell.weight:.{DIGITS}f}", why=why)
    )


def _norm_ui(
    result: AttentionResult,
    view: TokenView,
    weights: SimpleNamespace,
    layer: int,
    cell: CellArithmetic,
    rescaled: bool,
    names: tuple[str, str],
) -> None:
    """The line from the weight α_ij to the norm the map shows: α_ij·‖f_h(x_j)‖ (core.measures.flow),
    divided by the row's total over the shown keys when rows are rescaled (the map's own cell when
    nothing is merged and both tokens are on the map)."""
    f = value_output_vectors(result.hidden_states[layer], weights, weights.n_heads)[cell.head]  # (T, D)
    probs = result.attentions[layer, cell.head, cell.i][None, None]  # (1, 1, T): the engine's α row
    row = attention_norms(probs, f[None])[0, 0]  # (T,) ‖α_im f_h(x_m)‖
    alpha, norm = float(probs[0, 0, cell.j]), float(row[cell.j])
    length = float(np.linalg.norm(f[cell.j]))
    keep = np.asarray(view.keep, dtype=bool)
    on_map = bool(keep[cell.i] and keep[cell.j])
    extra = ""
    if rescaled and on_map and not view.merged:
        total = float(row[keep].sum())
        share = norm / total if total > 0 else 0.0
        extra = text.NORM_RESCALED.format(
            norm=f"{norm:.{DIGITS}f}", total=f"{total:.{DIGITS}f}", share=f"{share:.{DIGITS}f}"
        )
    st.markdown(
        text.NORM_CELL.format(
            i_tok=names[0],
            j_tok=names[1],
            alpha=f"{alpha:.{DIGITS}f}",
            length=f"{length:.{DIGITS}f}",
            norm=f"{norm:.{DIGITS}f}",
            rescaled=extra,
            merged=text.NORM_MERGED if view.merged else "",
        )
    )


def neuron_ui(
    result: AttentionResult, view: TokenView, layer: int, head: int, norms: Norms | None = None
) -> None:
    """The section under the head map: a lazy expander, computed only when open. `norms`: what the
    map shows when it is norms (dashboard.views.explore.flow.head_norms), None for weights."""
    i, j, chosen = current_cell(result, layer, head)
    i_tok, j_tok = md(result.tokens[i]), md(result.tokens[j])
    label = text.EXPANDER.format(layer=layer + 1, head=head + 1, i_tok=i_tok, j_tok=j_tok)
    section = st.expander(label, key=OPEN_KEY, on_change="rerun", icon=":material/calculate:")
    if not section.open:
        return
    with section:
        if presenting():  # the expander's label stays small; a room needs a heading
            st.subheader(text.HEADING.format(i_tok=i_tok, j_tok=j_tok, layer=layer + 1, head=head + 1))
        clickable = view.n_items**2 <= MAX_CLICK_CELLS
        how = text.HOW_CLICK if clickable else text.HOW_PICK.format(most=math.isqrt(MAX_CLICK_CELLS))
        intro = text.INTRO if norms is None else text.INTRO_NORMS
        st.markdown(intro.format(i_tok=i_tok, j_tok=j_tok, i=i + 1, j=j + 1, how=how))
        cell_picker_ui(result, i, j)
        if not chosen:
            st.caption(text.DEFAULT_CELL)
        if view.merged or view.renormalised:
            st.caption(_tokens_note(result, view, i, j))
        st.markdown(_learn_link(result, layer, head))
        try:
            _arithmetic_ui(result, view, layer, head, (i, j), (i_tok, j_tok), norms)
        except Exception as err:  # the page goes on; the log keeps the traceback
            LOG.exception("neuron view failed")
            st.error(f"Could not recompute this weight ({type(err).__name__}).")


def _arithmetic_ui(
    result: AttentionResult,
    view: TokenView,
    layer: int,
    head: int,
    cell_ij: tuple[int, int],
    names: tuple[str, str],
    norms: Norms | None,
) -> None:
    """Steps 2 to 5, the engine's weight beside the recomputed one, and for norms the map's cell."""
    relative = _relative_kind(result)
    if relative:  # said before the steps: they leave out what such a model adds to q · k
        st.info(text.RELATIVE_NOTE.format(kind=md(relative)))
    computed = _compute(result, layer, head, *cell_ij)
    if computed is None:
        return
    cell, weights = computed
    _steps_ui(cell, result, layer, *names)
    _verdict_ui(cell, float(result.attentions[layer, head, cell.i, cell.j]), norms is not None, relative)
    if norms is not None:
        _norm_ui(result, view, weights, layer, cell, norms.rescaled, names)


def _tokens_note(result: AttentionResult, view: TokenView, i: int, j: int) -> str:
    """The arithmetic works on the model's own tokens: how the map above differs from them."""
    added = md(added_tokens(result))
    parts = (
        (view.merged, text.TOKENS_MERGED),
        (view.renormalised, text.TOKENS_HIDDEN.format(specials=added)),
    )
    how = " and ".join(part for on, part in parts if on)
    specials = text.WITH_SPECIALS.format(specials=added) if added else ""
    note = text.TOKENS_NOTE.format(how=how, specials=specials)
    if view.item_of_token(i) is None or view.item_of_token(j) is None:
        note += " " + text.NOT_SHOWN.format(specials=added)
    return note
