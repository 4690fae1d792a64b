"""What every extra stop of the learn page's decoder modes is built of (decoder_views.py for GPT-2's,
llama_views.py for a Llama's): its heading with the formula and the shapes, one matrix chart, the
first dimensions of a wide array, a shape written out."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.content.learn import DIM_TITLE
from dashboard.presenter import presenting
from dashboard.views.learn import compute
from dashboard.views.learn.sources import SHOWN_DIMS
from dashboard.widgets import chart, chart_filename

__all__ = ["NARROW", "first_dims", "shape_text", "stop_intro", "stop_matrix"]

NARROW = SHOWN_DIMS // 2  # dimensions printed in a chart a third of the page wide


def stop_intro(view: str, title: str, formula: str, text: str, shapes: list[str]) -> None:
    """As steps.py's: the heading (anchor step-<view>, where the pager scrolls), then the formula with
    the shapes beside the explanation. On a projector no divider: the controls above are folded
    away, and the room goes to the stop's charts."""
    if not presenting():
        st.divider()
    st.subheader(title, anchor=f"step-{view}")
    left, right = st.columns([1, 1], gap="large", vertical_alignment="center")
    with left:
        st.latex(formula)
        st.caption("Shapes: " + " · ".join(shapes))
    with right:
        st.markdown(text)


def stop_matrix(
    view: str, key: str, title: str, values: np.ndarray, rows, cols, *, share: float, **kwargs
) -> None:
    """One matrix with its title above it, sized for the page or the projector (compute.matrix_figure); with
    `hidden` (bool cells) and `hidden_text`, those cells are written out (charts.learn.causal_figure)."""
    st.markdown(f"**{title}**")
    if "hidden" in kwargs:
        if presenting():
            kwargs.setdefault("height", compute.presenter_height(rows))
        sizing = PRESENTER if presenting() else PAGE
        fig = compute.causal_chart(values, rows, cols, sizing=sizing, share=share, **kwargs)
    else:
        fig = compute.matrix_figure(values, rows, cols, share=share, **kwargs)
    chart(fig, key, filename=chart_filename("learn", view, key))


def first_dims(values: np.ndarray, n: int) -> tuple[np.ndarray, list[str], str]:
    width = values.shape[-1]
    if width <= n:
        return values, [str(j + 1) for j in range(width)], DIM_TITLE
    return values[..., :n], [str(j + 1) for j in range(n)], f"{DIM_TITLE} (first {n} of {width})"


def shape_text(name: str, shape: tuple[int, ...]) -> str:
    return f"{name}: ({' × '.join(map(str, shape))})"
