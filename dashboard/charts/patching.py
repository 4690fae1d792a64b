"""Figure builder for activation patching (compare's "which heads carry the difference"): a grid of
restored fractions, layers down, heads or tokens across. Arrays in, go.Figure out; no Streamlit.

Restored fractions are drawn on a diverging scale fixed to at least [-1, 1], so 1 (all of the
difference) is the same colour on every pair and a cell past 1 or below 0 stands out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import PAGE, PRESENTER, Sizing, cell_outline, matrix_heatmap


def restored_grid(
    restored: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str,
    axes: tuple[str, str],
    bar_title: str,
    outlined: Iterable[tuple[int, int]] = (),
    share: float = 0.65,
    sizing: Sizing = PAGE,
    max_height: int = 720,
) -> go.Figure:
    """(L, H) or (L, T) restored fractions, each cell's number printed while they fit; `outlined`
    cells (row, column) boxed in red. Labels are escaped by matrix_heatmap."""
    z = np.asarray(restored, np.float64)
    bound = max(1.0, float(np.abs(z).max()) if z.size else 1.0)
    top_px = 110 + 2 * sizing.font  # the title, then the column axis' title and labels
    row_px = sizing.row_px + (8 if sizing is PRESENTER else 4)
    height = min(max_height, top_px + row_px * z.shape[0])
    # numbers only where a row has room for them (SmolLM2's 30 layers: colours, and the hover)
    numbers = None if (height - top_px) / z.shape[0] >= 2 * sizing.min_number else False
    fig = matrix_heatmap(
        z,
        list(row_labels),
        list(col_labels),
        title=title,
        row_title=axes[0],
        col_title=axes[1],
        decimals=2,
        hover_value_name=bar_title,
        share=share,
        shapes=[cell_outline(row, col, width=3) for row, col in outlined],
        show_colorbar=True,
        sizing=sizing,
        height=height,
        show_numbers=numbers,
    )
    fig.update_traces(
        zmid=0.0,
        zmin=-bound,
        zmax=bound,
        colorbar={"title": {"text": bar_title, "side": "right"}, "thickness": 14},
    )
    if all(len(label) <= 3 for label in col_labels):  # head numbers: level, even past ten columns
        fig.update_xaxes(tickangle=0)
    fig.update_layout(margin_t=top_px - 20, title_font_size=sizing.font + 2)
    return fig
