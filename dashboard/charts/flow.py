"""Figure builders for the explore page's norms (Kobayashi et al. 2020) and rollout (Abnar & Zuidema
2020) views: the head view's heatmap (dashboard/charts/explore.py head_heatmap) restyled for values
that are not attention weights, and one token's rollout row as bars. Arrays in, go.Figure out.

Letters: W shown tokens. Rows = the token that attends ("from"), columns = the token attended to
("to"); labels are escaped (Plotly reads a few HTML tags in any text it draws).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.explore import AXIS_TEXT, FONT, escape_label, unique_labels
from dashboard.charts.heatmap import top_title

BAR_COLOR = "#2171b5"  # a dark blue of the heatmaps' "Blues" scale


def restyle_heatmap(
    fig: go.Figure,
    matrix: np.ndarray,
    bar_title: str,
    value_name: str,
    *,
    fixed: bool,
    min_text: float | None = None,
) -> go.Figure:
    """A head_heatmap figure of `matrix` (W, W) relabelled for another measure: the colour bar's
    title, the hover's value name, and the colour scale 0..1 (`fixed`, for rows that sum to 1) or
    0..the largest value (norms have no upper bound); cell numbers printed where they are at least
    `min_text` (default 5 % of the scale, as 0.05 is for weights)."""
    z = np.asarray(matrix, dtype=np.float32)
    top = 1.0 if fixed else float(max(z.max(), 1e-6)) if z.size else 1.0
    trace = fig.data[0]
    numbers = trace.texttemplate is not None
    fig.update_traces(
        zmax=top,
        colorbar={"title": {"text": bar_title}},
        text=np.where(z >= (0.05 * top if min_text is None else min_text), np.char.mod("%.2f", z), "")
        if numbers
        else None,
        hovertemplate="from (query): <b>%{y}</b><br>to (key): <b>%{x}</b><br>"
        f"{value_name}: %{{z:.4f}}<extra></extra>",
    )
    return fig


def rollout_row_bars(
    row: np.ndarray, labels: Sequence[str], *, title: str, height: int | None = None
) -> go.Figure:
    """One token's rollout row (W,) as bars over the input tokens, largest value printed on each."""
    y = np.asarray(row, dtype=np.float32)
    names = unique_labels(labels)
    w = len(names)
    fig = go.Figure(
        go.Bar(
            x=names,
            y=y,
            marker={"color": BAR_COLOR},  # one solid colour: a pale bar on white would vanish
            text=np.char.mod("%.2f", y) if w <= 24 else None,
            textposition="outside",
            cliponaxis=False,
            hovertemplate="to (input token): <b>%{x}</b><br>rollout: %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=top_title(escape_label(title)),
        height=height or 340,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        font=FONT,
        bargap=0.15,
    )
    fig.update_xaxes(
        **AXIS_TEXT, title_text="to (input token)", type="category", tickangle=0 if w <= 10 else -60
    )
    fig.update_yaxes(
        **AXIS_TEXT, title_text="share", rangemode="tozero", range=[0, float(y.max()) * 1.18 or 1.0]
    )
    return fig
