"""A Llama block's stops that a GPT-2 block does not have, drawn from compute.llama_trace: RMSNorm
first (after step 1), RoPE and grouped-query attention (after step 2) and the SwiGLU MLP (after step
7); the causal mask is GPT-2's stop (decoder_views.mask_view). Each checks whether its view is on
screen. Every matrix is the engine's own array, and every figure in a caption is computed from them.

Chart keys: "rms_x", "rms1"; "rope_q", "rope_q_turned", "rope_gap"; "gqa_head_<i>"; "rms2", "ffn",
"layer_output", "silu".
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.cost.generation import cache_megabytes, megabytes
from core.lesson.layers import linear, silu
from core.lesson.rope import pair_score
from core.lesson.trace import LayerTrace
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.charts.learn import gap_figure, short_labels
from dashboard.content import learn_llama as text
from dashboard.content.learn import COL_TITLE, ROW_TITLE
from dashboard.presenter import presenting
from dashboard.views.learn import compute
from dashboard.views.learn.sources import SHOWN_DIMS
from dashboard.views.learn.stop_parts import NARROW, first_dims, shape_text, stop_intro, stop_matrix
from dashboard.views.learn.widgets import shown
from dashboard.widgets import chart, chart_filename, md

SHIFTS = (0, 7, 50, 500)  # the RoPE table moves the pair this far along the text
MAX_GAP = 64  # the RoPE curve's gaps: 0 .. MAX_GAP


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt((np.asarray(x, dtype=np.float64) ** 2).mean(axis=-1))


# ---- RMSNorm first -----------------------------------------------------------------------------------


def rmsnorm_view(tr: LayerTrace) -> None:
    if not shown("rmsnorm"):
        return
    x, h, gamma = tr["x"], tr["rms1"], tr["norm1"]
    shapes = [
        shape_text("X", x.shape),
        shape_text("γ₁", gamma.shape),
        shape_text("H", h.shape),
        f"ε = {tr.ln_eps:g}",
    ]
    body = text.RMS_TEXT.format(gain=_gain_said(x, h, gamma))
    stop_intro("rmsnorm", text.RMS_TITLE, text.RMS_FORMULA, body, shapes)
    rows = short_labels(tr.query_tokens)
    for col, key, title, values in zip(
        st.columns(2), ("rms_x", "rms1"), text.RMS_CHARTS, (x, h), strict=True
    ):
        shown_values, dims, dim_title = first_dims(values, SHOWN_DIMS)
        with col:
            stop_matrix("rmsnorm", key, title, shown_values, rows, dims, share=0.5, col_title=dim_title)
    x_rms, h_rms = _rms(x), _rms(h)
    unit = _rms(x / np.sqrt((np.asarray(x, np.float64) ** 2).mean(axis=-1, keepdims=True) + tr.ln_eps))
    figures = {"x_lo": x_rms.min(), "x_hi": x_rms.max(), "unit_lo": unit.min(), "unit_hi": unit.max()}
    figures |= {"g_lo": gamma.min(), "g_hi": gamma.max(), "h_lo": h_rms.min(), "h_hi": h_rms.max()}
    st.caption(text.RMS_CAPTION.format(eps=tr.ln_eps, **figures))


def _gain_said(x: np.ndarray, h: np.ndarray, gamma: np.ndarray) -> str:
    """What γ does to a row's direction, from the layer's own γ and the angle between each row of X
    and its row of H (dividing by the RMS alone keeps the direction: the angle is γ's doing)."""
    gamma = np.asarray(gamma, dtype=np.float64)
    if np.ptp(gamma) == 0:
        kept = text.RMS_KEPT if gamma[0] > 0 else text.RMS_REVERSED
        return text.RMS_GAIN_SAME.format(g=gamma[0], kept=kept)
    turn = _angles(x, h)
    return text.RMS_GAIN.format(g_lo=gamma.min(), g_hi=gamma.max(), turn_lo=turn.min(), turn_hi=turn.max())


def _angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The angle in degrees between each row of a and the same row of b."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    cos = (a * b).sum(axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


# ---- RoPE --------------------------------------------------------------------------------------------


def rope_view(tr: LayerTrace, head: int, base: float) -> None:
    if not shown("rope"):
        return
    q, q_turned = tr["query"][head], tr["query_rot"][head]
    d_k = tr.d_k
    shapes = [shape_text("Q, K", q.shape), f"{d_k // 2} planes", f"base b = {base:g}", "V is not turned"]
    formula = text.ROPE_FORMULA.replace("BASE", f"{base:g}")
    stop_intro("rope", text.ROPE_TITLE, formula, text.ROPE_TEXT.format(planes=d_k // 2), shapes)
    if len(tr.query_tokens) > 2:  # a last token, the first, and one between them: the point first
        _gap_demo(tr, head, base)
        if presenting():  # the projector's screen holds the point; the vectors stay on the page
            st.caption(text.ROPE_VECTORS_ON_PAGE)
            return
    rows = short_labels(tr.query_tokens)
    titles = [title.format(head=head + 1) for title in text.ROPE_CHARTS]
    for col, key, title, values in zip(
        st.columns(2), ("rope_q", "rope_q_turned"), titles, (q, q_turned), strict=True
    ):
        shown_values, dims, dim_title = first_dims(values, SHOWN_DIMS)
        with col:
            stop_matrix("rope", key, title, shown_values, rows, dims, share=0.5, col_title=dim_title)


def _gap_demo(tr: LayerTrace, head: int, base: float) -> None:
    """The last token's query and the key it weighs most of those between the first token and itself
    (a pair with a gap; the sentence says which tokens, if any, it weighs more), turned to other
    pairs of positions with the same gap: the same score; against the gap: a curve."""
    last = len(tr.query_tokens) - 1
    key = 1 + int(np.argmax(tr["probs"][head][last, 1:last]))  # the first: often a sink (explore page)
    gap = last - key
    q, k = tr["query"][head][last], tr["key"][head][key]  # before RoPE: pair_score turns them
    st.markdown(f"**{text.ROPE_DISTANCE_TITLE}**")
    words = {"query": md(tr.query_tokens[last]), "key": md(tr.key_tokens[key]), "gap": gap}
    words["rank"] = key_rank(tr["probs"][head][last], key)
    st.markdown(text.ROPE_DISTANCE_TEXT.format(**words))
    left, right = st.columns([1, 1.3], gap="large")
    scores = [pair_score(q, k, last + shift, key + shift, base) for shift in SHIFTS]
    with left:
        columns = ([last + s for s in SHIFTS], [key + s for s in SHIFTS], [gap] * len(SHIFTS))
        columns += ([f"{v:.6f}" for v in scores],)
        table = dict(zip(text.ROPE_TABLE_COLUMNS, columns, strict=True))
        st.dataframe(table, hide_index=True)
        spread = max(scores) - min(scores)
        st.caption(
            text.ROPE_SAME.format(gap=gap, spread=spread, computed=float(tr["scaled"][head][last, key]))
        )
    with right:
        gaps = np.arange(MAX_GAP + 1)
        curve = np.array([pair_score(q, k, MAX_GAP, MAX_GAP - g, base) for g in gaps])
        st.markdown(f"**{text.ROPE_CURVE_TITLE}**")
        marked = min(gap, MAX_GAP)
        chart(
            gap_figure(gaps, curve, marked, text.ROPE_CURVE_AXES),
            "rope_gap",
            filename=chart_filename("learn", "rope", "gap"),
        )


def key_rank(row: np.ndarray, key: int) -> str:
    """Where `key` stands in a query's row of weights (the query is the row's last token, which the
    demo's key is not, nor the first): the tokens weighed more than it, by their own weights."""
    last, weight = len(row) - 1, float(row[key])
    above = [text.ROPE_ABOVE_FIRST.format(weight=row[0])] if row[0] > weight else []
    above += [text.ROPE_ABOVE_SELF.format(weight=row[last])] if row[last] > weight else []
    if not above:
        return text.ROPE_RANK_MOST.format(weight=weight)
    return text.ROPE_RANK_AFTER.format(weight=weight, above=" and ".join(above))


# ---- grouped-query attention ---------------------------------------------------------------------------

# On a 1920x1080 projector the group's patterns share the screen below the stop's text
GQA_PRESENTER_HEIGHT = 400


def gqa_view(tr: LayerTrace, head: int, engine) -> None:
    """The shared key/value heads, the query heads of one group side by side, and the cache the
    sharing saves at the model's full context (`engine`: the loaded decoder it prices)."""
    if not shown("gqa"):
        return
    heads, kv_heads, d_k = tr.n_heads, tr["key_kv"].shape[0], tr.d_k
    group, kv = heads // kv_heads, head // (heads // kv_heads)
    sizes = {"n_heads": heads, "kv_heads": kv_heads, "group": group}
    shapes = [shape_text("Q", (heads, len(tr.query_tokens), d_k)), shape_text("K, V", tr["key_kv"].shape)]
    stop_intro("gqa", text.GQA_TITLE.format(**sizes), text.GQA_FORMULA, text.GQA_TEXT.format(**sizes), shapes)
    spans = [f"{g * group + 1}–{(g + 1) * group}" if group > 1 else str(g + 1) for g in range(kv_heads)]
    groups = "; ".join(f"query heads {span} → key/value head {g + 1}" for g, span in enumerate(spans))
    context, n_layers = engine.max_tokens, engine.n_layers
    sizes_mb = {
        name: megabytes(cache_megabytes(engine, context, kv_heads=n))
        for name, n in (("gqa", kv_heads), ("full", heads))
    }
    cache = text.GQA_CACHE.format(
        tokens=context, n_layers=n_layers, ratio=heads / kv_heads, **sizes, **sizes_mb
    )
    st.markdown(f"{text.GQA_GROUPS.format(groups=groups)} {cache}")
    members = range(kv * group, (kv + 1) * group)
    st.markdown(f"**{text.GQA_PATTERNS.format(group=group, kv=kv + 1, head=head + 1)}**")
    rows, cols = short_labels(tr.query_tokens), short_labels(tr.key_tokens)
    sizing = PRESENTER if presenting() else PAGE
    for i, (col, member) in enumerate(zip(st.columns(group), members, strict=True)):
        with col:
            fig = compute.heatmap(
                tr["probs"][member],
                rows,
                cols,
                sizing=sizing,
                share=1 / group,
                title=f"head {member + 1}",
                probabilities=True,
                show_colorbar=False,
                row_title=ROW_TITLE if i == 0 else "",
                col_title=COL_TITLE,
                height=GQA_PRESENTER_HEIGHT if presenting() else None,
            )
            chart(fig, f"gqa_head_{member}", filename=chart_filename("learn", "gqa", f"head{member + 1}"))
    patterns = tr["probs"][list(members)]
    differ = float(np.abs(patterns[:, None] - patterns[None, :]).max())
    st.caption(text.GQA_DIFFER.format(group=group, differ=differ))


# ---- the SwiGLU MLP ------------------------------------------------------------------------------------


def swiglu_view(tr: LayerTrace, layer: int, n_layers: int) -> None:
    if not shown("swiglu"):
        return
    h, ffn, out = tr["rms2"], tr["ffn"], tr["layer_output"]
    d_model, d_ff = h.shape[-1], tr["w_gate"].shape[-1]
    gate = silu(linear(h, tr["w_gate"]))  # the gate as the engine computes it (core.lesson.layers)
    after = text.SWIGLU_AFTER_LAST if layer + 1 == n_layers else text.SWIGLU_AFTER.format(next=layer + 2)
    closed = float((np.abs(gate) < 0.1).mean())
    body = text.SWIGLU_TEXT.format(d_ff=d_ff, d_model=d_model, closed=closed, after=after)
    shapes = [
        shape_text("H'", h.shape),
        shape_text("W_gate, W_up", (d_model, d_ff)),
        shape_text("W_down", (d_ff, d_model)),
        shape_text("Y", out.shape),
    ]
    stop_intro("swiglu", text.SWIGLU_TITLE, text.SWIGLU_FORMULA, body, shapes)
    rows = short_labels(tr.query_tokens)
    for col, key, title, values in zip(
        st.columns(3), ("rms2", "ffn", "layer_output"), text.SWIGLU_CHARTS, (h, ffn, out), strict=True
    ):
        shown_values, dims, dim_title = first_dims(values, NARROW)
        with col:
            stop_matrix("swiglu", key, title, shown_values, rows, dims, share=1 / 3, col_title=dim_title)
    with st.expander(text.SILU_EXPANDER, expanded=not presenting()):
        chart(compute.silu_chart(), "silu", filename=chart_filename("learn", "swiglu", "silu"))
