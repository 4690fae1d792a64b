"""The translator's head atlas as one figure: a panel per kind of attention (the encoder's, the
decoder's, the cross-attention), each layers × heads, every cell filled with its head's role colour
and printing the role and its scores. Panels are stacked, each under its title and its row of head
numbers, so one glance reads "cross-attention, layer 2, head 3".

Click targets, as in the atlas' own grids (dashboard/charts/atlas.py): invisible points on each cell
(three across, the cells are wide) whose customdata is [panel, layer, head], 0-indexed, which the page
reads as a selection. Pure Plotly: arrays in, go.Figure out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import LABEL_COLOR, PAGE, Sizing, top_title

POINTS_ACROSS = (-0.3, 0.0, 0.3)  # the click targets' offsets within a cell, in heads


@dataclass(frozen=True)
class Panel:
    title: str  # above the panel (escaped by the caller)
    roles: np.ndarray  # (L, H) role names
    cells: np.ndarray  # (L, H) the text printed in each cell (escaped by the caller)
    hover: Sequence[str]  # L * H texts, layer-major (escaped by the caller)


@dataclass(frozen=True)
class _Rows:
    """Vertical pixel sizes of the figure."""

    cell: int  # a layer's row
    title: int  # a panel's title
    ticks: int  # a panel's head numbers
    gap: int  # between panels
    top: int  # the figure's title

    @classmethod
    def of(cls, sizing: Sizing) -> _Rows:
        font = sizing.font
        return cls(
            cell=round(4.6 * font), title=round(1.8 * font), ticks=round(2.2 * font), gap=font, top=2 * font
        )


def _scale(order: Sequence[str], colors: dict[str, str]) -> list:
    """A stepped colour scale: role i of `order` is one flat colour over z in [i - 0.5, i + 0.5]."""
    n, scale = len(order), []
    for i, role in enumerate(order):
        scale += [[i / n, colors[role]], [(i + 1) / n, colors[role]]]
    return scale


def _traces(i: int, panel: Panel, order: Sequence[str], colors: dict[str, str], sizing: Sizing) -> list:
    """Panel i's heatmap of roles and its click targets."""
    n_layers, n_heads = panel.roles.shape
    index = {role: k for k, role in enumerate(order)}
    heatmap = go.Heatmap(
        z=np.vectorize(index.__getitem__, otypes=[float])(panel.roles),
        x=list(range(n_heads)),
        y=list(range(n_layers)),
        text=np.asarray(panel.cells, dtype=object),
        texttemplate="%{text}",
        textfont={"size": max(sizing.min_number, sizing.font), "color": "#111"},
        colorscale=_scale(order, colors),
        zmin=-0.5,
        zmax=len(order) - 0.5,
        showscale=False,
        hoverinfo="skip",
        xgap=2,
        ygap=2,
        name="role",
    )
    layers, heads = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    layers, heads = layers.ravel(), heads.ravel()
    points = go.Scatter(
        x=np.concatenate([heads + dx for dx in POINTS_ACROSS]).tolist(),
        y=np.tile(layers, len(POINTS_ACROSS)).tolist(),
        mode="markers",
        marker={"size": _Rows.of(sizing).cell * 0.8, "color": "rgba(0,0,0,0)", "symbol": "square"},
        selected={"marker": {"opacity": 0}},
        unselected={"marker": {"opacity": 0}},
        customdata=[[i, int(la), int(h)] for la, h in zip(layers, heads, strict=True)] * len(POINTS_ACROSS),
        text=list(panel.hover) * len(POINTS_ACROSS),
        hovertemplate="%{text}<extra></extra>",
        hoverlabel={"bgcolor": "white", "bordercolor": "#888", "font": {"color": "#222"}},
        showlegend=False,
        name="heads",
    )
    return [heatmap, points]


def _axes(i: int, shape: tuple[int, int], domain: list[float], sizing: Sizing) -> dict:
    n_layers, n_heads = shape
    dark = {"color": LABEL_COLOR, "size": sizing.font}
    suffix = "" if i == 0 else str(i + 1)
    return {
        f"xaxis{suffix}": {
            "side": "top",
            "tickvals": list(range(n_heads)),
            "ticktext": [f"head {h + 1}" for h in range(n_heads)],
            "range": [-0.5, n_heads - 0.5],
            "tickfont": dark,
            "fixedrange": True,
            "showgrid": False,
            "zeroline": False,
            "anchor": f"y{suffix}",
        },
        f"yaxis{suffix}": {
            "domain": domain,
            "tickvals": list(range(n_layers)),
            "ticktext": [f"layer {la + 1}" for la in range(n_layers)],
            "range": [n_layers - 0.5, -0.5],  # layer 1 on top
            "tickfont": dark,
            "fixedrange": True,
            "showgrid": False,
            "zeroline": False,
            "anchor": f"x{suffix}",
        },
    }


def kinds_grid(
    panels: Sequence[Panel],
    *,
    order: Sequence[str],
    colors: dict[str, str],
    title: str,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """The panels stacked top to bottom. `order`: every role any panel may hold (the colour scale's
    order); `colors`: role -> its fill."""
    rows = _Rows.of(sizing)
    heights = [rows.title + rows.ticks + rows.cell * p.roles.shape[0] for p in panels]
    paper = sum(heights) + rows.gap * (len(panels) - 1)
    layout: dict = {"annotations": []}
    traces, top = [], 0
    for i, (panel, height) in enumerate(zip(panels, heights, strict=True)):
        cells_top = top + rows.title + rows.ticks
        domain = [1 - (top + height) / paper, 1 - cells_top / paper]
        layout |= _axes(i, panel.roles.shape, domain, sizing)
        layout["annotations"].append(
            {
                "text": f"<b>{panel.title}</b>",
                "x": 0,
                "xref": "paper",
                "xanchor": "left",
                "y": 1 - top / paper,
                "yref": "paper",
                "yanchor": "top",
                "showarrow": False,
                "font": {"size": sizing.font + 1, "color": LABEL_COLOR},
            }
        )
        suffix = str(i + 1) if i else ""
        traces += [
            t.update(xaxis=f"x{suffix}", yaxis=f"y{suffix}") for t in _traces(i, panel, order, colors, sizing)
        ]
        top += height + rows.gap
    layout |= {
        "height": paper + rows.top + 10,
        "margin": {"l": 10, "r": 10, "t": rows.top, "b": 10},
        "font": {"size": sizing.font, "color": LABEL_COLOR},
        "title": top_title(title) | {"font": {"size": sizing.font + 2}},
        "plot_bgcolor": "white",
        "clickmode": "event+select",
        "dragmode": False,
        "showlegend": False,
    }
    return go.Figure(data=traces, layout=layout)
