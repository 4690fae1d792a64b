"""Figure builders for the explore page's ablation view: the (L, H) grid of each head's effect on the
sentence embedding, and the focus word's cosine to every other word before and after a set of heads
is switched off. Arrays in, go.Figure out; no Streamlit, no model.

Letters: L layers, H heads, W words on the bar chart's axis. Layers and heads are 0-indexed in
arguments and labelled from 1 on the axes, which say so. Words are escaped (Plotly reads a few HTML
tags in any text it draws).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.explore import FONT, escape_label, unique_labels
from dashboard.charts.heatmap import PAGE, SEQUENTIAL, Sizing, grid_top_px, scored_grid, top_title

BEFORE_COLOR = "#969696"  # grey: the model as it is
AFTER_COLOR = "#2171b5"  # the heatmaps' dark blue: with heads switched off


def effect_grid(
    effects: np.ndarray,
    *,
    title: str,
    bar_title: str,
    layer_axis: str,
    head_axis: str,
    outlined: Iterable[tuple[int, int]] = (),
    share: float = 0.75,
    sizing: Sizing = PAGE,
    height: int | None = None,
    room: int | None = None,
) -> go.Figure:
    """(L, H) effects as a heatmap, rows = layers, columns = heads (both labelled from 1), each cell's
    number printed, the colour scale from 0 to the largest effect; `outlined` heads boxed in red.
    Default height: rows a little taller than a token heatmap's, capped at `room` (default: one
    screen, the whole of it; a view with a line or two above the grid gives what is left)."""
    z = np.asarray(effects, dtype=np.float64)  # (L, H)
    n_layers, n_heads = z.shape
    room = room or (880 if sizing.page_px > PAGE.page_px else 720)
    height = height or min(room, grid_top_px(sizing) + (sizing.row_px + 8) * n_layers)
    top = float(z.max()) if z.size and z.max() > 0 else 1.0
    scale = {
        "colorscale": SEQUENTIAL,  # effects are never negative: one hue, dark = large
        "zmid": None,
        "zmin": 0.0,
        "zmax": top,
        "hovertemplate": f"layer %{{y}}, head %{{x}}<br>{bar_title}: %{{z:.4f}}<extra></extra>",
    }
    labels = ([str(i + 1) for i in range(n_layers)], [str(i + 1) for i in range(n_heads)])
    return scored_grid(
        z, *labels, title=title, axes=(layer_axis, head_axis), bar_title=bar_title, scale=scale,
        height=height, outlined=outlined, decimals=3, share=share, sizing=sizing,
    )  # fmt: skip


def before_after_bars(
    words: Sequence[str],
    before: np.ndarray,
    after: np.ndarray,
    *,
    title: str,
    names: tuple[str, str],
    y_title: str,
    x_title: str,
    font: int = FONT["size"],
    height: int | None = None,
) -> go.Figure:
    """Grouped bars over `words` (W,): `before` in grey, `after` in blue, named by `names`; values
    printed on the bars while there are few words."""
    labels = unique_labels(words)
    w = len(labels)
    text_font = {"size": max(font - 3, 10)}
    bars = [
        go.Bar(
            x=labels,
            y=np.asarray(values, dtype=np.float32),
            name=escape_label(name),
            marker={"color": color},
            text=np.char.mod("%.2f", np.asarray(values, dtype=np.float32)) if w <= 16 else None,
            textposition="outside",
            textfont=text_font,
            cliponaxis=False,
            hovertemplate=f"%{{x}}<br>{escape_label(name)}: %{{y:.4f}}<extra></extra>",
        )
        for values, name, color in ((before, names[0], BEFORE_COLOR), (after, names[1], AFTER_COLOR))
    ]
    low = min(0.0, float(np.min(before, initial=0.0)), float(np.min(after, initial=0.0)))
    high = max(float(np.max(before, initial=0.0)), float(np.max(after, initial=0.0)), 1e-6)
    dark = {**FONT, "size": font}
    fig = go.Figure(bars)
    fig.update_layout(
        title=top_title(escape_label(title)),
        height=height or 380,
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        font=dark,
        barmode="group",
        bargap=0.2,
        legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom", "font": dark},
    )
    fig.layout.title.font.size = font + 2
    angle = 0 if w <= 12 else -60
    # fonts set in full: Streamlit's theme greys an axis' text unless the axis sets it
    fig.update_xaxes(tickfont=dark, title_font=dark, title_text=x_title, type="category", tickangle=angle)
    fig.update_yaxes(
        tickfont=dark, title_font=dark, title_text=escape_label(y_title), range=[low * 1.15, high * 1.18]
    )
    return fig
