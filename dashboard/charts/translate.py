"""The train page's figures for the translator: the training curves (the loss; the held-out exact
match and every cross-attention head's alignment accuracy, on one step axis) and every head's
cross-attention on the probe pair at one snapshot, the gold alignment outlined in each map.

Pure: arrays in, go.Figure out. Letters: S snapshots, L decoder layers, H heads, T probe target
positions (French words and </s>), R probe source positions (English words and </s>). Layers and
heads are named from 1 ("L2 H3"), as on every page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.heatmap import escape_label, top_title
from dashboard.charts.lines import HEAD_COLOURS
from dashboard.charts.marks import gold_outlines, head_symbol, legend_below
from dashboard.charts.train import (
    LAYER_DASH,
    MARKER_COLOUR,
    MARKS_SHOWN,
    add_head_maps,
    head_name,
    label_font,
)

LOSS_COLOUR, EXACT_COLOUR, MARK_COLOUR = "#111111", "#111111", "#6b6b6b"


def translation_curves(
    steps: np.ndarray,
    loss: np.ndarray,
    exact_match: np.ndarray,
    alignment: np.ndarray,
    *,
    total_steps: int,
    titles: dict[str, str],
    best: tuple[int, int] | None = None,
    level: float | None = None,
    shown_step: int | None = None,
    font: int = 13,
    height: int = 560,
) -> go.Figure:
    """Two panels on one step axis: the loss (S,), then the exact match (S,) and each head's alignment
    (S, L, H), the `best` head's line drawn thick, the others thin; `level` (a dotted line) is the
    mark both are measured against. The axis spans the whole run, so a live chart grows to the right
    instead of rescaling; `shown_step` is marked by a vertical line."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.35, 0.65])
    fig.add_scatter(
        x=steps,
        y=loss,
        name=titles["loss"],
        mode="lines",
        line={"color": LOSS_COLOUR, "width": 3},
        row=1,
        col=1,
    )
    _head_lines(fig, steps, alignment, best, titles["best"])
    fig.add_scatter(
        x=steps,
        y=exact_match,
        name=titles["exact"],
        mode="lines+markers",
        marker={"size": 6, "symbol": "square"},
        line={"color": EXACT_COLOUR, "width": 3},
        row=2,
        col=1,
    )
    if level is not None:
        fig.add_hline(
            y=level,
            line={"color": MARK_COLOUR, "width": 1.5, "dash": "dot"},
            annotation={"text": titles["level"], "font": {"size": font - 1, "color": MARK_COLOUR}},
            annotation_position="top left",
            row=2,
            col=1,
        )
    if shown_step is not None:
        fig.add_vline(x=shown_step, line={"color": MARKER_COLOUR, "width": 2, "dash": "dash"})
    _curve_axes(fig, total_steps, titles, font, height)
    return fig


def _head_lines(fig: go.Figure, steps: np.ndarray, alignment: np.ndarray, best, best_name: str) -> None:
    """Each head's alignment (S, L, H) in the second panel: colour by head, dash by layer; the best
    head's line thick, the others thin and paler."""
    n_layers, n_heads = alignment.shape[1:]
    for layer in range(n_layers):
        for head in range(n_heads):
            star = (layer, head) == best
            fig.add_scatter(
                x=steps,
                y=alignment[:, layer, head],
                name=head_name(layer, head) + (f" ({best_name})" if star else ""),
                mode="lines+markers",
                marker={"symbol": head_symbol(head), "size": 9 if star else 6, "maxdisplayed": MARKS_SHOWN},
                opacity=1.0 if star or best is None else 0.55,
                line={
                    "color": HEAD_COLOURS[head % len(HEAD_COLOURS)],
                    "dash": LAYER_DASH[layer % len(LAYER_DASH)],
                    "width": 5 if star else 1.5,
                },
                row=2,
                col=1,
            )


