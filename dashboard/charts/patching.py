"""Figure builder for activation patching (compare's "which heads carry the difference"): a grid of
restored fractions, layers down, heads or tokens across. Arrays in, go.Figure out; no Streamlit.

Restored fractions are drawn on a diverging scale fixed to at least [-1, 1], so 1 (all of the
difference) is the same colour on every pair and a cell past 1 or below 0 stands out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import DIVERGING, PAGE, PRESENTER, Sizing, grid_top_px, scored_grid

DECIMALS = 2  # a cell's number; the page's statements count cells as printed (views/compare/patch_said)


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
    top_px = grid_top_px(sizing)
    row_px = sizing.row_px + (8 if sizing is PRESENTER else 4)
    height = min(max_height, top_px + row_px * z.shape[0])
    # numbers only where a row has room for them (SmolLM2's 30 layers: colours, and the hover)
    numbers = None if (height - top_px) / z.shape[0] >= 2 * sizing.min_number else False
    return scored_grid(
        z, row_labels, col_labels, title=title, axes=axes, bar_title=bar_title, outlined=outlined,
        scale={"colorscale": DIVERGING, "zmid": 0.0, "zmin": -bound, "zmax": bound}, height=height,
        share=share, sizing=sizing, show_numbers=numbers, decimals=DECIMALS,
    )  # fmt: skip
