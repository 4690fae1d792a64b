"""Every chart's text alternative, read from the figure's own data: one sentence that says what the
chart shows and its main finding, and the chart's numbers as tables (issue 50).

The sentence names the chart for a screen reader (dashboard.widgets.chart passes it to
st.plotly_chart's `alt`); the tables are shown on request under the chart (dashboard.chart_access).
A view that already states its finding in words passes that statement too; it is said last, after
what the data shows, so the numbers are always there and the view adds what they mean.

Everything here is plain text: Plotly's labels arrive HTML-escaped (charts.heatmap.escape_label) and
a view's statement arrives as escaped markdown (widgets.md); both are turned back into the text
they show, and whoever draws the text escapes it again for its own element.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

MAX_CELLS = 40  # a matrix's table: at most this many rows and columns (the chart's CSV has all of it)
MAX_POINTS = 200  # a line's table: at most this many points
MAX_TRACES = 6  # the sentence describes this many traces at most, then counts the rest
_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_MARKDOWN = re.compile(r"\\(.)|\*\*|[*`]|(?<![\w\\])_|_(?!\w)")


def plain(text: object) -> str:
    """Plotly text (tags such as <b> and <br>, entities such as &lt;) as the plain text it shows."""
    if text is None:
        return ""
    flat = _TAG.sub("", _BREAK.sub(" ", str(text)))
    return " ".join(html.unescape(flat).split())


def from_markdown(text: object) -> str:
    """A view's statement (markdown, user text escaped with widgets.md) as the plain text it shows."""
    return " ".join(_MARKDOWN.sub(lambda m: m.group(1) or "", str(text or "")).split())


def number(value: float) -> str:
    """A value as a sentence says it: three significant figures, thousands grouped."""
    value = float(value)
    if not np.isfinite(value):
        return "none"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def quoted(label: object) -> str:
    return f"“{label}”"


def describe(fig: go.Figure, finding: str | None = None) -> str:
    """The chart's text alternative: its title, what each trace plots and its main finding read from
    the data, then `finding`: the view's own statement (markdown), when it has one."""
    title = plain(_title(fig.layout))
    traces = [t for t in fig.data if _is_data(t)]
    head = f"Chart: {title}." if title else "Chart."
    body = [_trace_sentence(fig, t, len(traces)) for t in traces[:MAX_TRACES]]
    if not body and not finding:
        body = ["It draws no numbers of its own."]
    if len(traces) > MAX_TRACES:
        body.append(f"And {len(traces) - MAX_TRACES} more series.")
    body.append(from_markdown(finding))
    return " ".join(p for p in [head, *body] if p)


def _is_data(trace) -> bool:
    """A trace that draws numbers: not hidden (nor only in the legend), not a layer of click targets over
    a heatmap (points placed at token labels), not a drawing on hidden axes."""
    kinds = ("heatmap", "bar", "scatter", "scattergl", "image")
    if trace.type not in kinds or trace.visible not in (None, True):
        return False
    if trace.type in ("scatter", "scattergl"):
        return floats(trace.y) is not None and not _drawing(trace)
    return True


def _drawing(trace) -> bool:
    """A scatter trace drawn on hidden axes (the lines view's lines and word labels): geometry, not data."""
    layout = getattr(trace, "_parent", None)
    layout = layout.layout if layout is not None else None
    if layout is None:
        return False
    axes = [layout[f"{letter}axis{(getattr(trace, f'{letter}axis', None) or letter)[1:]}"] for letter in "xy"]
    return all(axis is not None and axis.visible is False for axis in axes)


def floats(values) -> np.ndarray | None:
    """Values as a flat float array (None, a missing value, as NaN); None when they are not numbers."""
    if values is None:
        return np.zeros(0)
    try:
        return np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def _title(layout) -> str:
    title = layout.title
    return (title.text if title is not None else "") or ""


def _axis_titles(fig: go.Figure, trace) -> tuple[str, str]:
    """The plain titles of the x and y axes a trace is drawn on (a subplot's own, e.g. xaxis2)."""
    names = []
    for letter in ("x", "y"):
        ref = getattr(trace, f"{letter}axis", None) or letter
        axis = fig.layout[f"{letter}axis{ref[1:]}"]
        names.append(plain(axis.title.text) if axis is not None and axis.title is not None else "")
    return names[0], names[1]


def _axis(title: str, labels: Sequence[str]) -> str:
    """An axis as the sentence names it: its title, else its first and last labels."""
    if title or not labels:
        return title or "unnamed"
    return quoted(labels[0]) if len(labels) == 1 else f"{quoted(labels[0])} to {quoted(labels[-1])}"


