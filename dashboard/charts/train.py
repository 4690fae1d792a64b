"""The train page's figures: the training curves (loss, previous-token and induction scores on one
step axis), every head's attention on the probe at one snapshot, and the loss with each head cut.

Pure: arrays in, go.Figure out. Letters: S snapshots, L layers, H heads, T probe positions.
Layers and heads are named from 1 ("L1 H2"), as on every page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.explore import escape_label
from dashboard.charts.heatmap import LABEL_COLOR, SEQUENTIAL, top_title
from dashboard.charts.lines import HEAD_COLOURS
from dashboard.charts.marks import head_symbol

# the fresh letters grey, the repeats black: no head's colour (HEAD_COLOURS) is either
FIRST_COLOUR, REPEAT_COLOUR = "#9a9a9a", "#111111"
LAYER_DASH = ("solid", "dot", "dash", "dashdot")  # a head's line in layer 1, 2...
MARKS_SHOWN = 8  # a head's marker symbol, this many times along its curve: more than colour tells it
MARKER_COLOUR = "#2171b5"


def head_name(layer: int, head: int) -> str:
    return f"L{layer + 1} H{head + 1}"


def label_font(font: int) -> dict:
    return {"size": font, "color": LABEL_COLOR}


def training_curves(
    steps: np.ndarray,
    loss_first: np.ndarray,
    loss_repeat: np.ndarray,
    previous: np.ndarray,
    induction: np.ndarray,
    *,
    total_steps: int,
    titles: dict[str, str],
    shown_step: int | None = None,
    font: int = 13,
    height: int = 560,
) -> go.Figure:
    """Three panels on one step axis: the loss on first occurrences and on repeats (S,), then each
    head's previous-token and induction scores (S, L, H). The axis spans the whole run, so a live
    chart grows to the right instead of rescaling; `shown_step` is marked by a vertical line."""
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07, row_heights=[0.4, 0.3, 0.3])
    for values, name, colour in (
        (loss_first, titles["first"], FIRST_COLOUR),
        (loss_repeat, titles["repeat"], REPEAT_COLOUR),
    ):
        fig.add_scatter(
            x=steps, y=values, name=name, mode="lines", line={"color": colour, "width": 3}, row=1, col=1
        )
    n_layers, n_heads = previous.shape[1:]
    for layer in range(n_layers):
        for head in range(n_heads):
            name = head_name(layer, head)
            line = {
                "color": HEAD_COLOURS[head % len(HEAD_COLOURS)],
                "dash": LAYER_DASH[layer % 4],
                "width": 2,
            }
            for row, scores in ((2, previous), (3, induction)):
                fig.add_scatter(
                    x=steps,
                    y=scores[:, layer, head],
                    name=name,
                    legendgroup=name,
                    showlegend=row == 2,
                    mode="lines+markers",
                    line=line,
                    marker={"symbol": head_symbol(head), "size": 7, "maxdisplayed": MARKS_SHOWN},
                    row=row,
                    col=1,
                )
    if shown_step is not None:
        fig.add_vline(x=shown_step, line={"color": MARKER_COLOUR, "width": 2, "dash": "dash"})
    _curve_axes(fig, total_steps, titles, font, height)
    return fig


def _curve_axes(fig: go.Figure, total_steps: int, titles: dict[str, str], font: int, height: int) -> None:
    """The shared step axis (the whole run), the three panels' titles and ranges."""
    fig.update_xaxes(range=[0, max(total_steps, 1)], tickfont=label_font(font), showgrid=True)
    fig.update_xaxes(title={"text": titles["step"], "font": label_font(font)}, row=3, col=1)
    for row, key in ((1, "loss"), (2, "previous"), (3, "induction")):
        fig.update_yaxes(
            title={"text": titles[key], "font": label_font(font)}, tickfont=label_font(font), row=row, col=1
        )
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=2, col=1)
    fig.update_yaxes(range=[0, 1.02], row=3, col=1)
    fig.update_layout(
        title=top_title(titles["title"]) | {"font": {"size": font + 3}},
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"font": label_font(font), "tracegroupgap": 2},
        uirevision="train-curves",  # a live redraw keeps the user's zoom
    )


def probe_labels(letters: Sequence[str]) -> list[str]:
    return [escape_label(letter) for letter in letters]


