"""Figure builders for the circuit page: the circuit as a graph (layers top to bottom, heads across,
one node per head of the circuit, coloured and shaped by class, edges weighted by the path-patching
effect), the classes beside GPT-2 small's by depth, and the logit differences. Arrays and dicts in,
go.Figure out; no Streamlit. The path-patching grids are dashboard.charts.patching's restored grids,
their blank cells (senders that cannot reach the receivers) left blank.

Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object Identification in GPT-2
small" (arXiv 2211.00593), draw their circuit so: the answer flows down, from the early heads that
find the repeated name to the name movers that write the answer.

What is data and what is drawing: the circuit's heads are one scatter trace per class, on the
figure's visible axes (head across, layer down, both from 1), so the text alternative and the table
of numbers read them (dashboard.chart_text); the faint grid of every other head, the edges, the
picked head's ring and the logits' node are drawing, on axes that are hidden (x2, y2) or shapes.
Letters: L layers, H heads per layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import PAGE, Sizing, escape_label, top_title
from dashboard.charts.marks import LABEL_COLOR, OUTLINE_COLOR
from dashboard.charts.patching import restored_grid

Head = tuple[int, int]  # (layer, head), 0-indexed
EDGE_UP, EDGE_DOWN = "#3b3b3b", "#D55E00"  # an edge that helps the answer / works against it (dashed)
EDGE_FAINT = "#9a9a9a"  # from a head outside the circuit (dotted)
MAX_EDGE_PX = 9.0
MIN_EDGE_PX = 0.8
BOW = 0.25  # how far an edge bows sideways, as a share of its length
MIN_BOUND = 0.1  # a path grid's colour scale reaches at least ±10% of the logit difference


@dataclass(frozen=True)
class Style:
    label: str  # the legend's name: "name movers (3)"
    color: str
    symbol: str  # a Plotly marker symbol: the cue that does not need colour
    minor: bool = False  # heads outside the circuit: smaller, unlabelled


@dataclass(frozen=True)
class Node:
    head: Head
    hover: str  # plain text; escaped here


@dataclass(frozen=True)
class Link:
    sender: Head
    receiver: Head | None  # None: the logits
    value: float  # the sender's restored fraction along this path
    faint: bool = False  # a head outside the circuit (its effect drawn dotted and grey)


@dataclass(frozen=True)
class Look:
    """Sizes for a laptop's page or a projector."""

    font: int = 14
    node: int = 18
    height: int = 640
    labels: bool = True  # "24.4" beside each node (not on a phone: the columns are too narrow)


PAGE_LOOK = Look()
PRESENTER_LOOK = Look(font=20, node=26, height=800)
PHONE_LOOK = Look(font=12, node=14, height=620, labels=False)


def _edge_px(value: float, top: float) -> float:
    return MIN_EDGE_PX + (MAX_EDGE_PX - MIN_EDGE_PX) * min(abs(value) / top, 1.0)


def _curve(x0: float, y0: float, x1: float, y1: float) -> str:
    """An SVG path from (x0, y0) to (x1, y1), bowed sideways by BOW of its length: edges that share a
    column (one head feeding the head below it, past another) do not run on top of each other."""
    cx, cy = (x0 + x1) / 2 + BOW * (y1 - y0) * 0.5, (y0 + y1) / 2 - BOW * (x1 - x0) * 0.5
    return f"M {x0},{y0} Q {cx},{cy} {x1},{y1}"


