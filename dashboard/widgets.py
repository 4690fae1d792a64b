"""Streamlit drawing helpers shared by every page (the pages' own widgets live with each page)."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

# One toolbar for every chart: no Plotly logo; the camera button saves a PNG at twice the screen's
# resolution, sharp enough for a slide.
PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def chart(fig: go.Figure, key: str, **kwargs) -> None:
    """Draw a Plotly figure with the shared toolbar; kwargs go to st.plotly_chart (on_select, width...)."""
    st.plotly_chart(fig, key=key, config=PLOT_CONFIG, **kwargs)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md(text: object) -> str:
    """Escape user-derived text for st.markdown / st.error / st.caption (shown literally)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")
