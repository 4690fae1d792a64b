"""Figure builders for the cost page: measured time and memory against length on log-log axes, the
full and variant maps of one head, each layer's change and the sweeps, and a decoder's one more token
with the KV cache and without it beside the cache's size. Arrays in, go.Figure out;
no Streamlit, no model. Layers are 0-indexed in arguments and labelled from 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.cost.price import MB, Curve
from dashboard.charts.compare import head_map
from dashboard.charts.explore import FONT
from dashboard.charts.heatmap import PAGE, Sizing, top_title
from dashboard.charts.marks import CURVE_STYLES

COLORS = ("#2171b5", "#08306b", "#d94801", "#6a51a3")  # one head, the layer, projections, a variant
THRESHOLD_COLOR = "#d62728"


def _curve_look(i: int, width: int = 3) -> dict:
    """Curve i's line and markers: a colour, and a dash and a symbol that tell it without the colour
    (the variant's purple and one head's blue merge under deuteranopia)."""
    dash, symbol = CURVE_STYLES[i % len(CURVE_STYLES)]
    return {
        "line": {"color": COLORS[i % len(COLORS)], "width": width, "dash": dash},
        "marker": {"symbol": symbol},
    }


def _log_axes(fig: go.Figure, sizing: Sizing, lengths: Sequence[int]) -> None:
    """Log axes labelled at the measured lengths and at powers of ten (no 2s and 5s between)."""
    font = {**FONT, "size": sizing.font}
    ticks = {"tickvals": list(lengths), "ticktext": [f"{n}" for n in lengths]}
    fig.update_xaxes(type="log", title_text="tokens n", tickfont=font, title_font=font, **ticks)
    fig.update_yaxes(type="log", dtick=1, tickfont=font, title_font=font)


def _time_and_memory_axes(
    fig: go.Figure, sizing: Sizing, lengths: Sequence[int], title: str, memory_title: str, height: int
) -> None:
    """Both panels on log-log axes (time left, memory right), the title, legend and sizes."""
    _log_axes(fig, sizing, lengths)
    narrow = list(lengths[::2])  # the memory panel is narrower: every other length keeps its labels level
    fig.update_xaxes(tickvals=narrow, ticktext=[str(n) for n in narrow], tickangle=0, row=1, col=2)
    fig.update_yaxes(title_text="milliseconds", row=1, col=1)
    fig.update_yaxes(title_text=f"{memory_title}, MB", row=1, col=2)
    fig.update_layout(
        title=top_title(title) | {"font": {"size": sizing.font + 2}},
        height=height,
        margin={"t": 50 + sizing.font, "b": 60, "l": 70, "r": 20},
        legend={"orientation": "h", "y": -0.2, "font": {"size": sizing.font}},
        font={"size": sizing.font},
    )


def price_chart(
    curves: Sequence[Curve], labels: dict[str, str], *, title: str, memory_title: str, sizing: Sizing = PAGE
) -> go.Figure:
    """Time (left) and peak memory (right) of each curve against n, log-log; each legend entry
    carries its fitted exponent."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.1)
    for i, curve in enumerate(curves):
        name = f"{labels.get(curve.name, curve.name)}: n^{curve.exponent:.2f}"
        common = {"x": list(curve.lengths), "mode": "lines+markers", **_curve_look(i)}
        fig.add_trace(
            go.Scatter(
                **common,
                y=[s * 1e3 for s in curve.seconds],
                name=name,
                legendgroup=curve.name,
                hovertemplate="n = %{x}<br>%{y:.3f} ms<extra></extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                **common,
                y=[b / MB for b in curve.peak_bytes],
                name=name,
                legendgroup=curve.name,
                showlegend=False,
                hovertemplate="n = %{x}<br>%{y:.2f} MB<extra></extra>",
            ),
            row=1,
            col=2,
        )
    lengths = max((c.lengths for c in curves), key=len)
    _time_and_memory_axes(fig, sizing, lengths, title, memory_title, 460 if sizing is PAGE else 480)
    return fig


def timing_chart(full: Curve, variant: Curve, label: str, *, title: str, sizing: Sizing = PAGE) -> go.Figure:
    """One head's output time under full attention and under the variant, log-log."""
    fig = go.Figure()
    for curve, name, look in ((full, "Full attention", 0), (variant, label, 3)):
        fig.add_trace(
            go.Scatter(
                x=list(curve.lengths),
                y=[s * 1e3 for s in curve.seconds],
                mode="lines+markers",
                **_curve_look(look),
                name=f"{name}: n^{curve.exponent:.2f}",
                hovertemplate="n = %{x}<br>%{y:.3f} ms<extra></extra>",
            )
        )
    _log_axes(fig, sizing, full.lengths)
    fig.update_yaxes(title_text="milliseconds")
    fig.update_layout(
        title=top_title(title) | {"font": {"size": sizing.font + 2}},
        height=380 if sizing is PAGE else 520,
        margin={"t": 40 + sizing.font, "b": 50, "l": 70, "r": 20},
        legend={"orientation": "h", "y": -0.25, "font": {"size": sizing.font}},
    )
    return fig


