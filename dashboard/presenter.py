"""Presenter mode: the chart and its explanation fill the screen at large type, controls fold away.

Switched on by the sidebar toggle (drawn by dashboard/app.py on every page) and kept in the URL as
`present=1`, so a teacher can open a prepared link on the classroom projector. Pages ask
`presenting()` to lay themselves out for a room: the step's or view's chart first, at the top.
"""

from __future__ import annotations

import streamlit as st

from dashboard import clicker
from dashboard.state import PageLinks, flag_param

KEY = "present"
DECK_ON = "deck_on"  # set on every run by dashboard/decks/bar.py: a deck's slide is on screen
LINKS = PageLinks("presenter", (flag_param("present", KEY),))

# Fixed stylesheet (never user text). Presenter mode: larger body type, the sidebar's controls
# hidden behind its collapse arrow, less padding at the top so the step's heading starts high.
_PRESENTER_CSS = """
<style>
.stMainBlockContainer, .block-container { padding-top: 3.6rem !important; max-width: 100% !important; }
.stMarkdown p, .stMarkdown li, [data-testid="stCaptionContainer"] p { font-size: 1.35rem !important; }
h1 { font-size: 2.4rem !important; }
h2, h3 { font-size: 2.0rem !important; }
/* explore's ablation view: the ranked heads are buttons; they read at the body's size */
[class*="st-key-explore_ablate_top_"] button p { font-size: 1.35rem !important; }
</style>
"""


def presenting() -> bool:
    """Whether presenter mode is on for this session (the `present` link parameter or the toggle)."""
    return bool(st.session_state.get(KEY, False))


def link_asks_to_present() -> bool:
    """Whether this session starts in presenter mode (read before the page is set up, so the
    sidebar can start folded)."""
    first = not LINKS.url_was_read()
    LINKS.read_url()
    if first and "deck" in st.query_params and "present" not in st.query_params:
        st.session_state[KEY] = True  # a deck's link opens in presenter mode
    return presenting()


def owns_clicker() -> bool:
    """Whether a page's own stepper takes the clicker's keys: not while a deck is on (it moves between
    slides on them)."""
    return not st.session_state.get(DECK_ON)


def _move(state_key: str, delta: int, lo: int, hi: int) -> None:
    ss = st.session_state
    ss[state_key] = min(max(int(ss.get(state_key, lo)) + delta, lo), hi)


def prev_next_ui(prefix: str, labels: tuple[str, str], state_key: str, lo: int, hi: int) -> None:
    """Previous / Next buttons (keys `prefix`_prev and `prefix`_next) moving st.session_state[state_key]
    within lo..hi, also on ← / PageUp and → / PageDown (a clicker: dashboard/clicker.py; not while a
    deck owns those keys). Draw them inside the caller's row."""
    ss = st.session_state
    ss[state_key] = min(max(int(ss.get(state_key, lo)), lo), hi)
    moves = {}
    for name, label, delta in (("prev", labels[0], -1), ("next", labels[1], 1)):
        moves[name] = (_move, (state_key, delta, lo, hi))
        st.button(
            label,
            key=f"{prefix}_{name}",
            on_click=moves[name][0],
            args=moves[name][1],
            help="Also → / PageDown and ← / PageUp (a presentation clicker).",
            disabled=ss[state_key] == (lo if delta < 0 else hi),
        )
    if owns_clicker():
        clicker.bind(moves["next"], moves["prev"])


def presenter_toggle_ui() -> bool:
    """The sidebar's presenter-mode toggle; reads `present` from the link on the session's first
    run, writes it back on every run, and injects presenter mode's stylesheet. Returns whether on."""
    LINKS.read_url()
    on = st.toggle(
        "Presenter mode",
        key=KEY,
        help="For a projector: large type, the chart first, controls folded into the sidebar. "
        "→ / PageDown and ← / PageUp step through the lesson (or heads on Explore).",
    )
    LINKS.write_url()
    if on:
        st.html(_PRESENTER_CSS)
    return bool(on)
