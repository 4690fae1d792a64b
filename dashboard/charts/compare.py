"""Figure builders for the compare page: one head's attention on each sentence, and their difference.
Arrays in, go.Figure out (no Streamlit, no attention math).

Letters: T tokens. Attention is [query, key]: rows = the token that attends ("from"), columns = the
token attended to ("to"), as on the explore page's head view. Layers and heads arrive 0-indexed and
are shown from 1. Token labels are escaped (escape_label): Plotly reads a few HTML tags in text.
The shared builder (dashboard.charts.heatmap.matrix_heatmap) decides whether cell numbers fit: on a
128-token head none are printed, hover still gives each weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.explore import escape_label
from dashboard.charts.heatmap import OUTLINE_COLOR, PAGE, Sizing, matrix_heatmap

FROM, TO = "from (query)", "to (key)"


def row_outline(row: int, n_cols: int) -> dict:
    """A Plotly layout shape: a red box around one whole row of a category heatmap."""
    return {
        "type": "rect",
        "xref": "x",
        "yref": "y",
        "x0": -0.5,
        "x1": n_cols - 0.5,
        "y0": row - 0.5,
        "y1": row + 0.5,
        "line": {"color": OUTLINE_COLOR, "width": 3},
        "fillcolor": "rgba(0,0,0,0)",
    }


QUIET = 0.05  # printed cell numbers below this size are left blank (hover still gives them)


def _quiet(fig: go.Figure) -> go.Figure:
    """Leave small numbers out of the cells: a wall of "0.00" hides the few that matter."""
    trace = fig.data[0]
    if trace.text is not None:
        z = np.asarray(trace.z, dtype=np.float64)
        trace.text = np.where(np.abs(z) >= QUIET, np.asarray(trace.text, dtype=object), "")
    return fig


def _outline(focus_row: int | None, n: int) -> list[dict]:
    return [row_outline(focus_row, n)] if focus_row is not None and 0 <= focus_row < n else []


def head_map(
    matrix: np.ndarray,
    tokens: Sequence[str],
    *,
    title: str,
    focus_row: int | None = None,
    share: float = 0.5,
    height: int | None = None,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """One head's (T, T) attention on one sentence, on a fixed 0–1 scale (so two maps compare)."""
    labels = [escape_label(t) for t in tokens]
    return _quiet(
        matrix_heatmap(
            np.asarray(matrix, dtype=np.float32),
            labels,
            labels,
            title=title,
            row_title=FROM,
            col_title=TO,
            decimals=2,
            probabilities=True,
            hover_value_name="weight",
            share=share,
            height=height,
            shapes=_outline(focus_row, len(labels)),
            sizing=sizing,
        )
    )


def pair_labels(tokens1: Sequence[str], tokens2: Sequence[str]) -> list[str]:
    """Aligned tokens' labels for the difference map: the token, or "large→small" where swapped."""
    return [a if a == b else f"{a}→{b}" for a, b in zip(tokens1, tokens2, strict=True)]


def difference_map(
    diff: np.ndarray,
    tokens1: Sequence[str],
    tokens2: Sequence[str],
    *,
    title: str,
    focus_row: int | None = None,
    share: float = 0.5,
    height: int | None = None,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """(T, T) sentence 2 − sentence 1 for aligned sentences: diverging colours centred on 0, the
    range symmetric (matrix_heatmap's signed scale)."""
    labels = [escape_label(t) for t in pair_labels(tokens1, tokens2)]
    return _quiet(
        matrix_heatmap(
            np.asarray(diff, dtype=np.float32),
            labels,
            labels,
            title=title,
            row_title=FROM,
            col_title=TO,
            decimals=2,
            probabilities=False,
            hover_value_name="sentence 2 − sentence 1",
            share=share,
            height=height,
            shapes=_outline(focus_row, len(labels)),
            sizing=sizing,
        )
    )