def _labels(values, n: int) -> list[str]:
    """A trace's category labels as plain text (positions from 1 when it has none)."""
    if values is None:
        return [str(i + 1) for i in range(n)]
    return [plain(v) for v in list(values)[:n]] + [str(i + 1) for i in range(len(values), n)]


def _trace_sentence(fig: go.Figure, trace, n_traces: int) -> str:
    x_title, y_title = _axis_titles(fig, trace)
    name = plain(trace.name) if n_traces > 1 and trace.name else ""
    if trace.type == "heatmap":
        return _heatmap_sentence(trace, x_title, y_title, name)
    if trace.type == "bar":
        return _bar_sentence(trace, x_title, y_title, name)
    if trace.type == "image":
        return "An image of small maps, one per head; its numbers are in the charts it opens."
    return _line_sentence(trace, x_title, y_title, name)


def heatmap_values(trace) -> tuple[np.ndarray, list[str], list[str]]:
    """A heatmap trace's (rows, columns) values with its row and column labels, as plain text."""
    z = np.atleast_2d(np.asarray(trace.z, dtype=float)) if trace.z is not None else np.zeros((0, 0))
    return z, _labels(trace.y, z.shape[0]), _labels(trace.x, z.shape[1] if z.ndim == 2 else 0)


def _value_name(trace, fallback: str = "value") -> str:
    bar = trace.colorbar if trace.type == "heatmap" else None
    title = plain(bar.title.text) if bar is not None and bar.title is not None else ""
    return title or fallback


def _heatmap_sentence(trace, x_title: str, y_title: str, name: str) -> str:
    """Rows and columns, then the largest cell (and the smallest, on a scale through zero)."""
    z, rows, cols = heatmap_values(trace)
    head = f"{quoted(name)}: a" if name else "A"
    axes = f"rows {_axis(y_title, rows)}, columns {_axis(x_title, cols)}"
    what = f"{head} heatmap of {len(rows)} × {len(cols)} cells: {axes}."
    if not np.isfinite(z).any():
        return what + " No cell holds a number."
    value = _value_name(trace)
    r, c = np.unravel_index(np.nanargmax(np.where(np.isfinite(z), z, np.nan)), z.shape)
    said = f" The largest {value}, {number(z[r, c])}, is {_cell(rows[r], cols[c], x_title, y_title)}."
    if np.nanmin(z) < 0:
        r2, c2 = np.unravel_index(np.nanargmin(np.where(np.isfinite(z), z, np.nan)), z.shape)
        said += f" The smallest, {number(z[r2, c2])}, is {_cell(rows[r2], cols[c2], x_title, y_title)}."
    return what + said


def _cell(row: str, col: str, x_title: str, y_title: str) -> str:
    """Where a cell is: "from “it” to “trophy”" on an attention map (rows query, columns key)."""
    if y_title.lower().startswith("from") and x_title.lower().startswith("to"):
        return f"from {quoted(row)} to {quoted(col)}"
    return f"at row {quoted(row)}, column {quoted(col)}"


def bar_values(trace) -> tuple[np.ndarray, list[str]]:
    """A bar trace's values and the category each stands for, as plain text."""
    values, labels = (trace.x, trace.y) if trace.orientation == "h" else (trace.y, trace.x)
    numbers = np.asarray(values if values is not None else [], dtype=float).ravel()
    return numbers, _labels(labels, len(numbers))


def _bar_sentence(trace, x_title: str, y_title: str, name: str) -> str:
    values, labels = bar_values(trace)
    value_title, label_title = (x_title, y_title) if trace.orientation == "h" else (y_title, x_title)
    head = f"{quoted(name)}: " if name else ""
    what = f"{head}{len(values)} bars" + (f" of {value_title}" if value_title else "")
    what += f" by {label_title}." if label_title else "."
    if not np.isfinite(values).any():
        return what
    finite = np.where(np.isfinite(values), values, np.nan)
    top, low = int(np.nanargmax(finite)), int(np.nanargmin(finite))
    said = f" The largest is {quoted(labels[top])}, {number(values[top])}"
    if len(values) > 1:
        said += f"; the smallest {quoted(labels[low])}, {number(values[low])}"
    return what + said + "."


def line_values(trace) -> tuple[list[str], np.ndarray]:
    """A scatter trace's x positions (as text) and y values."""
    y = floats(trace.y)
    x = list(trace.x) if trace.x is not None else list(range(1, len(y) + 1))
    return [plain(number(v)) if isinstance(v, (int, float, np.number)) else plain(v) for v in x[: len(y)]], y


