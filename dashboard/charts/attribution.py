"""Figure builder for the explore page's attribution view: one value per token, as stacked bar
panels sharing the token axis (leave-one-out on top, then what attention would say). Arrays in,
go.Figure out; no Streamlit, no model.

Letters: W tokens on the axis (the scored ones: [CLS] and [SEP] are left out). Bars, not a heatmap:
each measure gives one number per token, and bars let the eye compare orders across panels.
Token labels are escaped (Plotly reads a few HTML tags in any text it draws).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.explore import FONT, escape_label, unique_labels
from dashboard.charts.heatmap import top_title

LOO_COLOR = "#d94801"  # dark orange: what the model does
ATTENTION_COLOR = "#2171b5"  # the heatmaps' dark blue: what attention would say


def attribution_bars(
    labels: Sequence[str],
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    title: str,
    x_title: str,
    font: int = FONT["size"],
    height: int | None = None,
) -> go.Figure:
    """`panels`: (panel title, values (W,)) top to bottom, the first drawn as the measure the others
    are compared with (orange, its values printed while there are few tokens), the rest in blue.
    Each panel has its own y axis from 0: the measures have different units; their orders matter."""
    names = unique_labels(labels)
    w, n = len(names), len(panels)
    fig = make_subplots(
        rows=n,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.4 / n,
        subplot_titles=[escape_label(panel_title) for panel_title, _ in panels],
    )
    for row, (panel_title, values) in enumerate(panels, start=1):
        y = np.asarray(values, dtype=np.float32)
        first = row == 1
        fig.add_trace(
            go.Bar(
                x=names,
                y=y,
                marker={"color": LOO_COLOR if first else ATTENTION_COLOR},
                text=np.char.mod("%.3f", y) if first and w <= 16 else None,
                textposition="outside",
                textfont={"size": max(font - 3, 10)},
                cliponaxis=False,
                hovertemplate=f"%{{x}}<br>{escape_label(panel_title)}: %{{y:.4f}}<extra></extra>",
                showlegend=False,
            ),
            row=row,
            col=1,
        )
        top = float(np.nanmax(y, initial=0.0)) or 1.0
        fig.update_yaxes(range=[0, top * (1.25 if first else 1.08)], nticks=3, row=row, col=1)
    dark = {**FONT, "size": font}
    fig.update_layout(
        title=top_title(escape_label(title)),
        height=height or 150 * n + 120,
        margin={"l": 10, "r": 10, "t": 60 + font, "b": 10},
        font=dark,
        bargap=0.2,
    )
    fig.layout.title.font.size = font + 2
    fig.update_annotations(font={**dark, "size": font})  # the panel titles
    # fonts set in full: Streamlit's theme greys an axis' text unless the axis sets it
    fig.update_yaxes(tickfont={**dark, "size": max(font - 2, 10)})
    fig.update_xaxes(tickfont=dark, type="category", tickangle=0 if w <= 10 else -60)
    fig.update_xaxes(title_text=x_title, title_font=dark, row=n, col=1)
    return fig
