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

st.set_page_config(page_title="Attention Explorer", page_icon=":material/visibility:", layout="wide")

LEARN = st.Page(
    learn.render, title="Learn: attention from scratch", icon=":material/calculate:", url_path="learn"
)
EXPLORE = st.Page(
    explore.render, title="Explore: a pretrained BERT", icon=":material/biotech:", url_path="explore"
)


def _start() -> None:
    """The root URL opens the learn page under its own address, keeping the link's parameters.
    (Streamlit serves its default page only at "/", so /learn links would otherwise not resolve.)"""
    st.switch_page(LEARN, query_params=st.query_params.to_dict())


START = st.Page(_start, title="Start", url_path="start", default=True, visibility="hidden")

page = st.navigation([START, LEARN, EXPLORE])
with st.sidebar:
    st.caption(
        "Attention Explorer computes attention step by step in NumPy and shows the heads of a real "
        "BERT. Layers and heads are numbered from 1 on screen."
    )
page.run()
