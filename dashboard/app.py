"""Entry point: `streamlit run dashboard/app.py`. Sets up navigation and the shared sidebar."""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run dashboard/app.py` puts dashboard/ on sys.path, not the repository root.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard.views import explore, learn  # noqa: E402

st.set_page_config(page_title="Attention Explorer", page_icon="🔍", layout="wide")

PAGES = [
    st.Page(learn.render, title="Learn: attention from scratch", icon="🧮", url_path="learn", default=True),
    st.Page(explore.render, title="Explore: a pretrained BERT", icon="🔬", url_path="explore"),
]

page = st.navigation(PAGES)
with st.sidebar:
    st.caption(
        "Attention Explorer computes attention step by step in NumPy and shows the heads of a real "
        "BERT. Layers and heads are numbered from 1 on screen."
    )
page.run()