def variant_maps(
    full: np.ndarray,
    variant: np.ndarray,
    tokens: Sequence[str],
    titles: tuple[str, str],
    sizing: Sizing = PAGE,
) -> tuple[go.Figure, go.Figure]:
    """Full attention's and the variant's (T, T) maps, both on the fixed 0–1 scale."""
    return tuple(
        head_map(
            matrix, tokens, title=title, share=0.5, sizing=sizing, height=None if sizing is PAGE else 440
        )
        for matrix, title in zip((full, variant), titles, strict=True)
    )


def layer_bars(
    changes: np.ndarray, *, title: str, x_title: str, y_title: str, sizing: Sizing = PAGE
) -> go.Figure:
    """(L,) each layer's mean row total variation as bars, layers labelled from 1."""
    layers = [str(i + 1) for i in range(len(changes))]
    fig = go.Figure(
        go.Bar(
            x=layers,
            y=np.asarray(changes, dtype=float),
            marker_color=COLORS[3],
            text=[f"{c:.3f}" for c in changes],
            textposition="outside",
            textfont={"size": sizing.font},
            hovertemplate=f"{x_title} %{{x}}<br>{y_title}: %{{y:.4f}}<extra></extra>",
        )
    )
    font = {**FONT, "size": sizing.font}
    fig.update_xaxes(title_text=x_title, tickfont=font, title_font=font)
    top = float(np.max(changes)) if len(changes) else 1.0
    fig.update_yaxes(title_text=y_title, tickfont=font, title_font=font, range=[0, max(top, 1e-3) * 1.2])
    fig.update_layout(
        title=top_title(title) | {"font": {"size": sizing.font + 2}},
        height=360 if sizing is PAGE else 480,
        margin={"t": 40 + sizing.font, "b": 50, "l": 70, "r": 20},
    )
    return fig


def sweep_chart(
    found: Sequence[tuple[int, float]],
    threshold: float,
    *,
    title: str,
    x_title: str,
    y_title: str,
    answer: int | None = None,
    log_x: bool = False,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """A sweep's (parameter, embedding change) points, the threshold as a dashed line, the answer
    (if any) marked."""
    xs, ys = [v for v, _ in found], [c for _, c in found]
    fig = go.Figure(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines+markers",
            line={"color": COLORS[3], "width": 3},
            marker={"size": 8},
            hovertemplate=f"{x_title} = %{{x}}<br>{y_title}: %{{y:.4f}}<extra></extra>",
            showlegend=False,
        )
    )
    fig.add_hline(
        y=threshold,
        line={"color": THRESHOLD_COLOR, "dash": "dash", "width": 2},
        annotation_text=f"{threshold}",
        annotation_position="top right",
        annotation_font={"size": sizing.font, "color": THRESHOLD_COLOR},
    )
    if answer is not None:
        fig.add_vline(x=answer, line={"color": "#444444", "dash": "dot", "width": 2})
    font = {**FONT, "size": sizing.font}
    fig.update_xaxes(title_text=x_title, tickfont=font, title_font=font, type="log" if log_x else "linear")
    fig.update_yaxes(title_text=y_title, tickfont=font, title_font=font, rangemode="tozero")
    fig.update_layout(
        title=top_title(title) | {"font": {"size": sizing.font + 2}},
        height=360 if sizing is PAGE else 480,
        margin={"t": 40 + sizing.font, "b": 50, "l": 70, "r": 20},
    )
    return fig


def next_token_chart(
    curves: Sequence[Curve],
    labels: dict[str, str],
    cache: tuple[Sequence[int], Sequence[float]],
    chosen: tuple[int, float],
    *,
    title: str,
    memory_title: str,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """One more token's time with the KV cache and recomputing (left, each legend entry with its
    fitted exponent) and the cache's size against n (right: (lengths, MB), the chosen (n, MB)
    marked), log-log."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.1)
    for curve, look in zip(curves, (0, 2), strict=False):
        fig.add_trace(
            go.Scatter(
                x=list(curve.lengths),
                y=[s * 1e3 for s in curve.seconds],
                mode="lines+markers",
                **_curve_look(look),
                name=f"{labels.get(curve.name, curve.name)}: n^{curve.exponent:.2f}",
                hovertemplate="n = %{x}<br>%{y:.3f} ms<extra></extra>",
            ),
            row=1,
            col=1,
        )
    _cache_panel(fig, cache, chosen, memory_title)
    measured = curves[0].lengths if curves else tuple(cache[0])
    _time_and_memory_axes(fig, sizing, measured, title, memory_title, 440 if sizing is PAGE else 560)
    return fig


def _cache_panel(
    fig: go.Figure, cache: tuple[Sequence[int], Sequence[float]], chosen: tuple[int, float], name: str
) -> None:
    """The right panel of next_token_chart: the cache's MB against n as a line, the chosen n marked."""
    lengths, megabytes = cache
    fig.add_trace(
        go.Scatter(
            x=list(lengths),
            y=list(megabytes),
            mode="lines",
            line={"color": COLORS[1], "width": 3},
            name=name,
            showlegend=False,
            hovertemplate="n = %{x}<br>%{y:.3f} MB<extra></extra>",
        ),
        row=1,
        col=2,
    )
    n, mb = chosen
    fig.add_trace(
        go.Scatter(
            x=[n],
            y=[mb],
            mode="markers",
            marker={"color": THRESHOLD_COLOR, "size": 12},
            name=f"n = {n:,}",
            showlegend=False,
            hovertemplate="n = %{x}<br>%{y:.3f} MB<extra></extra>",
        ),
        row=1,
        col=2,
    )