def _line_sentence(trace, x_title: str, y_title: str, name: str) -> str:
    """Where a line starts and ends, and its highest and lowest points."""
    xs, y = line_values(trace)
    head = quoted(name) if name else "The line"
    if not np.isfinite(y).any():
        return ""
    ok = np.flatnonzero(np.isfinite(y))
    first, last = int(ok[0]), int(ok[-1])
    at = f" {x_title}" if x_title else ""
    said = f"{head} goes from {number(y[first])} at{at} {xs[first]} to {number(y[last])} at{at} {xs[last]}"
    finite = np.where(np.isfinite(y), y, np.nan)
    top, low = int(np.nanargmax(finite)), int(np.nanargmin(finite))
    if top not in (first, last):
        said += f"; highest {number(y[top])} at{at} {xs[top]}"
    if low not in (first, last):
        said += f"; lowest {number(y[low])} at{at} {xs[low]}"
    return said + "."


def strongest_line(weights: np.ndarray, labels: Sequence[str], heads: Sequence[int]) -> str:
    """The lines view's finding: its strongest line among the heads shown. weights: (heads, W, W)."""
    shown = np.asarray(weights, dtype=float)[list(heads)]
    if not shown.size or not np.isfinite(shown).any():
        return ""
    h, r, c = np.unravel_index(np.nanargmax(np.where(np.isfinite(shown), shown, np.nan)), shown.shape)
    names = [plain(label) for label in labels]
    return (
        f"The strongest line, weight {number(shown[h, r, c])}, goes from {quoted(names[r])} to "
        f"{quoted(names[c])} in head {heads[h] + 1}. Each line joins a token (left) to one it attends to "
        "(right)."
    )


def tables(fig: go.Figure) -> list[tuple[str, pd.DataFrame]]:
    """The chart's numbers as (caption, table) pairs, labels as plain text: one per heatmap, one for
    the bars, one for the lines (one per line when they do not share their x positions)."""
    out: list[tuple[str, pd.DataFrame]] = []
    traces = [t for t in fig.data if _is_data(t) and t.type != "image"]
    for index, trace in enumerate(traces):
        name = plain(trace.name) or f"series {index + 1}"
        if trace.type == "heatmap":
            out.append(_heatmap_table(fig, trace, name if len(traces) > 1 else ""))
        elif trace.type == "bar":
            values, labels = bar_values(trace)
            out.append(("", pd.DataFrame({name: values}, index=_unique(labels))))
        else:
            xs, y = line_values(trace)
            out.append(("", pd.DataFrame({name: y}, index=_unique(xs))))
    return _merged(out)


def _heatmap_table(fig: go.Figure, trace, name: str) -> tuple[str, pd.DataFrame]:
    z, rows, cols = heatmap_values(trace)
    x_title, y_title = _axis_titles(fig, trace)
    shown = z[:MAX_CELLS, :MAX_CELLS]
    table = pd.DataFrame(shown, index=_unique(rows[:MAX_CELLS]), columns=_unique(cols[:MAX_CELLS]))
    axes = "; ".join(f"{what}: {title}" for what, title in (("rows", y_title), ("columns", x_title)) if title)
    parts = [f"{name}:" if name else "", f"{axes}." if axes else ""]
    if z.shape[0] > MAX_CELLS or z.shape[1] > MAX_CELLS:
        parts.append(f"The first {shown.shape[0]} × {shown.shape[1]} of {z.shape[0]} × {z.shape[1]} cells.")
    caption = " ".join(p for p in parts if p)
    caption = caption[:1].upper() + caption[1:]
    return caption, table


def _merged(parts: list[tuple[str, pd.DataFrame]]) -> list[tuple[str, pd.DataFrame]]:
    """Series sharing one index (bars or lines at the same x) side by side in one table; long series
    cut to MAX_POINTS rows, which the caption says."""
    out: list[tuple[str, pd.DataFrame]] = []
    for caption, table in parts:
        last = out[-1][1] if out else None
        if not caption and last is not None and not out[-1][0] and list(last.index) == list(table.index):
            column = (
                table.columns[0]
                if table.columns[0] not in last.columns
                else f"{table.columns[0]} ({len(last.columns) + 1})"
            )
            out[-1] = ("", last.assign(**{column: table.iloc[:, 0].to_numpy()}))
        else:
            out.append((caption, table))
    return [(_cut(caption, table), table.iloc[:MAX_POINTS]) for caption, table in out]


def _cut(caption: str, table: pd.DataFrame) -> str:
    if len(table) <= MAX_POINTS:
        return caption
    return (caption + " " if caption else "") + f"The first {MAX_POINTS} of {len(table)} rows."


def _unique(labels: Sequence[str]) -> list[str]:
    """Labels numbered where they repeat, "the", "the (2)": a table's row and column names must differ."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out
