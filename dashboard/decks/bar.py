"""Presenting a deck: `?deck=NAME&slide=K` (1-based, as shown) on any page opens slide K in presenter
mode, with a slim bar above the view: the deck's title, "Slide K of N", the slide's title and text.

While a deck is on it owns the clicker (dashboard/clicker.py): → / PageDown and ← / PageUp move between
slides, across pages (presenter.owns_clicker tells the pages' own steppers to leave those keys alone).
Moving to a slide forgets the pages' state and opens the slide's own link, so a slide always shows
what its link shows, computed live. The app calls `deck_ui` on every run, before the page draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from core.models import shipped, smollm2
from core.translate.engine import TRANSLATOR_DIR
from dashboard import clicker, presenter
from dashboard.decks import mine
from dashboard.decks.model import LINK_PREFIX, Deck, builtin_deck, builtin_names, decode_link
from dashboard.hosted import current_limits
from dashboard.state import parse_clamped_int
from dashboard.widgets import md


def _decoder_ships() -> bool:
    # looked up on each call, so a copy without the model (and a test that removes it) is seen
    return shipped.shipped_model_dir() is not None


def _translator_ships() -> bool:
    return (TRANSLATOR_DIR / "model.safetensors").is_file()


def _smollm2_here() -> bool:
    # installed (`make run`), or the hosted demo, which fetches it at first use
    return smollm2.packaged_gguf() is not None or current_limits().hosted


# What a built-in deck may need besides its pages (its "needs"), and how to tell it is there. A deck
# that needs something unlisted or missing is not offered. "decoder": the letter GPT-2 that ships
# with the product (models/letters-gpt2), which the decks `gpt` and `heads` show; "smollm2": its
# package is installed (`make run`) or the hosted demo will fetch it, for the deck `llm`; "translator":
# the EN→FR translator that ships (models/translator), for the deck `align`.
CHECKS: dict[str, Callable[[], bool]] = {
    "decoder": _decoder_ships,
    "smollm2": _smollm2_here,
    "translator": _translator_ships,
}
# Session keys that survive a move to another slide: the deck's own, the sidebar's image format, the
# hosted demo's rate limit. Everything else belongs to a page and is forgotten. Presenter mode goes
# by the slide's link (`present`), read again: a sidebar widget's state does not survive a switch
# to another page (its widget id names the page).
KEEP_PREFIXES = ("deck_", "image_format", "hosted_", "clicker")  # clicker: the presses counted so far
# Presenter mode as it was before the deck started, for Leave to put back; a deck opened by a link
# in a new session had nothing before it: off, the app's default.
BEFORE_KEY = "deck_before"
_BAR_CSS = "<style>.st-key-deck_bar p { margin-bottom: 0 !important; }</style>"


def available() -> frozenset[str]:
    return frozenset(name for name, check in CHECKS.items() if check())


def offered(pages: Mapping[str, object]) -> dict[str, Deck]:
    """The built-in decks this app can give now (their pages exist, their needs are met), by name."""
    have = available()
    decks = {name: builtin_deck(name, pages, have) for name in builtin_names()}
    return {name: deck for name, deck in decks.items() if deck is not None}


def read_deck(raw: str, pages: Mapping[str, object]) -> tuple[Deck | None, str | None]:
    """The deck a link's `deck` value names or carries, or None with one message; parsed once per
    session and value."""
    ss = st.session_state
    cached = ss.get("deck_parsed")
    if cached and cached[0] == raw:
        return cached[1], cached[2]
    if raw.startswith(LINK_PREFIX):
        deck, note = decode_link(raw, pages)
    else:
        decks = offered(pages)
        deck = decks.get(raw)
        names = ", ".join(f"`{name}`" for name in decks)
        note = (
            None
            if deck
            else f"The link asks for a deck {raw[:40]!r} that is not here; the decks are {names}."
        )
    ss["deck_parsed"] = (raw, deck, note)
    return deck, note


def _forget_page_state() -> None:
    ss = st.session_state
    for key in [k for k in ss if not (isinstance(k, str) and k.startswith(KEEP_PREFIXES))]:
        del ss[key]


def _open_slide(raw: str, deck: Deck, k: int, pages: Mapping[str, object]) -> None:
    """Show slide k: the pages start afresh from its link, in the slide's page (ends this run)."""
    slide = deck.slides[k - 1]
    query = {"deck": raw, "slide": str(k), "present": "1" if presenter.presenting() else "0"}
    _forget_page_state()
    st.session_state["deck_at"] = (raw, k)
    st.switch_page(pages[slide.page], query_params={**query, **slide.query()})


