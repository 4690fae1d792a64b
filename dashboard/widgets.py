"""Streamlit drawing helpers shared by every page (the pages' own widgets live with each page)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlencode

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.export import matrix_csv
from dashboard import chart_access, chart_text, screen

APP_SLUG = "attention-explorer"
# One toolbar for every chart: no Plotly logo; the camera button saves a PNG at three times the
# screen's resolution, sharp enough for a slide, named after what it shows (see chart_filename).
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 3}}
IMAGE_FORMAT_KEY = "image_format"  # the sidebar's choice (image_format_ui): "png" or "svg"
IMAGE_FORMATS = {"png": "PNG", "svg": "SVG"}
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def chart_filename(*parts: object) -> str:
    """A file name that says what a chart shows: attention-explorer_learn_step5_head1. Only
    [A-Za-z0-9_-] survive (no user text can shape a path); empty parts are dropped."""
    cleaned = (_UNSAFE_NAME.sub("-", str(p)).strip("-") for p in parts if p is not None)
    return "_".join([APP_SLUG, *(c for c in cleaned if c)])[:120]


def chart(fig: go.Figure, key: str, filename: str | None = None, *, alt: str | None = None, **kwargs) -> None:
    """Draw a Plotly figure with the shared toolbar; the camera button saves `filename`.png (a name
    from chart_filename; default: from the key). kwargs go to st.plotly_chart (on_select, width...).

    Every chart is named for a screen reader by its text alternative (dashboard.chart_text: its title
    and axes, then its main finding) and has its numbers as a table on request under it
    (dashboard.chart_access). `alt`: the view's own statement of the finding (markdown, user text
    escaped with md), said after what the figure shows."""
    name = filename or chart_filename(key)
    image = {**PLOT_CONFIG["toImageButtonOptions"], "filename": name}
    if st.session_state.get(IMAGE_FORMAT_KEY) == "svg":  # vector: sharp at any size, no scale needed
        image |= {"format": "svg", "scale": 1}
    config = {**PLOT_CONFIG, "toImageButtonOptions": image}
    said, numbers = chart_text.describe(fig, alt), fig  # the whole figure's, before a phone's fitting
    fig, kwargs = screen.fit_chart(fig, kwargs)  # a phone: cells wide enough to read (dashboard/screen.py)
    st.plotly_chart(fig, key=key, config=config, alt=said, **kwargs)
    chart_access.after_chart(numbers, key)


def image_format_ui() -> str:
    """The sidebar's choice of what the charts' camera button saves: PNG (3x) or SVG (vector)."""
    if st.session_state.get(IMAGE_FORMAT_KEY) not in IMAGE_FORMATS:
        st.session_state[IMAGE_FORMAT_KEY] = "png"
    fmt = st.segmented_control(
        "Chart images",
        list(IMAGE_FORMATS),
        format_func=IMAGE_FORMATS.get,
        key=IMAGE_FORMAT_KEY,
        required=True,
        help="What each chart's camera button (top right of a chart) saves: a PNG at three times the "
        "screen's resolution, or an SVG (vector, sharp at any size, editable in slide software).",
    )
    return fmt or "png"


def csv_download(
    values: np.ndarray, rows: Sequence[str], cols: Sequence[str], filename: str, key: str, corner: str = ""
) -> None:
    """A small button that downloads the matrix on screen as CSV, rows and columns labelled. The
    CSV is written when the button is clicked, not on every run (512 x 512 cells take a while)."""
    st.download_button(
        "CSV",
        lambda: matrix_csv(values, rows, cols, corner),
        file_name=f"{filename}.csv",
        mime="text/csv",
        key=key,
        icon=":material/download:",
        type="tertiary",
        help="This matrix as a table (CSV), its rows and columns labelled, for a spreadsheet or a slide.",
        on_click="ignore",
    )


def copy_link_ui() -> None:
    """The full link to the view on screen, as plain text to select and copy (the address bar holds
    the same link: the pages write their parameters into it). Call it after the page has written its
    parameters into the URL.

    st.text, not st.code's box with its copy button: that box came with a 1.5 MB highlighter script
    the browser parsed beside Plotly's on a page's first load (issue 23's first-seconds trace); and
    not a link, since the query holds the user's sentence, which never goes into an href."""
    base = st.context.url or ""
    query = urlencode(st.query_params.to_dict())
    st.caption("Link to this view (the address bar holds it too):")
    st.text(f"{base}?{query}" if query else base)  # never read as markdown; a triple click selects it


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md(text: object) -> str:
    """Escape user-derived text for st.markdown / st.error / st.caption (shown literally)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def error_md(message: object) -> str:
    """A message for st.error (our own text with `code` spans: a command, a Hub id, that may embed
    user text such as a path): its code spans kept (markdown shows their content literally) and the
    rest escaped with md(), so user text outside them is never read as markdown."""
    parts = _CODE_SPAN.split(str(message).replace("\n", " "))
    return "".join(part if index % 2 else md(part) for index, part in enumerate(parts))
