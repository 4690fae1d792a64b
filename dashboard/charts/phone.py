"""A figure fitted to a narrow screen (a phone, a tablet): pure, no Streamlit (issue 50).

The charts are built for a laptop or a projector. On a phone a head view of 17 tokens squeezed
into 358 px had cells 8 px wide, its numbers printed over one another and its colour bar taking a
third of the width. `fit_figure` returns the same figure with, for its heatmaps:

- cells at least MIN_CELL_PX wide: `min_width`, the width the chart needs for that, which the
  caller gives the chart's own box (it scrolls sideways inside it, never the page);
- the colour bar horizontal, below the cells, so the cells keep the width;
- the numbers printed only where they fit, in a font that fits (hover still reads every number);
- a title too long for the screen broken over lines instead of cut off.

Sizes are estimates from the figure's own fonts (a character of Plotly's default font is about
0.6 em wide), kept on the safe side: CELL_GOAL_PX leaves room for a misjudged margin.
Letters: C columns of a heatmap, P the plot area's width in pixels.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

MIN_CELL_PX = 14  # issue 50: a cell narrower than this cannot be read or tapped
CELL_GOAL_PX = 16  # what the width is planned for: a margin misjudged by a few pixels keeps 14
MAX_PLOT_PX = 1600  # beyond this (over 100 columns) a sideways scroll is no way to read: left as drawn
CHAR_EM = 0.62  # a digit's width in Plotly's default font, in em (as dashboard.charts.heatmap)
LABEL_EM = 0.6  # a token label's average character, in em
LEVEL_MIN_FONT = 11  # column labels kept level in a smaller font down to this, before they are turned
MIN_NUMBER_FONT = 9  # smallest printed cell number (as dashboard.charts.heatmap.MIN_FONT)
NUMBER_PAD_PX = 4  # room around a printed number inside its cell
SUBPLOT_MIN_PX = 240  # a phone's least width for each of a figure's plots set side by side
BAR_LEN_PX = 240  # its length: in view at the left of a chart that scrolls
BAR_PX = 64  # a horizontal colour bar below the cells: its title, bar and tick labels
PLOTLY_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}  # plotly.js's defaults, where a figure sets none


@dataclass(frozen=True)
class Screen:
    """A class of narrow screens and the content width its charts are planned for, in CSS pixels: a
    common screen of the class. Cells and printed numbers keep their width on a narrower one too
    (the chart's least width): its chart scrolls sideways in its box."""

    name: str
    content_px: int
    stacks: bool  # Streamlit stacks columns (below 640 px): every chart spans the screen's width


# Streamlit pads its main area 16 px each side on a narrow screen (and stacks columns below 640 px).
PHONE = Screen("phone", 360 - 32, stacks=True)  # a small Android phone (an iPhone is 375-430 px wide)
TABLET = Screen("tablet", 768 - 32, stacks=False)  # an iPad held upright
SCREENS = {s.name: s for s in (PHONE, TABLET)}


@dataclass(frozen=True)
class Fit:
    """The fitted figure, and the chart's least width in pixels (None: no least width)."""

    figure: go.Figure
    min_width: int | None = None


def fit_figure(fig: go.Figure, screen: Screen | None) -> Fit:
    """`fig` as `screen` should draw it; unchanged (the same object) for a wide screen (None), or for a
    figure with no heatmap, no legend at its right and a title that fits."""
    if screen is None:
        return Fit(fig)
    maps = [t for t in fig.data if t.type == "heatmap"]
    title, legend = _title_lines(fig, screen), _legend_at_right(fig)
    if not maps and title is None and not legend and _plots_side_by_side(fig) < 2:
        return Fit(fig)
    fig = go.Figure(fig)  # a copy: a figure may be cached and shared with a wide screen's session
    if title is not None:
        _set_title(fig, title)
    if legend:
        _legend_below(fig, screen)
    maps = [t for t in fig.data if t.type == "heatmap"]
    if not maps:
        beside = _plots_side_by_side(fig)  # on a phone, each at least SUBPLOT_MIN_PX wide
        least = beside * SUBPLOT_MIN_PX + PLOTLY_MARGIN["l"] if beside > 1 and screen.stacks else None
        return Fit(fig, least)
    left, right = _side_px(fig, maps)
    plot_px = max(_plot_px_needed(fig, t, screen, left + right) for t in maps)
    if plot_px > MAX_PLOT_PX:  # a grid of many maps, or hundreds of tokens: no scrolling strip
        _bar_below(fig, maps, screen.content_px - left - right)
        return Fit(fig)
    # level labels only where they fit: in the cells the planned screen gives a chart spanning it (a
    # phone's), else in the least cells (a tablet's chart may stand in a narrow column)
    cells_px = max(plot_px, screen.content_px - left - right) if screen.stacks else plot_px
    for trace in maps:
        _turn_column_labels(fig, trace, cells_px)
    _bar_below(fig, maps, cells_px)
    # always given: a least width (the chart still spans a wider box), and a chart in one of a
    # tablet's columns may have far less than the screen's width
    return Fit(fig, math.ceil(left + plot_px + right))


# ---- cells and their numbers -----------------------------------------------------------------------


def columns(trace) -> int:
    """How many columns a heatmap draws: its x labels, else its z's."""
    if trace.x is not None and len(trace.x):
        return len(trace.x)
    z = np.asarray(trace.z if trace.z is not None else [[]], dtype=object)
    return int(z.shape[-1]) if z.ndim == 2 else int(z.size)


def _share(fig: go.Figure, trace) -> float:
    """The share of the plot area's width that a heatmap's x axis spans (1 without subplots)."""
    name = "xaxis" + (trace.xaxis or "x")[1:]
    domain = fig.layout[name].domain if name in fig.layout else None
    return float(domain[1] - domain[0]) if domain else 1.0


def _plot_px_needed(fig: go.Figure, trace, screen: Screen, sides_px: float) -> float:
    """The plot area's width this heatmap needs: CELL_GOAL_PX a column, or more for the numbers it
    keeps (printed, smaller if need be, where they fit on the planned screen)."""
    n, share = max(columns(trace), 1), _share(fig, trace)
    cell_px = CELL_GOAL_PX
    chars = _number_chars(trace)
    if chars:
        room = (screen.content_px - sides_px) * share / n - NUMBER_PAD_PX  # on the planned screen
        size = trace.textfont.size or fig.layout.font.size or 12
        font = min(size, int(room / (CHAR_EM * chars)))
        if font >= MIN_NUMBER_FONT:
            trace.textfont.size = font
            cell_px = max(cell_px, CHAR_EM * chars * font + NUMBER_PAD_PX)
        else:  # no font fits: no numbers (hover reads them)
            trace.update(text=None, texttemplate=None)
    return n * cell_px / share


_Z_FORMAT = re.compile(r"%\{z:([^}]*)\}")


def _number_chars(trace) -> int:
    """The widest number a heatmap prints in a cell, in characters (0: it prints none)."""
    template = trace.texttemplate
    if not template:
        return 0
    if "%{text}" in template:
        text = np.asarray(trace.text if trace.text is not None else [], dtype=object).ravel()
        return max((len(html.unescape(str(t))) for t in text if t is not None), default=0)
    match = _Z_FORMAT.search(template)
    z = np.asarray(trace.z, dtype=float)
    if match is None or not np.isfinite(z).any():
        return 4
    fmt = match.group(1).replace("~", "")
    widest = max(abs(np.nanmin(z)), abs(np.nanmax(z)))
    try:
        return len(format(-widest, fmt)) + len(_Z_FORMAT.sub("", template))
    except ValueError:  # a d3 format Python does not read
        return 6


# ---- margins, colour bar, title --------------------------------------------------------------------


def _tick_px(fig: go.Figure, axis: str) -> float:
    ax = fig.layout[axis]
    return ax.tickfont.size or fig.layout.font.size or 12


def _label_chars(labels) -> int:
    if labels is None:
        return 2
    return max((len(html.unescape(str(label))) for label in labels), default=0)


def _side_px(fig: go.Figure, maps: list) -> tuple[float, float]:
    """Estimated pixels left of the cells (row labels, the row axis' title) and right of them (the
    last slanted column label leaning out), never less than the figure's own margins."""
    margin = fig.layout.margin
    first = min(maps, key=lambda t: _share_start(fig, t))
    y_axis = "yaxis" + (first.yaxis or "y")[1:]
    font = _tick_px(fig, y_axis)
    left = _label_chars(first.y) * LABEL_EM * font + 8
    if fig.layout[y_axis].title.text:
        left += 1.6 * font
    right = 0.0
    last = max(maps, key=lambda t: _share_start(fig, t))
    x_axis = "xaxis" + (last.xaxis or "x")[1:]
    angle = fig.layout[x_axis].tickangle
    if angle not in (None, "auto", 0) and last.x is not None and len(last.x):
        lean = abs(math.cos(math.radians(float(angle))))
        right = lean * len(html.unescape(str(last.x[-1]))) * LABEL_EM * _tick_px(fig, x_axis)
    ml = PLOTLY_MARGIN["l"] if margin.l is None else margin.l
    mr = PLOTLY_MARGIN["r"] if margin.r is None else margin.r
    return max(ml, left), max(mr, right)


def _share_start(fig: go.Figure, trace) -> float:
    name = "xaxis" + (trace.xaxis or "x")[1:]
    domain = fig.layout[name].domain if name in fig.layout else None
    return float(domain[0]) if domain else 0.0


def _turn_column_labels(fig: go.Figure, trace, plot_px: float) -> None:
    """Every column labelled, turned upright when the labels do not fit level: Plotly otherwise
    prints only every other label of a crowded axis (and slanted ones need more room than a cell).
    A font a little smaller than the cell when the cell is narrow."""
    x_axis = "xaxis" + (trace.xaxis or "x")[1:]
    ax = fig.layout[x_axis]
    if ax.tickvals is not None or trace.x is None or not len(trace.x):
        return
    n = columns(trace)
    cell_px = plot_px * _share(fig, trace) / n
    font = _tick_px(fig, x_axis)
    level_font = int(cell_px / ((_label_chars(trace.x) + 1) * LABEL_EM))  # the largest that fits level
    level = level_font >= min(font, LEVEL_MIN_FONT)
    ax.update(tickmode="linear", tick0=0, dtick=1, tickangle=0 if level else -90)
    if level and level_font < font:
        ax.tickfont.size = level_font
    elif not level and cell_px < 1.25 * font:
        ax.tickfont.size = max(10, int(cell_px / 1.25))


def _bar_below(fig: go.Figure, maps: list, plot_px: float) -> None:
    """The one colour bar, horizontal under the cells, from their left edge (a vertical one takes
    a third of a phone's width); the figure grows by the bar's height, so the cells keep theirs."""
    shown = [t for t in maps if t.showscale is not False and not t.coloraxis]
    if len(shown) != 1:
        return
    title = shown[0].colorbar.title
    title_px = 1.5 * ((title.font.size if title.font else None) or 14) if title.text else 0
    below_px = 12 + title_px + max(_bottom_axis_px(fig, t) for t in maps)  # under the lowest maps' axis
    height = fig.layout.height or 450
    margin = fig.layout.margin
    plot_h = height - (PLOTLY_MARGIN["t"] if margin.t is None else margin.t) - (margin.b or 0)
    shown[0].colorbar.update(
        orientation="h",
        x=0,
        xanchor="left",
        xref="paper",
        y=-below_px / max(plot_h, 1),
        yanchor="top",
        yref="paper",
        len=min(plot_px, BAR_LEN_PX),
        lenmode="pixels",
        thickness=12,
        title={"side": "top", "text": title.text, "font": title.font},
    )
    fig.layout.height = height + BAR_PX + (title_px if below_px > 12 + title_px else 0)


def _bottom_axis_px(fig: go.Figure, trace) -> float:
    """The height of a column axis drawn under the cells (0 when it is drawn on top)."""
    return _axis_below_px(fig, "xaxis" + (trace.xaxis or "x")[1:], trace.x)


def _axis_below_px(fig: go.Figure, x_axis: str, labels=None) -> float:
    """The height of an x axis drawn under its plot: its labels (turned ones rise) and its title."""
    ax = fig.layout[x_axis]
    if ax.side == "top" or ax.showticklabels is False or ax.visible is False:
        return 0.0
    font = _tick_px(fig, x_axis)
    angle = ax.tickangle if ax.tickangle not in (None, "auto") else 0
    rise = abs(math.sin(math.radians(float(angle)))) * _label_chars(labels) * LABEL_EM * font
    return max(1.5 * font, rise + 6) + (2.2 * font if ax.title.text else 0)


def _title_lines(fig: go.Figure, screen: Screen) -> list[str] | None:
    """The title broken into lines that fit the planned screen; None when it fits whole
    (or holds markup, which a break could cut)."""
    text = fig.layout.title.text
    if not text or "<" in text:
        return None
    size = fig.layout.title.font.size or 17
    per_line = max(12, int(screen.content_px / (LABEL_EM * size)))
    if len(html.unescape(text)) <= per_line:
        return None
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(html.unescape(f"{line} {word}")) > per_line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


def _set_title(fig: go.Figure, lines: list[str]) -> None:
    """The title over `lines`; the top margin and the height grow by the added lines."""
    size = fig.layout.title.font.size or 17
    extra = round((len(lines) - 1) * 1.3 * size)
    margin = fig.layout.margin
    fig.layout.title.update(text="<br>".join(lines), y=1.0, yref="container", yanchor="top")
    # Plotly centres the added lines on where one line would stand: half of them rise past the top
    fig.layout.title.pad.t = (fig.layout.title.pad.t or 8) + round((len(lines) - 1) * 0.7 * size)
    fig.layout.margin.t = (PLOTLY_MARGIN["t"] if margin.t is None else margin.t) + extra
    fig.layout.height = (fig.layout.height or 450) + extra


def _legend_at_right(fig: go.Figure) -> bool:
    """Whether Plotly draws a legend in its default place, a column at the right of the plot."""
    named = [t for t in fig.data if t.showlegend is not False and t.name]
    shown = fig.layout.showlegend if fig.layout.showlegend is not None else len(named) > 1
    legend = fig.layout.legend
    return bool(shown and named) and legend.orientation != "h" and (legend.x is None or legend.x >= 1)


def _legend_below(fig: go.Figure, screen: Screen) -> None:
    """The legend in rows under the plot, from its left edge (at the right it takes a third of a
    phone's width); the figure grows by its rows, so the plot keeps its height."""
    named = [t for t in fig.data if t.showlegend is not False and t.name]
    font = fig.layout.legend.font.size or fig.layout.font.size or 12
    widest = max(len(html.unescape(str(t.name))) for t in named) * LABEL_EM * font + 48  # + the line's sample
    rows = math.ceil(len(named) / max(1, int(screen.content_px // widest)))
    below_px = 8 + max(
        (_axis_below_px(fig, name) for name in fig.layout if name.startswith("xaxis")), default=0
    )
    height = fig.layout.height or 450
    margin = fig.layout.margin
    plot_h = height - (PLOTLY_MARGIN["t"] if margin.t is None else margin.t) - (margin.b or 0)
    fig.layout.legend.update(
        orientation="h", x=0, xanchor="left", y=-below_px / max(plot_h, 1), yanchor="top"
    )
    fig.layout.height = height + rows * round(1.6 * font) + 8


def _plots_side_by_side(fig: go.Figure) -> int:
    """How many plots a figure sets side by side (its x axes' distinct spans; 1 without subplots)."""
    spans = {
        tuple(round(d, 3) for d in axis["domain"])
        for name, axis in fig.layout.to_plotly_json().items()
        if name.startswith("xaxis")
        and isinstance(axis, dict)
        and axis.get("domain") is not None
        and axis.get("visible") is not False
    }
    return len(spans) or 1
