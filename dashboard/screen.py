"""What the browser tells about the screen, and charts fitted to it (issue 50: the phone layout).

`fit_chart` is called by dashboard.widgets.chart for every chart. On a wide screen (a laptop, a
projector) it hands the figure back untouched. On a phone or a tablet it fits the figure
(dashboard.charts.phone.fit_figure) and, when the heatmap's cells need more width than the screen
has, gives the chart that width as its least width: the chart's own box scrolls sideways
(dashboard/styles/phone.css), never the page.

How the server knows the width: Streamlit tells it nothing about the viewport (st.context has no
width). A small component (`_probe`, fixed script, no user text), drawn hidden before the first
chart of each run, reads the window's width class, "phone" below 640 px (where Streamlit stacks
columns), "tablet" below 1024, else "wide", and sends it only when it differs from the class the
run was drawn for: one rerun when a page first opens on a narrow window, or when a turn or a resize
crosses a class's edge, none otherwise. Until it has spoken, the User-Agent guesses ("Mobile": a
phone's browser), so a real phone's first run is already a phone's.

Why a least width and not a fixed one: Streamlit draws a Plotly chart at its element's measured
width and caps a chart's `width` at its container's. The chart gets `width=N` (N from fit_figure)
only as a mark on its element (`width="Npx"`); a rule for that N (`_least_width_css`) sets the
chart's frame at least N wide while phone.css lets the element span its container: a wider screen
still stretches the chart, a narrower one scrolls it inside its box.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboard.charts.phone import SCREENS, fit_figure

PROBE_KEY = "screen_probe"  # the component's state: {"width": "phone" | "tablet" | "wide"}
WIDTH_KEY = "screen_width"  # the class the browser last reported (a plain key: outlives a fragment's run)
WIDE = "wide"
NARROW_MEDIA = "(max-width: 1023.98px)"  # phone and tablet, as the probe's classes

# Fixed script (no user text). `data.drawn`: the class this run was drawn for. The body's
# data-screen says the page on screen was drawn for the window's class (the tests wait for it).
_JS = """
export default function ({ data, setStateValue }) {
  const widthClass = () => (window.innerWidth < 640 ? "phone" : window.innerWidth < 1024 ? "tablet" : "wide");
  let sent = null;
  const report = () => {
    const now = widthClass();
    if (now === data.drawn) {
      document.body.dataset.screen = now;
    } else if (now !== sent) {
      delete document.body.dataset.screen;
      sent = now;
      setStateValue("width", now);
    }
  };
  report();
  window.addEventListener("resize", report);
  return () => window.removeEventListener("resize", report);
}
"""
_probe = st.components.v2.component("attention_explorer.screen", js=_JS)


def _remember() -> None:
    """The probe's callback: keep the class it reported where a fragment's run still finds it."""
    reported = (st.session_state.get(PROBE_KEY) or {}).get("width")
    if reported in (*SCREENS, WIDE):
        st.session_state[WIDTH_KEY] = reported


def guess_from_user_agent(user_agent: str) -> str:
    """A first guess before the probe has spoken: phones' browsers say "Mobile" (Android, iPhone);
    an Android tablet's says "Android" without it. iPads present themselves as desktop Safari."""
    if "Mobi" in user_agent:
        return "phone"
    if "Android" in user_agent or "Tablet" in user_agent:
        return "tablet"
    return WIDE


def _user_agent() -> str:
    """The browser's User-Agent; empty without a browser (a bare script, AppTest)."""
    try:
        return st.context.headers.get("User-Agent") or ""
    except Exception:  # no session at all
        return ""


def width_class() -> str:
    """ "phone", "tablet" or "wide": what the browser reported, else what its User-Agent suggests."""
    return st.session_state.get(WIDTH_KEY) or guess_from_user_agent(_user_agent())


def screen_ui() -> None:
    """The probe, hidden (phone.css): drawn once per run in the sidebar by dashboard/app.py, before
    the page, so that a class it reports reruns the whole page (a fragment's charts too)."""
    if _user_agent():  # no browser (a bare script, AppTest): nothing to measure
        _probe(key=PROBE_KEY, data={"drawn": width_class()}, on_width_change=_remember, height=0)


def _least_width_css(width: int) -> str:
    """The rule that keeps a chart marked `width="Npx"` at least N wide on a narrow screen."""
    frame = f"[data-testid='stElementContainer'][width='{width}px'] [data-testid='stFullScreenFrame']"
    return f"<style>@media {NARROW_MEDIA} {{ {frame} {{ min-width: {width}px; }} }}</style>"


def fit_chart(fig: go.Figure, kwargs: dict) -> tuple[go.Figure, dict]:
    """The figure and st.plotly_chart's arguments as this screen should draw them."""
    name = width_class()
    if name not in SCREENS:
        return fig, kwargs
    fit = fit_figure(fig, SCREENS[name])
    if fit.min_width is None or "width" in kwargs:
        return fit.figure, kwargs
    width = -(-fit.min_width // 8) * 8  # to 8 px: fewer distinct rules
    st.html(_least_width_css(width))  # style only: Streamlit puts it out of the page's flow
    return fit.figure, {**kwargs, "width": width}
