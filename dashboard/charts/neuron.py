"""Figure builders for the neuron view (where one attention weight comes from): the head map's click
targets, q_i and k_j with their elementwise products, and query i's row before and after the
softmax. Arrays in (a core.measures.neuron.CellArithmetic), go.Figure out; no Streamlit, no attention math.

Token labels are escaped (dashboard.charts.explore.escape_label): Plotly reads a few HTML tags.
Reference: bertviz's neuron view (Vig 2019), which draws q, k, q×k and the scores of one query.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.measures.neuron import CellArithmetic
from dashboard.charts.explore import FONT, escape_label, unique_labels
from dashboard.charts.heatmap import DIVERGING, LABEL_COLOR, OUTLINE_COLOR

PICKED = OUTLINE_COLOR  # the chosen key j, red as the head map's box around the chosen cell
TOP = "#08519c"  # the largest products
REST = "#c6dbef"  # every other bar
MAX_CLICK_CELLS = 64 * 64  # above this, one invisible point per cell costs the browser too much

__all__ = ["MAX_CLICK_CELLS", "add_cell_targets", "row_figure", "vectors_figure"]


def add_cell_targets(
    fig: go.Figure,
    matrix: np.ndarray,
    labels: Sequence[str],
    hint: str = "click: where this weight comes from",
) -> bool:
    """Make each cell of a head heatmap (built by charts.explore.head_heatmap on `labels`) clickable:
    one invisible point per cell, which Streamlit reports as a selection (a heatmap cell is not
    selectable in Plotly). The points repeat the map's hover text (Plotly shows the nearest point's
    over the heatmap's, which stays for the gaps) with `hint` below it (plain text: it is not
    escaped), and carry customdata [row, col, value]. Returns
    False, changing nothing, when the map is too large for one point per cell."""
    z = np.asarray(matrix, dtype=np.float32)
    w = z.shape[0]
    if w * w > MAX_CLICK_CELLS:
        return False
    names = unique_labels(labels)
    rows, cols = np.meshgrid(np.arange(w), np.arange(w), indexing="ij")
    height = fig.layout.height or 600
    cell_px = max(6, min(40, int((height - 160) / max(w, 1))))  # about a cell: the whole cell clicks
    heatmap = next(iter(fig.select_traces({"type": "heatmap"})))
    # the map's own hover text (weights, or another measure) with the cell's value from customdata
    hover = (heatmap.hovertemplate or "%{z:.4f}<extra></extra>").replace("%{z", "%{customdata[2]")
    hover = hover.replace("<extra></extra>", f"<br><i>{hint}</i><extra></extra>")
    fig.add_trace(
        go.Scatter(
            x=np.asarray(names)[cols.ravel()],  # NumPy arrays: validated and sent fast (64² points)
            y=np.asarray(names)[rows.ravel()],
            mode="markers",
            marker={"size": cell_px, "color": "rgba(0,0,0,0)", "symbol": "square"},
            selected={"marker": {"opacity": 0}},
            unselected={"marker": {"opacity": 0}},
            customdata=np.stack([rows.ravel(), cols.ravel(), z.ravel()], axis=1).astype(np.float32),
            hovertemplate=hover,
            hoverlabel={"bgcolor": "white", "bordercolor": "#888", "font": {"color": "#222"}},
            showlegend=False,
            name="cells",
        )
    )
    fig.update_layout(clickmode="event+select", dragmode=False)
    return True


def _font(big: bool) -> dict:
    return {**FONT, "size": 20 if big else 14}


def _two_panels(big: bool, top_share: float, gap: float, x_axis: dict, y_top: dict, y_bottom: dict) -> dict:
    """A layout of two panels sharing one x axis (the bottom one's), as one dict: make_subplots and
    update_*axes validate the figure again at each call, which cost about 100 ms a chart here."""
    text = {"tickfont": _font(big), "title_font": _font(big)}
    split = 1 - top_share
    return {
        "xaxis": {**text, **x_axis, "anchor": "y"},  # the bottom panel's, with the ticks and title
        "xaxis2": {**text, **x_axis, "matches": "x", "anchor": "y2", "showticklabels": False, "title": None},
        "yaxis": {**text, **y_bottom, "domain": [0, split - gap / 2]},
        "yaxis2": {**text, **y_top, "domain": [split + gap / 2, 1]},
        "font": _font(big),
    }


def vectors_figure(cell: CellArithmetic, query_label: str, key_label: str, *, big: bool = False) -> go.Figure:
    """q_i and k_j over the head's d_k dimensions (a two-row strip, blue < 0 < red) above their
    elementwise products q_i ⊙ k_j (bars; the `len(cell.top)` largest |products| dark, their values
    printed). The bars add up to the score."""
    dims = np.arange(1, cell.d_k + 1)
    q_name, k_name = f"q  ({escape_label(query_label)})", f"k  ({escape_label(key_label)})"
    strip = np.stack([cell.q, cell.k]).astype(np.float32)  # (2, d_k)
    bound = float(np.abs(strip).max()) or 1.0
    is_top = np.zeros(cell.d_k, dtype=bool)
    is_top[cell.top] = True
    text = np.where(is_top, np.char.mod("%.2f", cell.products.astype(np.float64)), "")
    strip_trace = go.Heatmap(
        z=strip,
        x=dims,
        y=[q_name, k_name],
        xaxis="x2",
        yaxis="y2",
        zmin=-bound,
        zmax=bound,
        colorscale=DIVERGING,
        showscale=False,
        xgap=1,
        ygap=2,
        hovertemplate="%{y}<br>dimension %{x}: %{z:.4f}<extra></extra>",
    )
    bars = go.Bar(
        x=dims,
        y=cell.products.astype(np.float32),
        marker={"color": np.where(is_top, TOP, REST)},
        text=text,
        textposition="outside",
        textfont={"size": 18 if big else 12, "color": LABEL_COLOR},
        cliponaxis=False,
        customdata=np.stack([cell.q, cell.k], axis=1).astype(np.float32),
        hovertemplate="dimension %{x}<br>q = %{customdata[0]:.4f}<br>k = %{customdata[1]:.4f}<br>"
        "q × k = %{y:.4f}<extra></extra>",
        showlegend=False,
    )
    x_axis = {
        "title": {"text": f"dimension of the head (1–{cell.d_k})"},
        "dtick": 1 if cell.d_k <= 32 and not big else 4,
        "tick0": 1,
        "showgrid": False,
    }
    y_bottom = {"title": {"text": "q × k"}, "zeroline": True, "zerolinecolor": "#888"}
    layout = _two_panels(big, 0.3, 0.08, x_axis, {"autorange": "reversed"}, y_bottom)
    layout |= {
        "height": 580 if big else 420,
        "margin": {"l": 10, "r": 10, "t": 34, "b": 10},  # the top: room for the toolbar above the strip
        "bargap": 0.15,
    }
    return go.Figure([strip_trace, bars], layout)


def row_figure(cell: CellArithmetic, labels: Sequence[str], *, big: bool = False) -> go.Figure:
    """Query i's whole row: the scaled scores s'_i· (step 4) above the weights after the softmax
    (step 5), one bar per key token, key j in red with its numbers printed."""
    names = unique_labels(labels)
    t = len(names)
    picked = np.arange(t) == cell.j
    colors = np.where(picked, PICKED, TOP)
    traces = []
    for axes, values, name in (("y2", cell.scaled_row, "scaled score"), ("y", cell.probs_row, "weight")):
        values = np.asarray(values, dtype=np.float64)
        traces.append(
            go.Bar(
                x=names,
                y=values.astype(np.float32),
                xaxis="x2" if axes == "y2" else "x",
                yaxis=axes,
                marker={"color": colors},
                text=np.where(picked, np.char.mod("%.4f", values), ""),
                textposition="outside",
                textfont={"size": 18 if big else 12, "color": PICKED},
                cliponaxis=False,
                hovertemplate=f"to (key): <b>%{{x}}</b><br>{name}: %{{y:.4f}}<extra></extra>",
                showlegend=False,
            )
        )
    x_axis = {
        "title": {"text": "to (key)"},
        "type": "category",
        "tickangle": 0 if t <= 8 else -60,
        "showgrid": False,
    }
    y_top = {"title": {"text": "s′ = score / √d_k"}, "zeroline": True, "zerolinecolor": "#888"}
    layout = _two_panels(big, 0.5, 0.1, x_axis, y_top, {"title": {"text": "weight"}, "rangemode": "tozero"})
    layout |= {
        "height": (640 if big else 460) + (40 if t > 10 else 0),
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "bargap": 0.2,
    }
    return go.Figure(traces, layout)
