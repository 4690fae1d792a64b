"""The teacher's own deck, held in this browser session and in the /deck page's link (nothing is
stored on the server): the sidebar's "Add this view to my deck" appends to it, the /deck page edits,
saves, opens and shares it, and keeps it in its own link (dashboard/views/deck/page.py).

Each slide is kept as a dict with an `id` that never changes, so the editor's widgets (keyed by it)
follow a slide when it moves.
"""

from __future__ import annotations

import itertools

import streamlit as st

from dashboard.decks.model import MAX_SLIDES, MAX_TITLE, RESERVED, Deck, clean_text, parse_deck

SLIDES_KEY = "deck_mine"  # [{"id", "page", "params", "title", "text"}]
TITLE_KEY = "deck_mine_title"
DEFAULT_TITLE = "My lecture"
_IDS = itertools.count(1)
SUMMARY_PARAMS = ("view", "step", "example", "part", "variant", "preset", "show")


def slides() -> list[dict]:
    return st.session_state.setdefault(SLIDES_KEY, [])


def title() -> str:
    return st.session_state.get(TITLE_KEY) or DEFAULT_TITLE


def as_deck(pages) -> Deck | None:
    """The teacher's deck as a Deck (None when it is empty), through the same checks as a file."""
    data = {
        "title": title(),
        "slides": [{k: s[k] for k in ("page", "params", "title", "text")} for s in slides()],
    }
    return parse_deck(data, pages)[0]


def replace(deck: Deck) -> None:
    """Make `deck` the teacher's deck (an opened file, a built-in deck to adapt)."""
    st.session_state[SLIDES_KEY] = [{"id": next(_IDS), **s.as_dict()} for s in deck.slides]
    st.session_state[TITLE_KEY] = deck.title


def default_title(page_title: str, params: dict[str, str]) -> str:
    """A first title for a view: its page and what distinguishes it ("Explore … (view ablation)")."""
    detail = ", ".join(f"{name} {params[name]}" for name in SUMMARY_PARAMS if name in params)
    return clean_text(f"{page_title} ({detail})" if detail else page_title, MAX_TITLE)[0]


def add_view(page: str, page_title: str, query: dict[str, str]) -> str:
    """Append the view on screen (`page` with the link's parameters) as a slide; returns what to say."""
    mine = slides()
    if len(mine) >= MAX_SLIDES:
        return f"Your deck already has {MAX_SLIDES} slides, as many as a deck holds: delete one first."
    params = {name: value for name, value in query.items() if name not in RESERVED}
    deck, _ = parse_deck({"slides": [{"page": page, "params": params, "title": "x"}]}, [page])
    kept = deck.slides[0].query() if deck else {}
    mine.append(
        {"id": next(_IDS), "page": page, "params": kept, "title": default_title(page_title, kept), "text": ""}
    )
    return f"Added as slide {len(mine)} of your deck."


def move(slide_id: int, delta: int) -> None:
    mine = slides()
    i = next(i for i, s in enumerate(mine) if s["id"] == slide_id)
    j = min(max(i + delta, 0), len(mine) - 1)
    mine.insert(j, mine.pop(i))


def delete(slide_id: int) -> None:
    st.session_state[SLIDES_KEY] = [s for s in slides() if s["id"] != slide_id]
