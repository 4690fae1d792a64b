"""The head atlas' grids: one statistic, or the role map, as a layers × heads heatmap.

Rows are layers and columns heads, both labelled from 1; every cell prints its value (or role) and
hovers with all of the head's numbers. One invisible point per head sits on each cell, as in the
explore page's model view: its customdata is [layer, head] (0-indexed), the click target the page
reads as a selection. Heads outside the role filter are covered by a translucent white layer.
Pure Plotly: arrays in, go.Figure out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import LABEL_COLOR, PAGE, SEQUENTIAL, Sizing, top_title

GREY_OUT = "rgba(255,255,255,0.82)"  # over heads the role filter leaves out
GREYED_TEXT = "#8a8a8a"  # their numbers: faint, still legible


def _axes(sizing: Sizing) -> dict:
    dark = {"color": LABEL_COLOR, "size": sizing.font}
    return {
        "xaxis": {
            "title": {"text": "head", "font": dark},
            "side": "top",
            "type": "category",
            "tickfont": dark,
            "fixedrange": True,
        },
        "yaxis": {
            "title": {"text": "layer", "font": dark},
            "autorange": "reversed",
            "type": "category",
            "tickfont": dark,
            "fixedrange": True,
        },
    }


def _cell_px(sizing: Sizing) -> int:
    return 46 if sizing is PAGE else 64


def _points(n_layers: int, n_heads: int, hover: Sequence[str], cell_px: int) -> go.Scatter:
    """One invisible square per head: the hover text and the click target."""
    layers, heads = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    return go.Scatter(
        x=[str(h + 1) for h in heads.ravel()],
        y=[str(la + 1) for la in layers.ravel()],
        mode="markers",
        marker={"size": cell_px * 0.8, "color": "rgba(0,0,0,0)", "symbol": "square"},
        selected={"marker": {"opacity": 0}},
        unselected={"marker": {"opacity": 0}},
        customdata=np.stack([layers.ravel(), heads.ravel()], axis=1).tolist(),
        hoverlabel={"bgcolor": "white", "bordercolor": "#888", "font": {"color": "#222"}},
        text=list(hover),
        hovertemplate="%{text}<extra></extra>",
        showlegend=False,
        name="heads",
    )


def _grey_layer(shown: np.ndarray, text: np.ndarray, x: list[str], y: list[str], font: int) -> go.Heatmap:
    """A translucent white cover over the heads not shown (NaN elsewhere draws nothing), carrying
    their values in grey: the base layer's contrast colour (white on dark cells) would vanish."""
    return go.Heatmap(
        z=np.where(shown, np.nan, 1.0),
        x=x,
        y=y,
        text=np.where(shown, "", text),
        texttemplate="%{text}",
        textfont={"size": font, "color": GREYED_TEXT},
        colorscale=[[0, GREY_OUT], [1, GREY_OUT]],
        showscale=False,
        hoverinfo="skip",
        xgap=1,
        ygap=1,
        name="filtered out",
    )


def _figure(
    base: go.Heatmap, shown: np.ndarray, hover: Sequence[str], title: str, sizing: Sizing
) -> go.Figure:
    n_layers, n_heads = shown.shape
    x, y = [str(h + 1) for h in range(n_heads)], [str(la + 1) for la in range(n_layers)]
    cell = _cell_px(sizing)
    traces = [base]
    if not shown.all():
        text = np.asarray(base.text, dtype=object)
        base.text = np.where(shown, text, "")  # the cover prints the greyed heads' text itself
        traces.append(_grey_layer(shown, text, x, y, base.textfont.size))
    traces.append(_points(n_layers, n_heads, hover, cell))
    layout = {
        **_axes(sizing),
        "height": 40 + round(4.4 * sizing.font) + cell * n_layers,
        # room above the cells for the title, the "head" axis title and the head numbers, stacked
        "margin": {"l": 10, "r": 10, "t": 30 + round(4.4 * sizing.font), "b": 10},
        "font": {"size": sizing.font, "color": LABEL_COLOR},
        "title": top_title(title) | {"font": {"size": sizing.font + 2}},
        "plot_bgcolor": "white",
        "clickmode": "event+select",
        "dragmode": False,
        "showlegend": False,
    }
    return go.Figure(data=traces, layout=layout)


def stat_grid(
    values: np.ndarray,
    shown: np.ndarray,
    hover: Sequence[str],
    *,
    title: str,
    cells: np.ndarray,
    share: bool,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """One statistic, (L, H), as a heatmap with `cells` (L, H strings: the printed values) in the
    cells. share=True: the colour range is [0, 1] (a share of attention); otherwise 0 to the largest
    value. `shown`: bool (L, H), False where the role filter greys a head out; `hover`: L*H texts in
    layer-major order (escaped by the caller where they hold user text)."""
    values = np.asarray(values, dtype=np.float64)
    n_layers, n_heads = values.shape
    top = 1.0 if share else max(float(np.nanmax(values)) if values.size else 1.0, 1e-9)
    base = go.Heatmap(
        z=values,
        x=[str(h + 1) for h in range(n_heads)],
        y=[str(la + 1) for la in range(n_layers)],
        text=np.asarray(cells, dtype=object),
        texttemplate="%{text}",
        textfont={"size": max(sizing.min_number, sizing.font - 2)},
        colorscale=SEQUENTIAL,
        zmin=0.0,
        zmax=top,
        hoverinfo="skip",
        xgap=1,
        ygap=1,
        colorbar={"thickness": 14, "len": 0.9},
        name="value",
    )
    return _figure(base, np.asarray(shown, dtype=bool), hover, title, sizing)


def role_grid(
    roles: np.ndarray,
    shown: np.ndarray,
    hover: Sequence[str],
    *,
    order: Sequence[str],
    cells: dict[str, str],
    colors: dict[str, str],
    title: str,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """The role of each head, (L, H) strings, as a map of flat colours with the role's short name in
    each cell. `order`: every role, in the colour scale's order; `cells`, `colors`: role -> its short
    name and its fill."""
    index = {role: i for i, role in enumerate(order)}
    z = np.vectorize(index.__getitem__, otypes=[float])(roles)
    n = len(order)
    scale = []
    for i, role in enumerate(order):  # a stepped scale: each role one flat colour
        scale += [[i / n, colors[role]], [(i + 1) / n, colors[role]]]
    n_layers, n_heads = roles.shape
    base = go.Heatmap(
        z=z,
        x=[str(h + 1) for h in range(n_heads)],
        y=[str(la + 1) for la in range(n_layers)],
        text=np.vectorize(cells.__getitem__)(roles),
        texttemplate="%{text}",
        textfont={"size": max(sizing.min_number, sizing.font), "color": "#111"},
        colorscale=scale,
        zmin=-0.5,
        zmax=n - 0.5,
        showscale=False,
        hoverinfo="skip",
        xgap=1,
        ygap=1,
        name="role",
    )
    return _figure(base, np.asarray(shown, dtype=bool), hover, title, sizing)