def _curve_axes(fig: go.Figure, total_steps: int, titles: dict[str, str], font: int, height: int) -> None:
    fig.update_xaxes(range=[0, max(total_steps, 1)], tickfont=label_font(font), showgrid=True)
    fig.update_xaxes(title={"text": titles["step"], "font": label_font(font)}, row=2, col=1)
    for row, key in ((1, "loss_axis"), (2, "score_axis")):
        fig.update_yaxes(
            title={"text": titles[key], "font": label_font(font)}, tickfont=label_font(font), row=row, col=1
        )
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[0, 1.03], tickformat=".0%", row=2, col=1)
    fig.update_layout(
        title=top_title(titles["title"]) | {"font": {"size": font + 3}},
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"font": label_font(font), "tracegroupgap": 2},
        uirevision="train-translate-curves",  # a live redraw keeps the user's zoom
    )


def _outlines(links: Sequence[tuple[int, int]], n_layers: int, n_heads: int) -> list[dict]:
    """The gold alignment's cells in dashed boxes in every map (subplot k's axes are x<k>, y<k>), named
    once in the legend."""
    shapes = []
    for k in range(1, n_layers * n_heads + 1):
        axis = "" if k == 1 else str(k)
        boxes = gold_outlines(links, width=2, axes=(f"x{axis}", f"y{axis}"))
        shapes += [box | {"showlegend": box["showlegend"] and k == 1} for box in boxes]
    return shapes


def cross_attention_grid(
    probe: np.ndarray,
    target_words: Sequence[str],
    source_words: Sequence[str],
    links: Sequence[tuple[int, int]],
    *,
    title: str,
    axis_titles: tuple[str, str],
    scores: np.ndarray | None = None,
    best: tuple[int, int] | None = None,
    font: int = 11,
    height: int = 520,
) -> go.Figure:
    """(L, H, T, R) cross-attention on the probe pair as L x H small heat maps (rows = the French word
    being written, columns = the English word read), one colour scale from 0 to 1 for all, the gold
    alignment `links` (target, source) in dashed red boxes, named in a legend under the maps. Each
    map's title gives the head's alignment accuracy (`scores` (L, H)), the best head's in bold."""
    n_layers, n_heads, n_rows, n_cols = probe.shape
    rows = [escape_label(w) for w in target_words][:n_rows]
    cols = [escape_label(w) for w in source_words][:n_cols]

    def name(layer: int, head: int) -> str:
        label = head_name(layer, head) + ("" if scores is None else f" · {scores[layer, head]:.0%}")
        return f"<b>{label} ★</b>" if (layer, head) == best else label

    fig = make_subplots(
        rows=n_layers,
        cols=n_heads,
        subplot_titles=[name(layer, head) for layer in range(n_layers) for head in range(n_heads)],
        horizontal_spacing=0.015 + 0.03 / n_heads,
        vertical_spacing=0.2 / n_layers if n_layers > 1 else 0.0,
    )
    hover = np.array([[[rows[t], cols[s]] for s in range(n_cols)] for t in range(n_rows)])
    add_head_maps(fig, probe, hover, "writing %{customdata[0]}<br>reading %{customdata[1]}", font, gap=1)
    _grid_axes(fig, rows, cols, n_layers, axis_titles, font)
    fig.update_annotations(font=label_font(font + 1))
    layout = {
        "title": top_title(title) | {"font": {"size": font + 5}},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "shapes": _outlines(links, n_layers, n_heads),
        "plot_bgcolor": "white",
    }
    if links:  # the dashed boxes named under the maps
        legend_below(layout)
    return fig.update_layout(layout)


def _grid_axes(
    fig: go.Figure, rows: list[str], cols: list[str], n_layers: int, axis_titles: tuple[str, str], font: int
) -> None:
    """French words left of the first column of maps, English words under the last row (slanted)."""
    x_ticks = {"tickvals": list(range(len(cols))), "ticktext": cols, "tickfont": label_font(font - 1)}
    y_ticks = {"tickvals": list(range(len(rows))), "ticktext": rows, "tickfont": label_font(font - 1)}
    fig.update_xaxes(**x_ticks, showgrid=False, showticklabels=False, tickangle=-60, zeroline=False)
    fig.update_xaxes(
        showticklabels=True,
        title={"text": axis_titles[1], "font": label_font(font), "standoff": 4},
        row=n_layers,
    )
    fig.update_yaxes(**y_ticks, showgrid=False, showticklabels=False, autorange="reversed", zeroline=False)
    fig.update_yaxes(
        showticklabels=True, title={"text": axis_titles[0], "font": label_font(font), "standoff": 2}, col=1
    )
