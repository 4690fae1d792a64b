"""Figures of the learn page beyond the step heatmaps (dashboard.charts.heatmap.matrix_heatmap):
short token labels, the softmax-saturation curves, a decoder's causal-mask matrices (−∞ and exact
zeros written in their cells) and activation curves (the decoder's GELU).

Pure Plotly: arrays in, go.Figure out, so they test without Streamlit. Token labels arrive
shortened by short_labels(); the tokenizer already splits "<", ">" and "&" into tokens of their
own, so a label can never form one of the few HTML tags Plotly draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import PAGE, Sizing, matrix_heatmap_spec

__all__ = ["activation_figure", "causal_figure", "saturation_figure", "short_labels"]

SCALED_COLOR = "#1f77b4"
UNSCALED_COLOR = "#ff7f0e"


def short_labels(tokens: Sequence[str], max_chars: int = 14) -> list[str]:
    """Axis labels: long tokens cut with an ellipsis so a matrix keeps its width."""
    return [t if len(t) <= max_chars else t[: max_chars - 1] + "…" for t in tokens]


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
    series = (
        ("divided by √d_k", SCALED_COLOR, max_weight_scaled, entropy_scaled, scaling_on),
        ("not divided", UNSCALED_COLOR, max_weight_unscaled, entropy_unscaled, not scaling_on),
    )
    traces = [trace for s in series for trace in _saturation_traces(d_k, *s)]
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
        shapes += [_vline(current_d_k, axis) for axis in ("x", "x2")]
        annotations.append(_your_d_k(current_d_k))
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


MASKED_COLOR = "#d9d9d9"  # a cell the causal mask hides: grey, so it is not read as a score of 0
ZERO_COLOR = "#ffffff"


def causal_figure(
    values: np.ndarray,
    hidden: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    hidden_text: str,
    sizing: Sizing = PAGE,
    **kwargs,
) -> go.Figure:
    """A matrix whose `hidden` cells (bool, like values; True above the diagonal) are written out as
    `hidden_text` whatever their size: "−∞" for the masked scores (grey, never a number), "0" for the
    softmax's exact zeros. The other cells are matrix_heatmap's (kwargs go to it); the cells' values
    stay in the first trace, the hidden ones NaN there."""
    hidden = np.asarray(hidden, dtype=bool)
    trace, layout = matrix_heatmap_spec(values, rows, cols, masked=hidden, sizing=sizing, **kwargs)
    color = MASKED_COLOR if hidden_text != "0" else ZERO_COLOR
    cover = {
        "z": np.where(hidden, 0.0, np.nan),
        "x": trace["x"],
        "y": trace["y"],
        "text": np.where(hidden, hidden_text, ""),
        "texttemplate": "%{text}",
        "textfont": {"size": max(trace["textfont"]["size"], sizing.min_number), "color": "#333333"},
        "colorscale": [[0.0, color], [1.0, color]],
        "showscale": False,
        "hoverongaps": False,
        # the cell's row and column as the matrix's hover says them, then what the mask made of it
        "hovertemplate": trace["hovertemplate"].rsplit("<br>", 1)[0] + f"<br>{hidden_text}: the causal mask's"
        "<extra></extra>",
        "xgap": 1,
        "ygap": 1,
    }
    return go.Figure(data=[go.Heatmap(**trace), go.Heatmap(**cover)], layout=layout)


ACTIVATION_COLORS = (SCALED_COLOR, UNSCALED_COLOR, "#7f7f7f")


def activation_figure(x: np.ndarray, curves: dict[str, np.ndarray], height: int = 320) -> go.Figure:
    """Activation functions against their input: one line per curve (name -> values at x), the
    first drawn bold (the one in use)."""
    traces = [
        go.Scatter(
            x=np.asarray(x),
            y=np.asarray(y),
            mode="lines",
            name=name,
            line={
                "color": ACTIVATION_COLORS[i % 3],
                "width": 4 if i == 0 else 2,
                "dash": ("solid", "dot", "dash")[i % 3],  # not only the colour tells the curves apart
            },
            hovertemplate=f"u = %{{x:.2f}}<br>{name}: %{{y:.4f}}<extra></extra>",
        )
        for i, (name, y) in enumerate(curves.items())
    ]
    layout = {
        "xaxis": {"title": {"text": "u (the input of the activation)"}, "zeroline": True},
        "yaxis": {"title": {"text": "activation"}, "zeroline": True},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 20, "b": 10},
        "font": {"size": 14},
        "legend": {"orientation": "h", "y": 1.02, "x": 0.0, "yanchor": "bottom"},
    }
    return go.Figure(data=traces, layout=layout)


def _saturation_traces(
    d_k: np.ndarray, name: str, color: str, max_weight: np.ndarray, entropy: np.ndarray, in_use: bool
) -> list[go.Scatter]:
    """One setting's two curves: the largest weight (left panel) and the entropy (right panel)."""
    line = {"color": color, "width": 5 if in_use else 2, "dash": "solid" if in_use else "dot"}
    return [
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
        for axis, y, fmt in (("", max_weight, ".3f"), ("2", entropy, ".2f"))
    ]


def _vline(x: float, axis: str) -> dict:
    return {
        "type": "line",
        "xref": axis,
        "yref": f"{axis.replace('x', 'y')} domain",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": "black", "width": 1.5},
    }


def _your_d_k(d_k: int) -> dict:
    return {
        "x": float(np.log10(d_k)),  # annotations on a log axis take log10 positions
        "y": 1.0,
        "xref": "x",
        "yref": "y",
        "text": f"your d_k = {d_k}",
        "showarrow": False,
        "xanchor": "left",
        "xshift": 4,
        "yshift": 12,
        "font": {"size": 13},
    }


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


def gap_figure(gaps: np.ndarray, scores: np.ndarray, marked: int, axes: tuple[str, str], height: int = 320):
    """RoPE's score of one query and one key against the gap between their positions; the gap they
    have in the text marked with a dot."""
    line = go.Scatter(
        x=gaps,
        y=scores,
        mode="lines",
        line={"color": ACTIVATION_COLORS[0], "width": 3},
        hovertemplate="gap %{x}<br>score %{y:.4f}<extra></extra>",
        showlegend=False,
    )
    at = int(np.flatnonzero(gaps == marked)[0])
    dot = go.Scatter(
        x=[marked],
        y=[scores[at]],
        mode="markers",
        marker={"size": 14, "color": ACTIVATION_COLORS[1]},
        hovertemplate="in your text: gap %{x}<br>score %{y:.4f}<extra></extra>",
        showlegend=False,
    )
    layout = {
        "xaxis": {"title": {"text": axes[0]}},
        "yaxis": {"title": {"text": axes[1]}, "zeroline": True},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 20, "b": 10},
        "font": {"size": 14},
    }
    return go.Figure(data=[line, dot], layout=layout)
