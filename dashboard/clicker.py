"""The presentation clicker: → / PageDown step forward, ← / PageUp step back, and no press is lost.

The page counts the presses itself (a listener on the document, in a component mounted once per run at
the top of the sidebar) and sends the counts; a run applies the presses it has not applied yet to what
the page's stepper bound with `bind` in its last run (the learn pager, explore's heads, a deck's
slides): the same move its Next / Back button makes, once per press.

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
_BOUND = "clicker_bound"  # whether this run has bound a target yet
DIRECTIONS = ("next", "prev")

# Fixed script (no user text). The listener is added once per page and outlives a rerun's redraw of
# the component (it only counts while one is mounted: `send`). Keys typed into a field, or with a
# modifier (browser shortcuts), are not the clicker's; the key's default (scrolling) is the step's.
_JS = """
export default function ({ setStateValue }) {
  const clicker = (window.__attentionClicker ??= { next: 0, prev: 0, send: null });
  clicker.send = setStateValue;
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
  return () => { if (clicker.send === setStateValue) clicker.send = null; };
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


def keys_ui() -> None:
    """Mount the clicker (dashboard/app.py, once per run, before anything binds; first in the
    sidebar, so that it is the same element from run to run; it draws nothing)."""
    st.session_state[_BOUND] = False
    _component(key=KEY, on_next_change=_pressed, on_prev_change=_pressed, height=0)


def bind(forward: tuple[Callable, tuple] | None, back: tuple[Callable, tuple] | None) -> None:
    """What the clicker's keys do from the next run on: a stepper's Next and Back (callback, args),
    the same as its buttons' on_click and args; None where there is no move (the last step)."""
    ss = st.session_state
    ss[_TARGET] = {d: move for d, move in zip(DIRECTIONS, (forward, back), strict=True) if move}
    ss[_BOUND] = True


def end_of_run() -> None:
    """After the page's run (dashboard/app.py): a run that bound nothing leaves the keys to nothing. A
    run cut short by a rerun never gets here, so the stepper the page last drew keeps them."""
    ss = st.session_state
    if not ss.get(_BOUND):
        ss.pop(_TARGET, None)
