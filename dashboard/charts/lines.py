"""The explore page's lines view (bertviz-style): one layer's attention as lines from each token
as a query (left) to each token as a key (right), one colour and one dash pattern per head (the
dash tells heads apart whose colours merge under colour-vision deficiency: dashboard/charts/marks.py).
Pointing at a word, or focusing it with the keyboard, leaves only its lines (dashboard/chart_hover.py,
which finds these figures by ISOLATE in layout.meta and each line's word by where it is drawn).

Plotly has one opacity per trace, so each head's lines go out in a few opacity bins, each bin one
trace of segments separated by NaN gaps; for long inputs only each token's strongest lines are
drawn. Letters: H heads, W shown tokens. Reference: bertviz's head view (Vig 2019).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from dashboard.charts.explore import FONT, escape_label
from dashboard.charts.heatmap import top_title
from dashboard.charts.marks import head_dash

# Twelve distinguishable, projector-safe colours for heads (more heads reuse them in order).
HEAD_COLOURS = [*list(qualitative.Dark24[:10]), "#8C564B", "#17BECF", *list(qualitative.Light24)]
_OPACITY_EDGES = np.array([0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 1.01])
_OPACITY = [0.08, 0.14, 0.22, 0.35, 0.5, 0.7, 0.95]  # about each bin's weight, as bertviz does
# The marker dashboard/chart_hover.py looks for: layout.meta["isolate"]; the word labels' traces carry
# meta {"words": "query" | "key"} and each label's word index as customdata, the lines' {"head": h}.
ISOLATE = "lines"


def select_lines(
    weights: np.ndarray,
    *,
    token: int | None = None,
    direction: str = "from",
    min_weight: float = 0.0,
    top_k: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which lines of one head's (W, W) map to draw: (rows, cols, weights) of the kept cells.

    token + direction "from": only that token's row; "to": only its column.
    top_k: per query row, only its k strongest lines (long inputs stay readable).
    """
    w = np.asarray(weights, dtype=np.float32)
    keep = w >= min_weight
    if top_k is not None and top_k < w.shape[1]:
        # kth largest per row: ties may keep a line or two more, which is harmless.
        kth = -np.partition(-w, top_k - 1, axis=1)[:, top_k - 1 : top_k]
        keep &= w >= kth
    if token is not None:
        mask = np.zeros_like(keep)
        if direction == "to":
            mask[:, token] = True
        else:
            mask[token, :] = True
        keep &= mask
    rows, cols = np.nonzero(keep)
    return rows, cols, w[rows, cols]


def _head_traces(
    head: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, y: np.ndarray, visible: bool
) -> list[go.Scatter]:
    """One head's kept lines, one trace per opacity bin; the head gets one legend entry even when
    it draws no line, on its most opaque bin (a faint sample would hide the head's colour and dash)."""
    colour = HEAD_COLOURS[head % len(HEAD_COLOURS)]
    bins = np.digitize(vals, _OPACITY_EDGES) - 1
    traces = []
    for b, opacity in enumerate(_OPACITY):
        sel = bins == b
        if not sel.any() and not (not traces and b == len(_OPACITY) - 1):
            continue
        n = int(sel.sum())
        # segments (0, -row) -> (1, -col), separated by NaN gaps
        xs = np.tile(np.array([0.0, 1.0, np.nan], dtype=np.float32), n)
        ys = np.empty(3 * n, dtype=np.float32)
        ys[0::3], ys[1::3], ys[2::3] = y[rows[sel]], y[cols[sel]], np.nan
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": colour, "width": 2, "dash": head_dash(head)},
                opacity=opacity,
                name=f"head {head + 1}",
                legendgroup=f"head{head}",
                showlegend=False,
                visible=True if visible else "legendonly",
                hoverinfo="skip",
                meta={"head": head},
            )
        )
    traces[-1].showlegend = True
    return traces


