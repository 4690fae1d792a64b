"""Figure builders for the explore page's head and focus views: arrays in, go.Figure out (no
Streamlit, no attention math). The lines view's figure is in dashboard/charts/lines.py, the model
view's thumbnails in dashboard/charts/thumbnails.py.

Letters: L layers, H heads, W shown tokens (words after merging, without hidden specials).
Attention is [..., query, key]: rows = the token that attends ("from"), columns = the token
attended to ("to"). Layers and heads are 0-indexed in arguments and shown 1-indexed on screen.

Payload is a design constraint (the browser receives every number in a figure): numbers go out as
float32 NumPy arrays, which plotly.py sends as base64 typed arrays, not text.
Token labels are escaped: Plotly reads <b>, <br>, <a> and entities in any text it draws.
References: bertviz's head and model views (Vig 2019); Clark et al. 2019 for the head patterns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import (
    LABEL_COLOR,
    SEQUENTIAL,
    cell_outline,
    escape_label,
    number_repeats,
    top_title,
)
from dashboard.charts.marks import picked_badge

FONT = {"size": 14, "color": LABEL_COLOR}
# Token labels and axis titles dark, as on the learn page. Streamlit's chart theme greys an axis' text
# unless the axis sets it, and a tickfont given only a colour drops to 12 px: both are set in full.
AXIS_TEXT = {"tickfont": FONT, "title_font": FONT}


def axis(title: str, **settings) -> dict:
    """An axis' layout with its title and tick labels set in full (see AXIS_TEXT)."""
    return {"tickfont": FONT, "title": {"text": title, "font": FONT}, **settings}


def _key_axis(w: int) -> dict:
    """The column axis of a map over W tokens: the keys, on top, labels slanted beyond ten."""
    return axis("to (key)", side="top", type="category", tickangle=0 if w <= 10 else -60, showgrid=False)


