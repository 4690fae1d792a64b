"""Figures of the learn page: step heatmaps with masked and flagged cells, and softmax saturation.

Pure Plotly: arrays in, go.Figure out, so they test without Streamlit. Token labels arrive
shortened by short_labels(); the tokenizer already splits "<", ">" and "&" into tokens of their
own, so a label can never form one of the few HTML tags Plotly draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import OUTLINE_COLOR, cell_outline, matrix_heatmap

__all__ = ["FLAG_COLOR", "saturation_figure", "short_labels", "step_heatmap"]

FLAG_COLOR = OUTLINE_COLOR  # outline of a cell whose printed value in the article is wrong
SCALED_COLOR = "#1f77b4"
UNSCALED_COLOR = "#ff7f0e"


def short_labels(tokens: Sequence[str], max_chars: int = 14) -> list[str]:
    """Axis labels: long tokens cut with an ellipsis so a matrix keeps its width."""
    return [t if len(t) <= max_chars else t[: max_chars - 1] + "…" for t in tokens]


def step_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    row_title: str = "",
    col_title: str = "",
    probabilities: bool = False,
    masked: np.ndarray | None = None,
    flagged: Sequence[tuple[int, int]] = (),
    height: int | None = None,
    show_numbers: bool | None = None,
    share: float = 1.0,
) -> go.Figure:
    """matrix_heatmap with what a step needs.

    masked: bool array like values, True where a query may not look; those cells are left blank
    and read "−∞", the score they get before the softmax.
    flagged: (row, column) cells to outline in red: the article printed a different number there.
    """
    shapes = [cell_outline(r, c) for r, c in flagged]
    # one constructor call in matrix_heatmap: every later update would validate the figure again
    fig = matrix_heatmap(
        values,
        row_labels,
        col_labels,
        title=title,
        row_title=row_title,
        col_title=col_title,
        probabilities=probabilities,
        height=height,
        show_numbers=show_numbers,
        share=share,
        masked=masked,
        shapes=shapes,
    )
    return fig


def saturation_figure(
    d_k: np.ndarray,
    max_weight_scaled: np.ndarray,
    max_weight_unscaled: np.ndarray,
    entropy_scaled: np.ndarray,
    entropy_unscaled: np.ndarray,
    *,
    n_keys: int,
    current_d_k: int | None = None,
    scaling_on: bool = True,
) -> go.Figure:
    """Two panels against d_k (log scale): the largest softmax weight in a row, and the row's
    entropy, with and without dividing the scores by sqrt(d_k). The setting in use is drawn bold.

    Built as one dict (two axis pairs side by side) rather than with make_subplots and add_hline,
    which validate every addition separately and cost ten times as long."""
    uniform_bits = float(np.log2(n_keys))
    traces = []
    series = (
        ("divided by √d_k", SCALED_COLOR, max_weight_scaled, entropy_scaled, scaling_on),
        ("not divided", UNSCALED_COLOR, max_weight_unscaled, entropy_unscaled, not scaling_on),
    )
    for name, color, maxw, ent, in_use in series:
        line = {"color": color, "width": 5 if in_use else 2, "dash": "solid" if in_use else "dot"}
        for axis, y, fmt in (("", maxw, ".3f"), ("2", ent, ".2f")):
            traces.append(
                go.Scatter(
                    x=np.asarray(d_k),
                    y=np.asarray(y),
                    xaxis=f"x{axis}",
                    yaxis=f"y{axis}",
                    mode="lines+markers",
                    name=f"{name} (in use)" if in_use else name,
                    legendgroup=name,
                    showlegend=axis == "",
                    line=line,
                    marker={"size": 8 if in_use else 6, "color": color},
                    hovertemplate=f"d_k = %{{x}}<br>{name}: %{{y:{fmt}}}<extra></extra>",
                )
            )
    ticks = [int(v) for v in d_k]
    x_axis = {"type": "log", "title": {"text": "d_k (width of a query and a key)"}, "tickvals": ticks}
    shapes = [
        _hline(1.0 / n_keys, "x domain", "y"),  # an even spread over n_keys keys
        _hline(uniform_bits, "x2 domain", "y2"),
    ]
    annotations = [
        _panel_title("Largest weight in a softmax row (1 = all on one key)", 0.225),
        _panel_title(
            f"Spread of the row: entropy in bits ({uniform_bits:.0f} = even over {n_keys} keys)", 0.775
        ),
    ]
    if current_d_k is not None:
        for axis in ("x", "x2"):
            shapes.append(
                {
                    "type": "line",
                    "xref": axis,
                    "yref": f"{axis.replace('x', 'y')} domain",
                    "x0": current_d_k,
                    "x1": current_d_k,
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "black", "width": 1.5},
                }
            )
        annotations.append(
            {
                "x": float(np.log10(current_d_k)),  # annotations on a log axis take log10 positions
                "y": 1.0,
                "xref": "x",
                "yref": "y",
                "text": f"your d_k = {current_d_k}",
                "showarrow": False,
                "xanchor": "left",
                "xshift": 4,
                "yshift": 12,
                "font": {"size": 13},
            }
        )
    layout = {
        "xaxis": {**x_axis, "domain": [0.0, 0.45], "anchor": "y"},
        "xaxis2": {**x_axis, "domain": [0.55, 1.0], "anchor": "y2"},
        "yaxis": {"range": [0, 1.08], "anchor": "x"},
        "yaxis2": {"range": [0, uniform_bits * 1.08], "anchor": "x2"},
        "shapes": shapes,
        "annotations": annotations,
        "height": 420,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "font": {"size": 14},
        "legend": {"orientation": "h", "y": -0.3, "x": 0.5, "xanchor": "center"},
    }
    return go.Figure(data=traces, layout=layout)


def _hline(y: float, xref: str, yref: str) -> dict:
    return {
        "type": "line",
        "xref": xref,
        "yref": yref,
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": "grey", "dash": "dash"},
    }


def _panel_title(text: str, x: float) -> dict:
    return {
        "text": text,
        "x": x,
        "y": 1.0,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "yshift": 20,
        "showarrow": False,
        "font": {"size": 15},
    }