def _edges(links: Sequence[Link], logits_xy: tuple[float, float], top: float) -> list[dict]:
    """Curves from sender to receiver (shapes: drawing, under the nodes), as wide as the effect; an
    effect against the answer is dashed as well as coloured, one from outside the circuit dotted."""
    shapes = []
    for link in sorted(links, key=lambda k: abs(k.value)):
        x0, y0 = link.sender[1] + 1, link.sender[0] + 1
        x1, y1 = logits_xy if link.receiver is None else (link.receiver[1] + 1, link.receiver[0] + 1)
        down = link.value < 0
        line = {"color": EDGE_DOWN if down else EDGE_UP, "width": _edge_px(link.value, top)}
        line["dash"] = "dash" if down else "solid"
        if link.faint:
            line |= {"color": EDGE_FAINT, "dash": "dot"}
        shapes.append(
            {"type": "path", "xref": "x2", "yref": "y2", "path": _curve(x0, y0, x1, y1),
             "line": line, "layer": "below", "opacity": 0.75}
        )  # fmt: skip
    return shapes


def _drawing(fig: go.Figure, shape: tuple[int, int], classed: set[Head], look: Look) -> None:
    """Every head not in the circuit as a faint dot, for where the circuit sits in the model."""
    n_layers, n_heads = shape
    rest = [(layer, h) for layer in range(n_layers) for h in range(n_heads) if (layer, h) not in classed]
    fig.add_trace(
        go.Scatter(
            x=[h + 1 for _, h in rest], y=[layer + 1 for layer, _ in rest], mode="markers",
            xaxis="x2", yaxis="y2",
            marker={"size": max(4, look.node // 3), "color": "#d0d0d0"}, hoverinfo="skip", showlegend=False,
        )
    )  # fmt: skip


def circuit_graph(
    shape: tuple[int, int],
    nodes: Mapping[str, Sequence[Node]],
    styles: Mapping[str, Style],
    links: Sequence[Link],
    *,
    title: str,
    logits_label: str,
    subtitle: str = "",
    picked: Head | None = None,
    look: Look = PAGE_LOOK,
) -> go.Figure:
    """The circuit: `nodes` by class (each class's `styles`), `links` between heads (or to the logits),
    layer 1 at the top and the logits' node below the last layer. Labels are escaped here."""
    n_layers, n_heads = shape
    fig = go.Figure()
    classed = {n.head for group in nodes.values() for n in group}
    _drawing(fig, shape, classed, look)
    for name, group in nodes.items():
        if not group:
            continue
        style = styles[name]
        labels = look.labels and not style.minor
        fig.add_trace(
            go.Scatter(
                x=[n.head[1] + 1 for n in group], y=[n.head[0] + 1 for n in group],
                mode="markers+text" if labels else "markers", name=escape_label(style.label),
                text=[f"{n.head[0] + 1}.{n.head[1] + 1}" for n in group] if labels else None,
                textposition="middle right", textfont={"size": look.font - 3, "color": LABEL_COLOR},
                marker={"size": round(look.node * (0.7 if style.minor else 1)), "color": style.color,
                        "symbol": style.symbol, "line": {"color": style.color if style.minor else LABEL_COLOR,
                                                         "width": 1.5}},
                customdata=[list(n.head) for n in group],
                hovertext=[escape_label(n.hover).replace("\n", "<br>") for n in group],
                hoverinfo="text",
            )
        )  # fmt: skip
    logits_xy = ((n_heads + 1) / 2, n_layers + 1.6)
    top = max([abs(k.value) for k in links if not k.faint] + [1e-9])  # the circuit's strongest: widest
    heading = escape_label(title) + (
        f"<br><span style='font-weight:normal'>{escape_label(subtitle)}</span>" if subtitle else ""
    )
    _finish(fig, shape, logits_xy, logits_label, look, heading)
    fig.update_layout(shapes=_edges(links, logits_xy, top))
    _marks(fig, logits_xy, picked, look)
    return fig


def _marks(fig: go.Figure, logits_xy: tuple[float, float], picked: Head | None, look: Look) -> None:
    """The logits' node and the picked head's ring (drawing, on the hidden axes)."""
    fig.add_trace(
        go.Scatter(
            x=[logits_xy[0]], y=[logits_xy[1]], mode="markers", xaxis="x2", yaxis="y2", hoverinfo="skip",
            marker={"size": look.node + 6, "symbol": "hexagon", "color": "#ffffff",
                    "line": {"color": LABEL_COLOR, "width": 2.5}}, showlegend=False,
        )
    )  # fmt: skip
    if picked is not None:
        fig.add_trace(
            go.Scatter(
                x=[picked[1] + 1], y=[picked[0] + 1], mode="markers", xaxis="x2", yaxis="y2",
                marker={"size": look.node + 14, "symbol": "circle-open", "color": OUTLINE_COLOR,
                        "line": {"color": OUTLINE_COLOR, "width": 3}}, hoverinfo="skip", showlegend=False,
            )
        )  # fmt: skip


def _finish(
    fig: go.Figure,
    shape: tuple[int, int],
    logits_xy: tuple[float, float],
    logits_label: str,
    look: Look,
    title: str,
) -> None:
    n_layers, n_heads = shape
    x_range, y_range = [0.4, n_heads + 0.9], [logits_xy[1] + 0.9, 0.3]  # y reversed: layer 1 at the top
    step = 1 if n_layers <= 12 else 2 if n_layers <= 24 else 3
    y_ticks = sorted({1, *range(step, n_layers + 1, step), n_layers})
    font = {"size": look.font, "color": LABEL_COLOR}
    axis = {"showgrid": False, "zeroline": False, "tickfont": font, "fixedrange": True}
    fig.update_layout(
        # escaped by circuit_graph; room above for the subtitle's line, which Plotly sets under the title
        title={**top_title(title), "pad": {"t": 16 + look.font}, "font": {"size": look.font + 2}},
        height=look.height,
        margin={"l": 70, "r": 20, "t": 80 + 3 * look.font, "b": 40},
        plot_bgcolor="#ffffff",
        font=font,
        xaxis={**axis, "title": {"text": "head (from 1)", "font": font}, "range": x_range,
               "tickvals": list(range(1, n_heads + 1)), "side": "top"},
        yaxis={**axis, "title": {"text": "layer (from 1)", "font": font}, "range": y_range,
               "tickvals": y_ticks},
        xaxis2={"overlaying": "x", "range": x_range, "visible": False, "fixedrange": True},
        yaxis2={"overlaying": "y", "range": y_range, "visible": False, "fixedrange": True},
        legend={"orientation": "h", "x": 0, "y": -0.02, "yanchor": "top", "font": font},
        annotations=[{"x": logits_xy[0], "y": logits_xy[1], "xref": "x2", "yref": "y2",
                      "text": escape_label(logits_label), "showarrow": False, "xshift": look.node + 8,
                      "xanchor": "left", "font": font}],
        clickmode="event+select",
        hovermode="closest",
        dragmode=False,
    )  # fmt: skip


# ---- the path-patching grids -------------------------------------------------------------------------


def path_grid(
    restored: np.ndarray,
    *,
    title: str,
    axes: tuple[str, str],
    bar_title: str,
    outlined: Sequence[Head] = (),
    sizing: Sizing = PAGE,
    max_height: int = 720,
) -> go.Figure:
    """An (L, H) grid of restored fractions, layers down and heads across (both from 1); a NaN cell (a
    sender at or after its receivers) blank, the colour scale running to its largest share (MIN_BOUND at
    least), so a path's small effects still show."""
    z = np.asarray(restored, np.float64)
    rows = [str(i + 1) for i in range(z.shape[0])]
    cols = [str(i + 1) for i in range(z.shape[1])]
    fig = restored_grid(
        z, rows, cols, title=title, axes=axes, bar_title=bar_title, outlined=outlined, share=0.6,
        sizing=sizing, max_height=max_height,
    )  # fmt: skip
    trace = fig.data[0]
    finite = np.isfinite(z)
    # the colours run to the largest share on the grid (at least MIN_BOUND): a path's effects are often
    # a tenth of the direct one's, and on a scale to 1 they would all look white on a projector
    bound = max(MIN_BOUND, float(np.abs(z[finite]).max()) if finite.any() else 1.0)
    trace.update(zmin=-bound, zmax=bound, hoverongaps=False)
    if trace.text is not None:
        trace.text = np.where(finite, np.asarray(trace.text, dtype=object), "")
    return fig


# ---- beside GPT-2 small ------------------------------------------------------------------------------


def depth_strip(
    classes: Sequence[str],
    depths: Mapping[str, Mapping[str, np.ndarray]],
    styles: Mapping[str, Style],
    *,
    title: str,
    look: Look = PAGE_LOOK,
) -> go.Figure:
    """How far down each class's heads sit (layer / L, 0 to 100%), one row per class, one trace per
    model (`depths`: model name -> class -> depths), the models told apart by fill and symbol."""
    fig = go.Figure()
    fills = ("filled", "open")
    for index, (model, by_class) in enumerate(depths.items()):
        xs, ys, colors = [], [], []
        for name in classes:
            for d in by_class.get(name, ()):
                xs.append(float(d) * 100)
                ys.append(escape_label(styles[name].label))
                colors.append(styles[name].color)
        symbol = "circle" if fills[index % 2] == "filled" else "diamond-open"
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="markers", name=escape_label(model),
                marker={"size": look.node, "color": colors, "symbol": symbol,
                        "line": {"color": colors if index % 2 else LABEL_COLOR,
                                 "width": 2.5 if index % 2 else 1}},
                hovertemplate="%{y}: %{x:.0f}% of the way down<extra>" + escape_label(model) + "</extra>",
            )
        )  # fmt: skip
    font = {"size": look.font, "color": LABEL_COLOR}
    fig.update_layout(
        title={**top_title(escape_label(title)), "font": {"size": look.font + 2}},
        height=min(look.height, 140 + 62 * len(classes)),
        margin={"l": 10, "r": 20, "t": 70, "b": 60},
        font=font,
        xaxis={"title": {"text": "how far down the model (layer ÷ layers, %)"}, "range": [0, 104],
               "tickfont": font, "fixedrange": True},
        yaxis={"title": {"text": "class"}, "categoryorder": "array",
               "categoryarray": [escape_label(styles[n].label) for n in classes], "autorange": "reversed",
               "tickfont": font, "fixedrange": True, "automargin": True},
        legend={"orientation": "h", "x": 0, "y": -0.18, "yanchor": "top", "font": font},
        plot_bgcolor="#ffffff",
    )  # fmt: skip
    fig.update_xaxes(showgrid=True, gridcolor="#e5e5e5")
    return fig