def _token_traces(
    sides: tuple[Sequence[str], Sequence[str]], token: int | None, direction: str
) -> list[go.Scatter]:
    """The queries' tokens on the left, the keys' on the right; the picked token in red, bold, with an
    arrowhead towards the lines (not told by its colour alone)."""
    highlight = token if token is not None else -1
    traces = []
    for labels, x, side, position in zip(
        sides, (0.0, 1.0), ("query", "key"), ("middle left", "middle right"), strict=True
    ):
        w = len(labels)
        names = [escape_label(label) for label in labels]
        picked = highlight if (side == "query") == (direction == "from") else -1
        colours = ["#d62728" if i == picked else "#222" for i in range(w)]
        if 0 <= picked < w:
            names[picked] = f"<b>{names[picked]} ▸</b>" if side == "query" else f"<b>◂ {names[picked]}</b>"
        traces.append(
            go.Scatter(
                x=np.full(w, x, dtype=np.float32),
                y=-np.arange(w, dtype=np.float32),
                mode="markers+text",
                text=names,
                textposition=position,
                textfont={"size": 15 if w <= 40 else 12, "color": colours},
                marker={"size": 6, "color": "#555"},
                hovertemplate=f"{side}: %{{text}}<extra></extra>",
                showlegend=False,
                meta={"words": side},
                customdata=np.arange(w),
            )
        )
    return traces


def lines_figure(
    layer_attn: np.ndarray,
    labels: Sequence[str],
    *,
    heads: Sequence[int] | None = None,
    shown_heads: Sequence[int] | None = None,
    token: int | None = None,
    direction: str = "from",
    min_weight: float = 0.02,
    top_k: int | None = None,
    title: str = "",
    key_labels: Sequence[str] | None = None,
    side_titles: tuple[str, str] = ("from (query)", "to (key)"),
) -> go.Figure:
    """The bertviz-style view of one layer: tokens twice, queries left, keys right, one line per
    weight with opacity by weight, one colour per head (legend entries toggle heads).

    layer_attn: (H, W, W), or (H, W, K) with `key_labels` when the keys are another sentence's
    (cross-attention). heads: the heads in the figure (default all); shown_heads: those drawn
    at first (default all), the others start hidden ("legendonly") until clicked in the legend.
    """
    n_heads = layer_attn.shape[0]
    keys = labels if key_labels is None else key_labels
    w = max(len(labels), len(keys))
    heads = list(range(n_heads)) if heads is None else list(heads)
    shown = set(heads if shown_heads is None else shown_heads)
    y = -np.arange(w, dtype=np.float32)  # token i at height -i: the sentence reads top to bottom
    fig = go.Figure()
    for h in heads:
        kept = select_lines(
            layer_attn[h], token=token, direction=direction, min_weight=min_weight, top_k=top_k
        )
        fig.add_traces(_head_traces(h, *kept, y, h in shown))
    fig.add_traces(_token_traces((labels, keys), token, direction))
    row_px = 26 if w <= 40 else 18
    fig.update_layout(
        title=top_title(title) if title else None,
        height=int(max(320, 90 + row_px * w, 80 + 22 * len(heads))),  # room for the legend too
        margin={"l": 10, "r": 10, "t": 70 if title else 30, "b": 10},
        font=FONT,
        legend={"yanchor": "top", "y": 1.0, "x": 1.0, "xanchor": "right", "title": {"text": "heads"}},
        plot_bgcolor="white",
        hovermode="closest",
        meta={"isolate": ISOLATE},
    )
    fig.update_xaxes(visible=False, range=[-0.6, 1.6], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-w + 0.4, 0.8], fixedrange=True)
    left, right = side_titles
    fig.add_annotation(x=0.0, y=0.8, text=left, showarrow=False, xanchor="right", yanchor="bottom")
    fig.add_annotation(x=1.0, y=0.8, text=right, showarrow=False, xanchor="left", yanchor="bottom")
    return fig
