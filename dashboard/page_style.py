"""The app's own stylesheets, injected once per run on every page (dashboard/app.py).

Each concern keeps its CSS in a file of its own under dashboard/styles/ (focus rings, contrast fixes,
the phone layout, chart text alternatives), so that one change reads in one place. The files are the
product's own text: no user input ever reaches them.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import streamlit as st

STYLES = Path(__file__).resolve().parent / "styles"


@cache
def stylesheet() -> str:
    """Every dashboard/styles/*.css file, in name order, as one <style> block (read once per process)."""
    parts = [path.read_text(encoding="utf-8") for path in sorted(STYLES.glob("*.css"))]
    return "<style>\n" + "\n".join(parts) + "\n</style>" if any(p.strip() for p in parts) else ""


def page_style_ui() -> None:
    """Inject the stylesheet; a style-only st.html goes to Streamlit's event container and takes no
    space on the page."""
    css = stylesheet()
    if css:
        st.html(css)