def _numbered_axis(title: str, n: int, **settings) -> dict:
    """An axis of n layers or heads, 0-indexed in the data and labelled from 1."""
    return axis(
        title, tickvals=list(range(n)), ticktext=[str(i + 1) for i in range(n)], showgrid=False, **settings
    )


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Escaped labels, repeats numbered ("the", "the (2)"): Plotly merges equal category labels."""
    return number_repeats(escape_label(label) for label in labels)


def head_heatmap(
    matrix: np.ndarray,
    labels: Sequence[str],
    *,
    title: str = "",
    highlight: tuple[int, int] | None = None,
    height: int | None = None,
) -> go.Figure:
    """One head's (W, W) attention; hover shows the exact weight and both tokens.

    highlight=(row, col) outlines one cell, e.g. the focus token's weight on the target token, and
    pins a badge on its corner (a cue that is not a colour).
    """
    z = np.asarray(matrix, dtype=np.float32)  # (W, W), sent as float32 bytes
    names = unique_labels(labels)
    w = len(names)
    show_numbers = w <= 20
    # One constructor call, as charts.heatmap.matrix_heatmap does: each update_layout / update_xaxes
    # on a figure re-validates and dispatches every key (about 25 ms here, on every head change).
    return go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=names,
            zmin=0.0,
            zmax=1.0,
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            # numbers only where they say something: tiny weights would print a wall of "0.00"
            text=np.where(z >= 0.05, np.char.mod("%.2f", z), "") if show_numbers else None,
            texttemplate="%{text}" if show_numbers else None,
            textfont={"size": 11 if w > 12 else 13},
            hovertemplate="from (query): <b>%{y}</b><br>to (key): <b>%{x}</b><br>"
            "weight: %{z:.4f}<extra></extra>",
            xgap=1 if w <= 64 else 0,
            ygap=1 if w <= 64 else 0,
        ),
        layout={
            "title": top_title(title) if title else None,
            "height": height or int(min(900, max(380, 140 + 26 * w))),
            # the title sits above the top axis (its title and tick labels), which needs room of its own
            "margin": {"l": 10, "r": 10, "t": (130 if w > 10 else 100) if title else 10, "b": 10},
            "font": FONT,
            "shapes": [] if highlight is None else [cell_outline(*highlight, width=3)],
            "annotations": [] if highlight is None else [picked_badge(*highlight)],
            "xaxis": _key_axis(w),
            "yaxis": axis("from (query)", autorange="reversed", type="category", showgrid=False),
        },
    )


def focus_heatmap(rows: np.ndarray, labels: Sequence[str], focus_label: str) -> go.Figure:
    """Where one token looks, in every head: (L, H, W) -> an (L·H) × W heatmap, layers separated.

    The colour scale ends at the largest weight shown (not at 1): over hundreds of tokens the
    weights are small, and a 0–1 scale would draw an empty page. The colour bar says so.
    """
    n_layers, n_heads, w = rows.shape
    z = np.asarray(rows, dtype=np.float32).reshape(n_layers * n_heads, w)
    names = unique_labels(labels)
    row_names = [f"L{la + 1} H{he + 1}" for la in range(n_layers) for he in range(n_heads)]
    row_px = 12 if n_layers * n_heads <= 80 else 8
    return go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=row_names,
            zmin=0.0,
            zmax=float(max(0.05, z.max())) if z.size else 1.0,
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            hovertemplate=f"{escape_label(focus_label)} → <b>%{{x}}</b><br>"
            "%{y} (layer, head)<br>weight: %{z:.4f}<extra></extra>",
            xgap=1 if w <= 64 else 0,
        ),
        layout={
            "height": int(max(300, 110 + row_px * n_layers * n_heads)),
            "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
            "font": FONT,
            # a white line between layers
            "shapes": [_full_width_line(layer * n_heads - 0.5) for layer in range(1, n_layers)],
            "xaxis": _key_axis(w),
            "yaxis": axis(
                "layer, head",
                autorange="reversed",
                type="category",
                tickvals=[f"L{la + 1} H1" for la in range(n_layers)],
                ticktext=[f"layer {la + 1}" for la in range(n_layers)],
                showgrid=False,
            ),
        },
    )


def _full_width_line(y: float) -> dict:
    """A white horizontal line across the plot at y (what fig.add_hline draws)."""
    return {
        "type": "line",
        "xref": "x domain",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y,
        "y1": y,
        "line": {"color": "white", "width": 3},
    }


def head_weight_grid(
    weights: np.ndarray, from_label: str, to_label: str, *, selected: tuple[int, int] | None = None
) -> go.Figure:
    """(L, H) weights of one query → key pair in every head, numbers printed: where the link lives."""
    n_layers, n_heads = weights.shape
    z = np.asarray(weights, dtype=np.float32)
    pair = f"{escape_label(from_label)} → {escape_label(to_label)}"
    return go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(n_heads)),
            y=list(range(n_layers)),
            zmin=0.0,
            zmax=float(max(0.05, z.max())),
            colorscale=SEQUENTIAL,
            colorbar={"title": {"text": "weight"}, "thickness": 14},
            text=np.char.mod("%.2f", z),
            texttemplate="%{text}" if n_heads <= 16 else None,
            textfont={"size": 12},
            # 1-indexed [layer, head] per cell, as plain lists (a 3-D typed array is not read back)
            customdata=(
                np.stack(np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij"), -1) + 1
            ).tolist(),
            hovertemplate=f"{pair}<br>layer %{{customdata[0]}}, head %{{customdata[1]}}<br>"
            "weight: %{z:.4f}<extra></extra>",
            xgap=2,
            ygap=2,
        ),
        layout={
            "height": int(max(260, 100 + 40 * n_layers)),
            "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
            "font": FONT,
            "shapes": [] if selected is None else [cell_outline(*selected, width=3)],
            "annotations": [] if selected is None else [picked_badge(*selected)],
            "xaxis": _numbered_axis("head", n_heads, side="top"),
            "yaxis": _numbered_axis("layer", n_layers, autorange="reversed"),
        },
    )
