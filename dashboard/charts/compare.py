"""Figure builders for the compare page: one head's attention on each sentence, and their difference.
Arrays in, go.Figure out (no Streamlit, no attention math).

Letters: T tokens. Attention is [query, key]: rows = the token that attends ("from"), columns = the
token attended to ("to"), as on the explore page's head view. Layers and heads arrive 0-indexed and
are shown from 1. Token labels are escaped (by matrix_heatmap_spec): Plotly reads a few HTML tags in text.
The shared builder (dashboard.charts.heatmap.matrix_heatmap) decides whether cell numbers fit: on a
128-token head none are printed, hover still gives each weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dashboard.charts.heatmap import (
    AXIS_TITLE_PX,
    COLORBAR_PX,
    PAGE,
    Sizing,
    matrix_heatmap_spec,
    row_outline,
    top_title,
)

FROM, TO = "from (query)", "to (key)"


QUIET = 0.05  # printed cell numbers below this size are left blank (hover still gives them)


def _quiet(trace: dict) -> None:
    """Leave small numbers out of the cells: a wall of "0.00" hides the few that matter."""
    if trace["text"] is not None:
        trace["text"] = np.where(np.abs(trace["z"]) >= QUIET, trace["text"], "")


def square_height(n: int, share: float, label_chars: int, colorbar: bool, sizing: Sizing = PAGE) -> int:
    """A height that keeps the cells about square in a chart spanning `share` of the page (rows no
    shorter than the labels need, no taller than the shared builder's rows)."""
    cells = sizing.page_px * share - 30 - sizing.label_char_px * label_chars - AXIS_TITLE_PX
    cells -= COLORBAR_PX if colorbar else 0
    row = min(max(cells / max(n, 1), 1.6 * sizing.font), sizing.row_px)
    return int(60 + row * n)


def _titled(layout: dict, title: str, sizing: Sizing = PAGE) -> None:
    """The title pinned at the top, in room of its own above the column axis (its title and tick
    labels, which may stand slanted): the shared builder makes that room for an untitled chart."""
    room = 2 * sizing.font
    layout["title"] = top_title(title) | {"font": {"size": sizing.font + 2}}
    layout["margin"]["t"] += room
    layout["height"] += room


def _outline(focus_row: int | tuple[int, int] | None, n: int) -> list[dict]:
    """One red box around the focus row, or around a word's rows (start, stop) when it has pieces."""
    if focus_row is None:
        return []
    start, stop = (focus_row, focus_row + 1) if isinstance(focus_row, int) else focus_row
    if not 0 <= start < stop <= n:
        return []
    return [{**row_outline(start, n), "y1": stop - 0.5}]


def _map(
    values: np.ndarray,
    labels: list[str],
    *,
    title: str,
    probabilities: bool,
    hover: str,
    focus_row: int | tuple[int, int] | None,
    share: float,
    height: int | None,
    sizing: Sizing,
    colorbar: bool,
    max_height: int,
) -> go.Figure:
    chars = max((len(label) for label in labels), default=0)
    trace, layout = matrix_heatmap_spec(
        np.asarray(values, dtype=np.float32),
        labels,
        labels,
        row_title=FROM,
        col_title=TO,
        decimals=2,
        probabilities=probabilities,
        hover_value_name=hover,
        share=share,
        height=height or min(square_height(len(labels), share, chars, colorbar, sizing), max_height),
        shapes=_outline(focus_row, len(labels)),
        show_colorbar=colorbar,
        sizing=sizing,
    )
    trace["z"] = np.asarray(values, dtype=np.float32)  # sent as float32 bytes, half the payload
    _quiet(trace)
    _every_label(trace, layout, len(labels))
    _titled(layout, title, sizing)
    # adjusted as dicts, built once (see matrix_heatmap)
    return go.Figure(data=[go.Heatmap(**trace)], layout=layout)


ALL_LABELS_UP_TO = 40  # up to this many tokens every label is drawn (Plotly skips some when crowded)


def _every_label(trace: dict, layout: dict, n: int) -> None:
    """Every token labelled on both axes up to ALL_LABELS_UP_TO tokens, the column labels standing
    upright where they would not fit level (slanted, every other one would be dropped); beyond that,
    Plotly's own thinning, and no gaps between cells (at 1 px each they would hide the cells)."""
    if n > ALL_LABELS_UP_TO:
        trace["xgap"] = trace["ygap"] = 0
        return
    layout["xaxis"]["dtick"] = layout["yaxis"]["dtick"] = 1
    if layout["xaxis"].get("tickangle") not in (0, None):
        # upright (slanted, every other label is dropped when crowded); the room the shared builder made for
        # slanted labels plus its axis-title padding holds them
        layout["xaxis"]["tickangle"] = -90


def head_map(
    matrix: np.ndarray,
    tokens: Sequence[str],
    *,
    title: str,
    focus_row: int | tuple[int, int] | None = None,
    share: float = 0.5,
    height: int | None = None,
    max_height: int = 900,
    sizing: Sizing = PAGE,
    colorbar: bool = False,
) -> go.Figure:
    """`height`: fixed; else cells about square, at most `max_height` (before the room for labels).

    One head's (T, T) attention on one sentence, on a fixed 0–1 scale (so two maps compare; side
    by side they leave out the colour bar, and the page says the scale once)."""
    labels = list(tokens)  # matrix_heatmap_spec escapes them
    return _map(
        matrix, labels, title=title, probabilities=True, hover="weight", focus_row=focus_row,
        share=share, height=height, sizing=sizing, colorbar=colorbar, max_height=max_height,
    )  # fmt: skip


def pair_labels(tokens1: Sequence[str], tokens2: Sequence[str]) -> list[str]:
    """Aligned tokens' labels for the difference map: the token, or "large→small" where swapped."""
    return [a if a == b else f"{a}→{b}" for a, b in zip(tokens1, tokens2, strict=True)]


def difference_map(
    diff: np.ndarray,
    tokens1: Sequence[str],
    tokens2: Sequence[str],
    *,
    title: str,
    focus_row: int | tuple[int, int] | None = None,
    share: float = 0.5,
    height: int | None = None,
    max_height: int = 900,
    sizing: Sizing = PAGE,
) -> go.Figure:
    """(T, T) sentence 2 − sentence 1 for aligned sentences: diverging colours centred on 0, the
    range symmetric (matrix_heatmap's signed scale), with its colour bar."""
    labels = pair_labels(tokens1, tokens2)  # escaped by matrix_heatmap_spec
    return _map(
        diff, labels, title=title, probabilities=False, hover="sentence 2 − sentence 1",
        focus_row=focus_row, share=share, height=height, sizing=sizing, colorbar=True,
        max_height=max_height,
    )  # fmt: skip
