"""A chart as a screen reader meets it (issue 50): named by its text alternative, and its numbers as a
table on request under it. dashboard.widgets.chart draws every chart, then `after_chart`.

- The name: st.plotly_chart's `alt` (Streamlit puts it on the chart's box as role="figure" with an
  aria-label), the sentence from dashboard.chart_text.
- Plotly's own SVG (tick labels, the numbers printed in cells, the hover layer) is hidden from
  assistive technology by a small fixed script (`_MARKS_JS`), so a screen reader says the sentence
  instead of reading hundreds of labels one by one; the toolbar's buttons stay reachable.
- The numbers: a small closed expander, "Numbers as a table", right under the chart (its next Tab
  stop after the chart's toolbar; not in presenter mode, where a projector shows it): a disclosure
  button reached with Tab and opened with Enter or Space. Its tables (st.table: real HTML tables,
  which screen readers walk cell by cell) are built only while it is open, so a page sends nothing
  more on a normal run than the closed expander's label.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import chart_text
from dashboard.presenter import presenting

NUMBERS = "chart_numbers_"  # + the chart's key: the expander's state (open or closed)
MARKS = "chart_marks"  # the script's (empty) element, once per run at the sidebar's end
NUMBERS_LABEL = "Numbers as a table"
DECIMALS = 4

# Fixed script (no user text, no data): once per page, a watcher marks every named chart's Plotly SVG
# aria-hidden, now and whenever Plotly redraws one (a new SVG replaces the old on a new figure), but
# for the lines view's (layout.meta.isolate: dashboard/chart_hover.py makes its word labels buttons), and
# makes every table's sideways-scrolling box a Tab stop (so a keyboard can scroll a wide matrix:
# axe's scrollable-region-focusable). Mounted once per run (marks_ui), not after each chart.
_MARKS_JS = """export default function () {
const m = (window.__chartMarks ??= {}); if (m.o) return;
const all = (q) => document.querySelectorAll(q);
const mark = () => { m.q = 0;
  for (const s of all(".stPlotlyChart[aria-label] svg.main-svg:not([aria-hidden])"))
    if (!s.closest(".js-plotly-plot")?.layout?.meta?.isolate) s.setAttribute("aria-hidden", "true");
  for (const d of all("[data-testid='stTable'] > div:not([tabindex])"))
    d.tabIndex = 0; };
m.o = new MutationObserver(() => { if (!m.q) { m.q = 1; requestAnimationFrame(mark); } });
m.o.observe(document.body, { childList: true, subtree: true }); mark();
}"""
_marks = st.components.v2.component("attention_explorer.chart_marks", js=_MARKS_JS)


def after_chart(fig: go.Figure, key: str) -> None:
    """What follows the chart `key` (drawn just before): its table control. On a projector (presenter
    mode) the control is left out: the room reads the chart, the slide keeps its height, and the chart
    keeps its name."""
    if not presenting():
        numbers_ui(fig, key)


def marks_ui() -> None:
    """Mount the marking script (dashboard/app.py, once per run): an empty element at the sidebar's end,
    out of the page's flow; its watcher marks every chart on the page."""
    with st.sidebar:
        _marks(key=MARKS, height=0)


def numbers_ui(fig: go.Figure, key: str) -> None:
    """The closed "Numbers as a table" control; opening it reruns the page, which then draws the tables."""
    box = st.expander(NUMBERS_LABEL, key=NUMBERS + key, type="compact", on_change="rerun")
    if not box.open:
        return
    name = chart_text.plain(fig.layout.title.text if fig.layout.title is not None else "") or "this chart"
    with box:
        found = chart_text.tables(fig)
        if not found:
            st.caption("This chart draws no numbers of its own.")
        for caption, table in found:
            if caption:
                st.caption(_md(caption))
            st.table(markdown_safe(table), alt=f"The numbers of {name}")


def markdown_safe(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its labels escaped (st.table reads cells and labels as markdown; tokens are
    user text) and its values rounded to DECIMALS places."""
    out = table.round(DECIMALS)
    out.index = [_md(label) for label in out.index]
    out.columns = [_md(label) for label in out.columns]
    return out


def _md(text: object) -> str:
    from dashboard.widgets import md  # widgets imports this module: imported when first needed

    return md(text)
