"""A sentence pair's two segments marked on figures the other builders made: a dashed line between
sentence A and sentence B on a heatmap's two axes, with "sentence A" and "sentence B" under its
columns (head_heatmap); B's rows shaded in the lines view (lines_figure); and each head's crossing
share added to the model view's hover, with a thin line at the boundary across each thumbnail
(model_grid_figure). Figures are changed in place and returned; the builders stay as they are.
Pure Plotly: no Streamlit.

`b_first`: the first shown item of sentence B; `n_items`: the shown items (W).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

DIVIDER = {"color": "#111111", "width": 2, "dash": "dash"}  # dark on every colour scale, and not a colour cue
B_SHADE = "rgba(90, 90, 90, 0.10)"  # the lines view's B rows: a grey band, readable in greyscale
LABEL_FONT = {"size": 13, "color": "#111111"}
LABEL_ROOM = 34  # px under a heatmap for the sentence labels


def mark_heatmap(fig: go.Figure, b_first: int, n_items: int) -> go.Figure:
    """A dashed line at the A/B boundary across both axes of a (W, W) categorical heatmap, and the
    two sentences named under their columns. Nothing when B has no shown item."""
    if not 0 < b_first < n_items:
        return fig
    edge = b_first - 0.5  # between the last item of A and the first of B (category positions)
    top, bottom = -0.5, n_items - 0.5
    fig.add_shape(type="line", x0=edge, x1=edge, y0=top, y1=bottom, xref="x", yref="y", line=DIVIDER)
    fig.add_shape(type="line", x0=top, x1=bottom, y0=edge, y1=edge, xref="x", yref="y", line=DIVIDER)
    for name, first, last in (("sentence A", 0, b_first - 1), ("sentence B", b_first, n_items - 1)):
        fig.add_annotation(
            x=(first + last) / 2,
            y=0,
            xref="x",
            yref="paper",
            yanchor="top",
            yshift=-4,
            text=f"<b>{name}</b>",
            showarrow=False,
            font=LABEL_FONT,
        )
    margin = fig.layout.margin
    fig.update_layout(margin={"b": (margin.b or 10) + LABEL_ROOM})
    return fig


def mark_lines(fig: go.Figure, b_first: int, n_items: int) -> go.Figure:
    """Sentence B's rows shaded in a lines figure (item i at height -i, the token columns at x 0 and
    1) and a dashed line above them, each part named at the left edge."""
    if not 0 < b_first < n_items:
        return fig
    edge = -b_first + 0.5
    fig.add_shape(
        type="rect",
        x0=-0.6,
        x1=1.6,
        y0=edge,
        y1=-n_items + 0.4,
        fillcolor=B_SHADE,
        line_width=0,
        layer="below",
    )
    fig.add_shape(type="line", x0=-0.6, x1=1.6, y0=edge, y1=edge, line=DIVIDER, layer="below")
    for name, y, anchor in (("sentence A", edge, "bottom"), ("sentence B", edge, "top")):
        fig.add_annotation(
            x=-0.6,
            y=y,
            text=f"<b>{name}</b>",
            showarrow=False,
            xanchor="left",
            yanchor=anchor,
            font=LABEL_FONT,
        )
    return fig


def mark_grid(
    fig: go.Figure, n_layers: int, n_heads: int, cell: int, gap: int, edge: float, hover_lines: Sequence[str]
) -> go.Figure:
    """The model view's grid (model_grid_figure): a thin line at the A/B boundary across each
    thumbnail, `edge` pixels into its cell, and each head's line on the pair added to its hover,
    before the closing "click to open" (hover_lines: layer-major, as the grid)."""
    points = next(trace for trace in fig.data if trace.name == "heads")
    if len(points.text) != len(hover_lines):
        raise ValueError(f"{len(points.text)} hover texts but {len(hover_lines)} pair lines")
    points.text = [_before_last_line(old, line) for old, line in zip(points.text, hover_lines, strict=True)]
    if edge <= 0 or edge >= cell:
        return fig
    xs: list[float | None] = []
    ys: list[float | None] = []
    step = cell + gap
    for layer in range(n_layers):
        for head in range(n_heads):
            x0, y0 = gap + head * step - 0.5, gap + layer * step - 0.5  # the cell's top-left pixel edge
            xs += [x0 + edge, x0 + edge, None, x0, x0 + cell, None]
            ys += [y0, y0 + cell, None, y0 + edge, y0 + edge, None]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            line={"color": "rgba(17, 17, 17, 0.6)", "width": 1},
            hoverinfo="skip",
            showlegend=False,
            name="pair boundary",
        )
    )
    return fig


def _before_last_line(text: str, line: str) -> str:
    head, sep, last = text.rpartition("<br>")
    return f"{head}<br>{line}<br>{last}" if sep else f"{text}<br>{line}"
