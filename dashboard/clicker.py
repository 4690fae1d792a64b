"""The presentation clicker: → / PageDown step forward, ← / PageUp step back, and no press is lost.

The page counts the presses itself (a listener on the document, in a component drawn at the end of
each run into a slot first in the sidebar) and sends the counts; a run applies the presses it has not
applied yet to what the page's stepper bound with `bind` in its last run (the learn pager, explore's
heads, a deck's slides): the same move its Next / Back button makes, once per press. A page without a
stepper leaves the keys alone (they scroll it, as on any page).

Why not a button's keyboard shortcut (st.button(shortcut=...)), as before: a click is one boolean per
button, "clicked", held in the browser until a zero-delay timer sends it, and merged on the server with
a rerun of the same button still waiting. A second press in that window was the same click: a step
lost. On a loaded machine the browser's timer runs seconds late (2.6 s between a PageDown and its
message beside two busy processes), and 4 of 50 PageDowns at uneven gaps were lost, each handled by
the shortcut (the key's default prevented) but sent in one message with the press before it (issue
48; tests/e2e/test_clicker_count_browser.py). A count cannot be merged away: the newest count holds
every press before it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

KEY = "clicker"  # the component's state: {"next": presses so far, "prev": presses so far}
_APPLIED = "clicker_applied"  # the presses runs have applied, per direction
_TARGET = "clicker_target"  # {"next": (callback, args), "prev": ...}: what a press does
_BOUND = "clicker_bound"  # whether this run has bound a target
DIRECTIONS = ("next", "prev")

# Fixed script (no user text). The listener is added once per page and outlives a rerun's redraw of
# the component; it counts only while one is mounted on a page with a stepper (`send`). Keys typed
# into a field, or with a modifier (browser shortcuts), are not the clicker's; the key's default
# (scrolling) is the step's.
_JS = """
export default function ({ data, setStateValue }) {
  const clicker = (window.__attentionClicker ??= { next: 0, prev: 0, send: null });
  clicker.send = data.steps ? setStateValue : null;
  document.body.dataset.clicker = data.steps ? "on" : "off";  // its script has run (the tests wait for it)
  if (!clicker.listening) {
    clicker.listening = true;
    const dirs = { ArrowRight: "next", PageDown: "next", ArrowLeft: "prev", PageUp: "prev" };
    const typing = "input, textarea, select, [contenteditable='true'], [role='slider']";
    document.addEventListener("keydown", (e) => {
      const dir = dirs[e.key];
      if (!dir || !clicker.send || e.repeat || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
      if (e.target instanceof Element && e.target.closest(typing)) return;
      e.preventDefault();
      clicker[dir] += 1;
      clicker.send(dir, clicker[dir]);
    });
  }
  return () => { if (clicker.send === setStateValue) { clicker.send = null; } };
}
"""
_component = st.components.v2.component("attention_explorer.clicker", js=_JS)


def _pressed() -> None:
    """A callback, before the run: apply the presses not applied yet, in each direction, to the target
    the last run bound (none: the presses are dropped, as a page without a stepper ignores them)."""
    ss = st.session_state
    counts, applied = ss.get(KEY) or {}, ss.setdefault(_APPLIED, dict.fromkeys(DIRECTIONS, 0))
    target = ss.get(_TARGET) or {}
    for direction in DIRECTIONS:
        now = int(counts.get(direction) or 0)
        new, applied[direction] = max(now - applied[direction], 0), max(now, applied[direction])
        if direction in target:
            move, args = target[direction]
            for _ in range(new):  # each press moves relative to where the one before it left the page
                move(*args)


def slot() -> object:
    """The clicker's place, first in the sidebar (dashboard/app.py, at the start of each run): the same
    element from run to run, drawn by `keys_ui` once the page has bound its stepper, or not."""
    st.session_state[_BOUND] = False
    return st.sidebar.empty()


def keys_ui(place: object) -> None:
    """Draw the clicker into `place` (dashboard/app.py, after the page; it shows nothing), listening
    if the page bound a stepper in this run. A run cut short by a rerun never gets here, so the
    stepper the page last drew keeps the keys."""
    ss = st.session_state
    steps = bool(ss.get(_BOUND))
    if not steps:
        ss.pop(_TARGET, None)
    with place:
        _component(key=KEY, data={"steps": steps}, on_next_change=_pressed, on_prev_change=_pressed, height=0)


def bind(forward: tuple[Callable, tuple] | None, back: tuple[Callable, tuple] | None) -> None:
    """What the clicker's keys do from the next run on: a stepper's Next and Back (callback, args),
    the same as its buttons' on_click and args; None where there is no move (the last step)."""
    ss = st.session_state
    ss[_TARGET] = {d: move for d, move in zip(DIRECTIONS, (forward, back), strict=True) if move}
    ss[_BOUND] = True