def logit_bars(
    labels: Sequence[str], values: Sequence[float], *, title: str, look: Look = PAGE_LOOK
) -> go.Figure:
    """The mean logit differences side by side (the prompts as written, other names, the circuit alone)."""
    font = {"size": look.font, "color": LABEL_COLOR}
    fig = go.Figure(
        go.Bar(
            x=[escape_label(label) for label in labels], y=list(values),
            text=[f"{v:+.2f}" for v in values], textposition="outside", textfont=font,
            marker={"color": "#0072B2", "pattern": {"shape": ["", "/", "."][: len(values)]}},
            hovertemplate="%{x}: %{y:+.2f}<extra></extra>",
        )
    )  # fmt: skip
    top = max([abs(v) for v in values] + [1.0])
    low = min([*values, 0.0])
    fig.update_layout(
        title={**top_title(escape_label(title)), "font": {"size": look.font + 2}},
        height=min(look.height, 520),
        margin={"l": 70, "r": 20, "t": 70, "b": 40},
        font=font,
        yaxis={"title": {"text": "mean logit difference, logit(IO) − logit(S)"},
               "range": [low - 0.15 * top if low < 0 else 0, 1.2 * top],
               "zeroline": True, "zerolinecolor": LABEL_COLOR, "tickfont": font, "fixedrange": True},
        xaxis={"tickfont": font, "fixedrange": True},
        plot_bgcolor="#ffffff",
    )  # fmt: skip
    return fig