def add_head_maps(
    fig: go.Figure, maps: np.ndarray, hover: np.ndarray, where: str, font: int, gap: int = 0
) -> None:
    """One small heat map per head of `maps` (L, H, R, C) in fig's L x H grid of subplots, 0 to 1 on
    one colour scale whose bar the first map carries. hover (R, C, 2): each cell's row and column
    words, which `where` (hover lines reading %{customdata[0]} and [1]) names."""
    n_layers, n_heads, n_rows, n_cols = maps.shape
    for layer in range(n_layers):
        for head in range(n_heads):
            fig.add_heatmap(
                z=np.asarray(maps[layer, head], dtype=np.float32),
                x=list(range(n_cols)),
                y=list(range(n_rows)),
                zmin=0.0,
                zmax=1.0,
                colorscale=SEQUENTIAL,
                showscale=layer == 0 and head == 0,
                colorbar={
                    "title": {"text": "weight", "font": label_font(font)},
                    "tickfont": label_font(font),
                    "len": 0.8,
                },
                xgap=gap,
                ygap=gap,
                customdata=hover,
                hovertemplate=f"{head_name(layer, head)}<br>{where}<br>weight %{{z:.2f}}<extra></extra>",
                row=layer + 1,
                col=head + 1,
            )


def attention_grid(
    attentions: np.ndarray,
    letters: Sequence[str],
    *,
    title: str,
    axis_titles: tuple[str, str],
    font: int = 11,
    height: int = 520,
) -> go.Figure:
    """(L, H, T, T) attention on the probe as L x H small heat maps (rows = from, columns = to, the
    probe's letters on both axes), one colour scale from 0 to 1 for all."""
    n_layers, n_heads, n = attentions.shape[:3]
    fig = make_subplots(
        rows=n_layers,
        cols=n_heads,
        subplot_titles=[head_name(layer, head) for layer in range(n_layers) for head in range(n_heads)],
        horizontal_spacing=0.02 + 0.04 / n_heads,
        vertical_spacing=0.1 if n_layers > 1 else 0.0,
    )
    labels = probe_labels(letters)
    hover = np.array([[[labels[i], labels[j]] for j in range(n)] for i in range(n)])
    add_head_maps(fig, attentions, hover, "from %{customdata[0]} (%{y})<br>to %{customdata[1]} (%{x})", font)
    every = max(1, round(n / max(8, 14 * 4 / n_heads)))  # a label every few letters when maps are small
    ticks = {
        "tickvals": list(range(0, n, every)),
        "ticktext": labels[::every],
        "tickfont": label_font(font - 1),
    }
    fig.update_xaxes(**ticks, showgrid=False, showticklabels=False, tickangle=0)
    fig.update_xaxes(showticklabels=True, row=n_layers)  # letters under the last row of maps only
    fig.update_yaxes(**ticks, showgrid=False, showticklabels=False, autorange="reversed")
    fig.update_yaxes(showticklabels=True, col=1)  # ... and left of the first column only
    _grid_titles(fig, n_layers, n_heads, axis_titles, font)
    fig.update_annotations(font=label_font(font + 1))
    fig.update_layout(
        title=top_title(title) | {"font": {"size": font + 5}},
        height=height,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig


def _grid_titles(
    fig: go.Figure, n_layers: int, n_heads: int, axis_titles: tuple[str, str], font: int
) -> None:
    """ "from" left of each row of maps, "to" under each map of the last row."""
    for layer in range(n_layers):
        fig.update_yaxes(
            title={"text": axis_titles[0], "font": label_font(font), "standoff": 2}, row=layer + 1, col=1
        )
    for head in range(n_heads):
        fig.update_xaxes(
            title={"text": axis_titles[1], "font": label_font(font), "standoff": 2},
            row=n_layers,
            col=head + 1,
        )


def ablation_bars(
    cut: np.ndarray,
    baseline: float,
    *,
    title: str,
    x_title: str,
    y_title: str,
    font: int = 13,
    height: int = 320,
) -> go.Figure:
    """(L, H) the repeats' loss with each head cut, as bars named L1 H1..., with every head in place
    as a dashed line."""
    names = [head_name(layer, head) for layer in range(cut.shape[0]) for head in range(cut.shape[1])]
    values = np.asarray(cut, dtype=float).ravel()
    fig = go.Figure(
        go.Bar(
            x=names,
            y=values,
            marker_color=[HEAD_COLOURS[i % cut.shape[1]] for i in range(len(names))],
            text=[f"{v:.2f}" for v in values],
            textposition="outside",
            textfont=label_font(font),
            hovertemplate="%{x}: %{y:.3f} nats<extra></extra>",
        )
    )
    fig.add_hline(y=baseline, line={"dash": "dash", "color": LABEL_COLOR, "width": 2})
    top = float(max(values.max(initial=0.0), baseline))
    fig.update_layout(
        title=top_title(title) | {"font": {"size": font + 2}},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": x_title, "font": label_font(font)}, "tickfont": label_font(font)},
        yaxis={
            "title": {"text": y_title, "font": label_font(font)},
            "tickfont": label_font(font),
            "range": [0, top * 1.18 + 1e-6],
        },
        showlegend=False,
    )
    return fig
