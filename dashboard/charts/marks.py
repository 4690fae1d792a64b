"""Cues that tell a mark apart without its colour (WCAG 2.1, 1.4.1 Use of Color): a reader who sees red
and green alike (about 1 man in 12), or a grey projector, still finds the picked cell, the gold
alignment, each head's line and the sign of a number. tests/dashboard/test_colour_vision.py checks
the colours under simulated colour-vision deficiency; tests/dashboard/test_colour_cues.py that these
cues are in the figures.
"""

from __future__ import annotations

from collections.abc import Iterable

OUTLINE_COLOR = "#d62728"  # a cell singled out: a flagged number, or the pair the user picked
LABEL_COLOR = "#111111"  # token labels and axis titles dark: readable from the back of a room
GOLD_NAME = "gold alignment (dashed boxes)"
GOLD_DASH = "dash"  # a picked cell's box is solid: the dash tells the two apart
# Lines of heads drawn together (the lines view): a dash each, so two heads whose colours merge
# under deuteranopia or protanopia (Dark24's red and ochre, its green and orange) never share one.
# Short gaps: a head drawn alone (the view's default) keeps most of its ink.
_SOLID, _LONG, _SHORT, _DASH_DOT, _LONGER, _DOTS = (
    "solid", "12px,3px", "5px,3px", "12px,3px,3px,3px", "22px,4px", "3px,3px",
)  # fmt: skip
HEAD_DASHES = (
    _SOLID, _LONG, _SHORT, _DASH_DOT, _LONGER, _DOTS,
    _SOLID, _LONG, _DOTS, _DASH_DOT, _LONGER, _SHORT,
)  # fmt: skip
# Curves of heads over training steps: a marker symbol each (the dash already tells the layer).
HEAD_SYMBOLS = (
    "circle", "square", "diamond", "triangle-up", "x", "cross",
    "triangle-down", "star", "pentagon", "hexagon", "triangle-left", "triangle-right",
)  # fmt: skip
# Curves of one chart (the cost page's): a dash and a symbol each, as well as a colour.
CURVE_STYLES = (("solid", "circle"), ("dash", "square"), ("dot", "diamond"), ("dashdot", "triangle-up"))


def _box(x0: float, x1: float, y0: float, y1: float, width: int) -> dict:
    """A Plotly layout shape: an empty red rectangle in a category heatmap's cell coordinates."""
    return {
        "type": "rect",
        "xref": "x",
        "yref": "y",
        "x0": x0,
        "x1": x1,
        "y0": y0,
        "y1": y1,
        "line": {"color": OUTLINE_COLOR, "width": width},
        "fillcolor": "rgba(0,0,0,0)",
    }


def cell_outline(row: int, col: int, width: int = 4) -> dict:
    """A red box around one cell of a category heatmap."""
    return _box(col - 0.5, col + 0.5, row - 0.5, row + 0.5, width)


def row_outline(row: int, n_cols: int, width: int = 3) -> dict:
    """A red box around one whole row (of n_cols cells) of a category heatmap."""
    return _box(-0.5, n_cols - 0.5, row - 0.5, row + 0.5, width)


def head_dash(head: int) -> str:
    return HEAD_DASHES[head % len(HEAD_DASHES)]


def head_symbol(head: int) -> str:
    return HEAD_SYMBOLS[head % len(HEAD_SYMBOLS)]


def gold_outlines(
    links: Iterable[tuple[int, int]], width: int = 3, axes: tuple[str, str] = ("x", "y")
) -> list[dict]:
    """The gold alignment's cells (row, column) boxed with a dashed line, the first box named in the
    legend (matrix_heatmap puts a legend of shapes under the chart). `axes`: a subplot's x, y refs."""
    shapes = []
    for row, col in links:
        box = cell_outline(row, col, width) | {"xref": axes[0], "yref": axes[1]}
        box["line"] = {"color": OUTLINE_COLOR, "width": width, "dash": GOLD_DASH}
        shapes.append(box | {"name": GOLD_NAME, "legendgroup": "gold", "showlegend": not shapes})
    return shapes


def picked_badge(row: int, col: int, size: int = 12) -> dict:
    """A Plotly annotation on a picked cell's top-left corner, a dark ring on white: with the red box,
    a second cue that reads on a pale cell and a dark one, in any colour vision."""
    return {
        "x": col - 0.5,
        "y": row - 0.5,
        "xref": "x",
        "yref": "y",
        "text": "◉",
        "showarrow": False,
        "font": {"size": size, "color": LABEL_COLOR},
        "bgcolor": "white",
        "bordercolor": LABEL_COLOR,
        "borderwidth": 1,
        "borderpad": 0,
        "name": "picked",
    }


def legend_below(layout: dict, room: int = 34) -> None:
    """A legend of shapes (the gold alignment) moved under the chart, clear of the colour bar."""
    layout["legend"] = {"orientation": "h", "x": 0, "xanchor": "left", "y": 0, "yanchor": "bottom"}
    layout["legend"] |= {"yref": "container", "font": {"size": 13, "color": LABEL_COLOR}}
    layout["margin"] = {**layout.get("margin", {}), "b": layout.get("margin", {}).get("b", 10) + room}
    layout["showlegend"] = True
    if layout.get("height"):
        layout["height"] += room
