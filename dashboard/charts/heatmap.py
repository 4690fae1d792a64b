"""The annotated matrix heatmap used by every step of the learn page and the explore head view."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.marks import (  # noqa: F401 (re-exported: views and builders take them from here)
    LABEL_COLOR,
    OUTLINE_COLOR,
    cell_outline,
    legend_below,
    picked_badge,
    row_outline,
)

# Readable on a projector: a sequential scale for probabilities, a diverging one for signed values.
SEQUENTIAL = "Blues"
DIVERGING = "RdBu_r"


# Room for printed numbers, in pixels, for a chart that spans `share` of the page's content width
# (wide layout on a 1280-1400 px screen or projector). Estimates, chosen so 4-decimal numbers never
# spill out of their cells: a character of Plotly's default font is about 0.62 em wide.
PAGE_WIDTH_PX = 820  # content width with the sidebar open, measured in headless chromium at 1280 px
AXIS_TITLE_PX = 25  # a row axis title, drawn sideways
LABEL_CHAR_PX = 7.5  # row labels are drawn at about 12 px
COLORBAR_PX = 90
CHAR_EM = 0.62
MIN_FONT, MAX_FONT = 9, 13
BAR_FONT = 11  # the colour bar stays only while the numbers keep at least this size
# Column labels that do not fit level are slanted at 60° (as the explore page's maps). Plotly prints
# every k-th label of a crowded category axis, at least 1.2 em apart; slanted labels clear each other
# when one em apart across the slant, which at 45° takes 1.41 em along the axis (they overlapped) and
# at 60° 1.15 em.
SLANT_DEGREES = 60
MIN_CELL_EM = 1.15  # a map's column narrower than this (16 px at 14 px type) is too thin to read
COLUMN_GAP_PX = 16  # between st.columns, left out of a chart's share of the page
ROW_FILL = 0.8  # a printed number's font size, at most this share of its row's height


@dataclass(frozen=True)
class Sizing:
    """How big a matrix is drawn: the page's content width and the fonts. The default is the
    laptop's page; PRESENTER is a 1920 px projector with the sidebar folded away, where printed
    numbers are at least 16 px or left out."""

    page_px: int = PAGE_WIDTH_PX
    font: int = 14  # labels and axis titles
    min_number: int = MIN_FONT  # smallest printed cell number; below it, numbers are left out
    max_number: int = MAX_FONT

    @property
    def label_char_px(self) -> float:
        return LABEL_CHAR_PX * self.font / 12  # LABEL_CHAR_PX was measured at 12 px

    @property
    def row_px(self) -> int:
        return round(34 * max(self.font, self.max_number) / 14)


PAGE = Sizing()
PRESENTER = Sizing(page_px=1720, font=20, min_number=16, max_number=24)


def fit_numbers(
    n_cols: int,
    share: float,
    decimals: int,
    label_chars: int = 6,
    row_title: bool = False,
    sizing: Sizing = PAGE,
) -> tuple[int | None, bool]:
    """(font size for the cell numbers or None when they cannot fit, whether to keep the colour bar).
    The colour bar goes before the numbers get small: the printed numbers say more."""
    chars = decimals + 3  # sign, leading digit, point
    room = _cells_room(share, label_chars, row_title, sizing)

    def font(width: float) -> int:
        return min(sizing.max_number, int(width / max(n_cols, 1) / (CHAR_EM * chars)))

    if font(room - COLORBAR_PX) >= max(BAR_FONT, sizing.min_number):
        return font(room - COLORBAR_PX), True
    if font(room) >= sizing.min_number:
        return font(room), False
    return None, True


def _cells_room(share: float, row_label_chars: int, row_title: bool, sizing: Sizing = PAGE) -> float:
    """Pixels across the cells and the colour bar of a chart spanning `share` of the page."""
    labels = sizing.label_char_px * row_label_chars
    return sizing.page_px * share - 30 - labels - (AXIS_TITLE_PX if row_title else 0)


def maps_per_row(
    n_maps: int, row_labels: Sequence[str], n_cols: int, most: int = 4, sizing: Sizing = PAGE
) -> int:
    """How many maps of n_cols columns to set side by side: the most, up to `most`, that leave each
    column MIN_CELL_EM, else one a row. Four maps of 18 letters on a 1280 px screen would each be
    about 75 px wide, their slanted labels on top of one another."""
    chars = max((len(r) for r in number_repeats(row_labels)), default=0)
    for k in range(min(most, n_maps), 1, -1):
        if _cells_room(1 / k, chars, True, sizing) - COLUMN_GAP_PX >= MIN_CELL_EM * sizing.font * n_cols:
            return k
    return 1


def _labels_fit(col_labels: Sequence[str], cells_px: float, char_px: float = LABEL_CHAR_PX) -> bool:
    """Whether the column labels fit side by side, level, above cells spanning cells_px."""
    widest = max((len(c) for c in col_labels), default=0)
    return len(col_labels) <= 10 and (widest + 1) * char_px <= cells_px / max(len(col_labels), 1)


def escape_label(text: str) -> str:
    """Show a token literally in Plotly text, which otherwise reads a few HTML tags and entities (a
    model's own "<s>" would strike through what follows), and in hover templates, where "%{...}" is a
    placeholder (Plotly turns the entities back into text)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("%", "&#37;")


def number_repeats(labels: Iterable[str]) -> list[str]:
    """Plotly merges equal category labels ("the" twice would become one row): repeats are
    numbered, "the", "the (2)"."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        text = str(label)
        seen[text] = seen.get(text, 0) + 1
        out.append(text if seen[text] == 1 else f"{text} ({seen[text]})")
    return out


def top_title(text: str) -> dict:
    """A chart title pinned to the very top of the figure, clear of a column axis drawn on top."""
    return {
        "text": text,
        "font": {"size": 16},
        "y": 1.0,
        "yanchor": "top",
        "yref": "container",
        "pad": {"t": 8},
    }


def matrix_heatmap(
    values: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], **options
) -> go.Figure:
    """A heatmap of a 2-D array with the numbers printed in the cells (options: matrix_heatmap_spec).

    One constructor call: Plotly validates every property it is given, and update_layout /
    update_xaxes each validate and dispatch again (about 5-10 ms a call on a figure with a trace);
    building the figure whole is several times faster, which matters on a page that draws a dozen
    of these per rerun and on a server a classroom shares (bench/classroom.py).
    """
    trace, layout = matrix_heatmap_spec(values, row_labels, col_labels, **options)
    return go.Figure(data=[go.Heatmap(**trace)], layout=layout)


def grid_top_px(sizing: Sizing) -> int:
    """Room above a layers-down grid's cells: its title, then its column axis' title and labels."""
    return 110 + 2 * sizing.font


def scored_grid(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str,
    axes: tuple[str, str],
    bar_title: str,
    scale: dict,
    height: int,
    outlined: Iterable[tuple[int, int]] = (),
    decimals: int = 2,
    share: float = 1.0,
    sizing: Sizing = PAGE,
    show_numbers: bool | None = None,
) -> go.Figure:
    """A grid of one score per cell, layers down (a head's effect, a patch's restored fraction): the
    numbers printed while they fit, a colour bar titled `bar_title`, `outlined` cells (row, column)
    boxed in red with a badge on the corner, short column labels (head numbers) kept level, and room
    under the title for the column axis drawn on top. `scale`: the trace's colour scale (colorscale,
    zmin, zmid, zmax), and its hovertemplate if the default does not suit. Built in one constructor
    call (matrix_heatmap)."""
    outlined = list(outlined)
    trace, layout = matrix_heatmap_spec(
        values, row_labels, col_labels, title=title, row_title=axes[0], col_title=axes[1],
        decimals=decimals, hover_value_name=bar_title, share=share, show_colorbar=True, sizing=sizing,
        shapes=[cell_outline(row, col, width=3) for row, col in outlined], height=height,
        show_numbers=show_numbers,
    )  # fmt: skip
    trace.update(scale, colorbar={"title": {"text": bar_title, "side": "right"}, "thickness": 14})
    if all(len(label) <= 3 for label in col_labels):  # numbers: level, even past ten columns
        layout["xaxis"]["tickangle"] = 0
        layout["height"] = height  # no room kept for slanted labels
    layout["margin"]["t"] = grid_top_px(sizing) - 20
    layout["title"]["font"] = {**layout["title"].get("font", {}), "size": sizing.font + 2}
    _numbers_in_rows(trace, layout, len(row_labels), sizing)
    # a badge on each boxed cell too: a red box on the diverging scale's red end is hard to see
    layout["annotations"] = [picked_badge(row, col) for row, col in outlined]
    return go.Figure(data=[go.Heatmap(**trace)], layout=layout)


def _numbers_in_rows(trace: dict, layout: dict, n_rows: int, sizing: Sizing) -> None:
    """Printed numbers no taller than their rows (a 30-layer grid held to one screen has rows
    shorter than the numbers its columns' width allows): smaller, or left out (hover reads them)."""
    if not trace.get("texttemplate") or not n_rows:
        return
    margin = layout["margin"]
    row_px = (layout["height"] - margin["t"] - margin["b"]) / n_rows
    most = int(ROW_FILL * row_px)
    if most < sizing.min_number:
        trace.update(text=None, texttemplate=None)
    elif trace["textfont"]["size"] > most:
        trace["textfont"] = {**trace["textfont"], "size": most}


def _hover_template(row_title: str, col_title: str, value_name: str, fmt: str) -> str:
    where = f"{row_title or 'row'}: %{{y}}<br>{col_title or 'column'}: %{{x}}<br>"
    return where + f"{value_name}: %{{z:{fmt}}}<extra></extra>"


def matrix_heatmap_spec(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    row_title: str = "",
    col_title: str = "",
    decimals: int = 4,
    show_numbers: bool | None = None,
    probabilities: bool = False,
    height: int | None = None,
    hover_value_name: str = "value",
    share: float = 1.0,
    masked: np.ndarray | None = None,
    shapes: Sequence[dict] = (),
    show_colorbar: bool | None = None,
    sizing: Sizing = PAGE,
) -> tuple[dict, dict]:
    """matrix_heatmap's trace and layout as plain dicts, for a caller that adjusts them first.
    share: the fraction of the page's width the chart gets (1/3 for three side by side); the cell
    numbers get a font that fits, and are left out (hover still shows them) when none does.

    probabilities=True: colour scale fixed to [0, 1]; otherwise a diverging scale centred on 0 (a
    cell's sign is in its printed number and hover, "-0.12", not told by the colour alone).
    show_numbers=None prints numbers while the matrix is small enough to read (<= 24 columns).
    masked: bool array like values, True where a cell is hidden: left blank, reads "−∞", and kept
    out of the colour range. shapes: Plotly layout shapes drawn over the cells.
    show_colorbar=None keeps the colour bar while it leaves the numbers room (always without numbers);
    False leaves it out (charts side by side that share one scale and say so once).
    sizing: the page width and fonts it is drawn for (PAGE, or PRESENTER on a projector).
    Labels are escaped: Plotly renders them as text, never as HTML (from the user or the model).
    """
    values, hidden = _visible(values, masked)
    rows = [escape_label(label) for label in number_repeats(row_labels)]
    cols = [escape_label(label) for label in number_repeats(col_labels)]
    label_chars = max((len(r) for r in rows), default=0)
    font, colorbar = fit_numbers(values.shape[1], share, decimals, label_chars, bool(row_title), sizing)
    if show_numbers is None:
        show_numbers = font is not None and values.shape[0] <= 40
    colorbar = (colorbar or not show_numbers) if show_colorbar is None else show_colorbar
    cells_px = _cells_room(share, label_chars, bool(row_title), sizing) - (COLORBAR_PX if colorbar else 0)
    titles = {"title": title, "row_title": row_title, "col_title": col_title}
    layout = _layout(cols, values.shape[0], cells_px, **titles, height=height, sizing=sizing, shapes=shapes)
    fmt = f".{decimals}f"
    trace = {
        "z": values if hidden is None else np.where(hidden, np.nan, values),
        "x": cols,
        "y": rows,
        "text": _cell_text(values, hidden, fmt) if show_numbers else None,
        "hoverongaps": hidden is None,
        "texttemplate": "%{text}" if show_numbers else None,
        "textfont": {"size": font or sizing.min_number},
        "showscale": colorbar,
        "hovertemplate": _hover_template(row_title, col_title, hover_value_name, fmt),
        "xgap": 1,
        "ygap": 1,
        **_color_range(values, probabilities),
    }
    return trace, layout


def _visible(values: np.ndarray, masked: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """values as a float matrix (a vector becomes one row), hidden cells set to 0 so the colour range
    is the visible cells'; and the hidden cells (True = hidden), or None when none is."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[None, :]
    if masked is None or not np.any(masked):
        return values, None
    hidden = np.broadcast_to(np.asarray(masked, dtype=bool), values.shape)
    return np.where(hidden, 0.0, values), hidden


def _color_range(values: np.ndarray, probabilities: bool) -> dict:
    """Probabilities on a fixed [0, 1] sequential scale; anything else on a diverging scale
    centred on 0 and symmetric around it."""
    if probabilities:
        return {"colorscale": SEQUENTIAL, "zmin": 0.0, "zmax": 1.0}
    bound = (float(np.max(np.abs(values))) if values.size else 1.0) or 1.0
    return {"colorscale": DIVERGING, "zmid": 0.0, "zmin": -bound, "zmax": bound}


def _cell_text(values: np.ndarray, hidden: np.ndarray | None, fmt: str) -> np.ndarray:
    """The printed numbers; a hidden (masked) cell reads "−∞"."""
    text = np.vectorize(lambda v: format(v, fmt))(values).astype(object)
    return text if hidden is None else np.where(hidden, "−∞", text)


def _layout(
    cols: Sequence[str],
    n_rows: int,
    cells_px: float,
    *,
    title: str,
    row_title: str,
    col_title: str,
    height,
    sizing: Sizing = PAGE,
    shapes: Sequence[dict] = (),
) -> dict:
    """Size, margins, axes and title of a matrix heatmap whose column axis is drawn on top, and its
    shapes; one with showlegend (marks.gold_outlines) is named in a legend under the chart."""
    level = _labels_fit(cols, cells_px, sizing.label_char_px)
    # slanted column labels stand taller: room for them above the cells (sin 60° of their width);
    # the last one leans out to the right of the cells (cos 60°): room for it, or it is clipped
    rise, lean = math.sin(math.radians(SLANT_DEGREES)), math.cos(math.radians(SLANT_DEGREES))
    slant_px = 0 if level else int(rise * sizing.label_char_px * max((len(c) for c in cols), default=0))
    lean_px = 0 if level else int(lean * sizing.label_char_px * len(cols[-1]))
    # set in full: an axis' tickfont given only a colour falls back to Plotly's 12 px, not the layout's
    dark = {"color": LABEL_COLOR, "size": sizing.font}
    layout = {
        "height": (height or max(160, min(720, 60 + sizing.row_px * n_rows))) + slant_px,
        "margin": {"l": 10, "r": max(10, lean_px), "t": 40 if title else 10, "b": 10},
        "font": {"size": sizing.font, **dark},
        "xaxis": {
            "title": {"text": col_title, "font": dark},
            "side": "top",
            "type": "category",
            "tickangle": 0 if level else -SLANT_DEGREES,
            "tickfont": dark,
        },
        "yaxis": {
            "title": {"text": row_title, "font": dark},
            "autorange": "reversed",
            "type": "category",
            "tickfont": dark,
        },
    }
    # The column axis is on top; on a narrow chart its title would run into the chart's title,
    # so then the chart's title goes to the very top with room made under it.
    if title:
        layout["title"] = top_title(title) if col_title else {"text": title, "font": {"size": 16}}
    else:
        layout["title"] = {}
        layout["margin"]["t"] = 88 + slant_px
        layout["height"] += 40
    layout["shapes"] = list(shapes)
    if any(shape.get("showlegend") for shape in shapes):
        legend_below(layout)
    return layout