def deck_ui(pages: Mapping[str, object]) -> None:
    """The deck in the link, if any: open the slide it asks for when the session is not showing it
    yet (a new link, a move), else draw the bar. `pages` maps each page's name ("learn",
    "explore"…) to its st.Page."""
    ss = st.session_state
    raw = st.query_params.get("deck")
    deck, note = read_deck(raw, pages) if raw else (None, None)
    ss[presenter.DECK_ON] = deck is not None
    if deck is None:
        ss.pop("deck_at", None)
        ss.pop(BEFORE_KEY, None)
        if note:
            st.warning(md(note), icon=":material/slideshow:")
        return
    k, slide_note = parse_clamped_int("slide", st.query_params.get("slide"), 1, 1, len(deck.slides))
    k = ss.pop("deck_go", k)
    ss.setdefault(BEFORE_KEY, False)
    if ss.get("deck_at") != (raw, k):  # once per slide shown: a switch never repeats itself
        ss["deck_notes"] = [n for n in (note if ss.get("deck_last") != raw else None, slide_note) if n]
        ss["deck_last"] = raw
        _open_slide(raw, deck, k, pages)
    _bar_ui(deck, k)


def _go(delta: int, n: int) -> None:
    """Move `delta` slides from the one on screen now. Relative, not a slide fixed when the button was
    drawn: a key pressed while the next slide opens reaches the button the previous run drew, and a
    fixed slide would repeat that move instead of going one further."""
    ss = st.session_state
    at = ss.get("deck_go") or ss.get("deck_at", (None, 1))[1]
    ss["deck_go"] = min(max(at + delta, 1), n)


def _leave() -> None:
    """End the deck on the view shown, in the presenter mode that was on before the deck."""
    for name in ("deck", "slide"):
        if name in st.query_params:
            del st.query_params[name]
    ss = st.session_state
    ss[presenter.KEY] = bool(ss.pop(BEFORE_KEY, False))
    ss[presenter.DECK_ON] = False


def _bar_ui(deck: Deck, k: int) -> None:
    n, slide = len(deck.slides), deck.slides[k - 1]
    with st.container(horizontal=True, vertical_alignment="center", key="deck_bar", gap="small"):
        _move_button("deck_prev", "Back", ":material/chevron_left:", -1, k, n)
        st.markdown(f"{md(deck.title)} · **Slide {k} of {n}** · **{md(slide.title)}**", width="stretch")
        _move_button("deck_next", "Next", ":material/chevron_right:", 1, k, n)
        st.button(
            "Leave", key="deck_leave", on_click=_leave, icon=":material/close:", type="tertiary",
            help="Leave the deck and stay on this view (the clicker steps the page again).",
        )  # fmt: skip
    if slide.text:
        st.caption("  \n".join(md(line) for line in slide.text.split("\n")))
    st.html(_BAR_CSS)
    clicker.bind((_go, (1, n)), (_go, (-1, n)))  # → / PageDown and ← / PageUp, across pages
    for note in st.session_state.pop("deck_notes", []):
        st.warning(md(note), icon=":material/slideshow:")


def _move_button(key: str, label: str, icon: str, delta: int, k: int, n: int) -> None:
    """The button moving `delta` slides from slide k of n (the clicker's keys: _bar_ui)."""
    st.button(
        label,
        key=key,
        on_click=_go,
        args=(delta, n),
        icon=icon,
        type="tertiary",
        help=f"Also {'→ / PageDown' if delta > 0 else '← / PageUp'} (a presentation clicker).",
        disabled=not 1 <= k + delta <= n,
    )


def start(raw: str, k: int = 1) -> None:
    """Present the deck `raw` (a built-in name or a shared deck's value) from slide k (a callback)."""
    st.query_params["deck"], st.query_params["slide"] = raw, str(k)
    st.session_state.setdefault(BEFORE_KEY, presenter.presenting())
    st.session_state["deck_go"] = k
    st.session_state.pop("deck_at", None)
    st.session_state[presenter.KEY] = True


def add_view_ui(page: str | None, page_title: str) -> None:
    """The sidebar's "Add this view to my deck" (on every page but the deck editor)."""
    if page is None:
        return
    count = len(mine.slides())
    if st.button(
        "Add this view to my deck",
        key="deck_add",
        icon=":material/add_to_queue:",
        help="A slide of this view, as its link describes it; edit, order and share your deck on the "
        "“My deck” page, whose link keeps it.",
    ):
        st.toast(mine.add_view(page, page_title, st.query_params.to_dict()), icon=":material/slideshow:")
        count = len(mine.slides())
    if count:
        st.caption(f"Your deck: {count} slide{'s' * (count != 1)}, on the “My deck” page.")
