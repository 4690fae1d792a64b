"""The deck page put together: the ready-made lectures, the teacher's slides (order, title, text),
then presenting, saving, opening and sharing."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import streamlit as st

from dashboard.content import deck as text
from dashboard.decks import bar, mine
from dashboard.decks.model import (
    LINK_PREFIX,
    MAX_JSON_BYTES,
    MAX_LINK_CHARS,
    MAX_TEXT,
    MAX_TITLE,
    Deck,
    clean_text,
    deck_from_json,
    deck_to_json,
    decode_link,
    encode_link,
)
from dashboard.state import clean_widget_text, write_params
from dashboard.widgets import md

LOG = logging.getLogger(__name__)
FILE_KEY = "deck_file"
# This page's own link carries the teacher's deck, in the share link's format, so a reload, a
# bookmark and the back button keep it while nothing is stored on the server. Not `deck`: that
# parameter presents a deck on any page.
LINK_PARAM = "mine"
WRITTEN_KEY = "deck_mine_link"  # the value this session last wrote there (None: none)


def render(pages: Mapping[str, object]) -> None:
    try:
        read_link(pages)
        st.title(text.TITLE)
        st.markdown(text.INTRO)
        ready_ui(pages)
        st.header(text.YOURS)
        for note in st.session_state.pop("deck_page_notes", []):
            st.warning(md(note), icon=":material/slideshow:")
        title_ui()
        slides_ui()
        deck = mine.as_deck(pages)
        actions_ui(deck)
        open_ui(pages)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("deck page failed")
        st.error(f"Something went wrong on the deck page ({type(err).__name__}). Your slides are kept.")


def read_link(pages: Mapping[str, object]) -> None:
    """Take the deck in this page's link when it is not the one this session wrote last: a reload,
    a bookmark, the back button. Slides the session gained since it wrote (a view added on another
    page) win, and the link is rewritten with them at the end of the run."""
    ss = st.session_state
    raw, written = st.query_params.get(LINK_PARAM), ss.get(WRITTEN_KEY)
    if raw is None or raw == written:
        return
    held = mine.as_deck(pages)
    if held is not None and encode_link(held) != written:
        return
    deck, note = decode_link(raw, pages)
    if deck is not None:
        _use(deck)
        ss[WRITTEN_KEY] = raw
    if note:
        ss.setdefault("deck_page_notes", []).append(note)


def write_link(value: str | None) -> None:
    """Keep the deck's link value in this page's link (None: no deck, or too large to keep)."""
    write_params(**{LINK_PARAM: value})
    st.session_state[WRITTEN_KEY] = value


def _use(deck: Deck) -> None:
    """Make `deck` the teacher's deck, its title in the title box (a callback, or before that box is
    drawn)."""
    mine.replace(deck)
    st.session_state["deck_w_title"] = deck.title


def ready_ui(pages: Mapping[str, object]) -> None:
    """The built-in lectures this app can give, each to present or to copy into the teacher's deck."""
    st.header(text.READY)
    decks = dict(bar.offered(pages))
    last = st.session_state.get("deck_last")
    if last and last.startswith(LINK_PREFIX):
        shared, _ = bar.read_deck(last, pages)
        if shared is not None:
            decks[last] = shared
    for raw, deck in decks.items():
        with st.container(horizontal=True, vertical_alignment="center"):
            label = f"**{md(deck.title)}** · {len(deck.slides)} slides"
            if raw.startswith(LINK_PREFIX):
                label = md(text.OPENED_FROM_LINK.format(title=deck.title, n=len(deck.slides)))
            else:
                label += f" · `?deck={raw}`"
            st.markdown(label, width="stretch")
            st.button(
                "Present",
                key=f"deck_present_{raw[:40]}",
                on_click=bar.start,
                args=(raw,),
                icon=":material/slideshow:",
            )
            st.button(
                "Copy into my deck",
                key=f"deck_copy_{raw[:40]}",
                on_click=_use,
                args=(deck,),
                type="tertiary",
            )


def title_ui() -> None:
    ss = st.session_state
    clean_widget_text("deck_w_title", MAX_TITLE, "title")
    if "deck_w_title" not in ss:
        ss["deck_w_title"] = mine.title()
    value = st.text_input(text.TITLE_LABEL, key="deck_w_title", max_chars=MAX_TITLE)
    ss[mine.TITLE_KEY] = clean_text(value, MAX_TITLE)[0] or mine.DEFAULT_TITLE


def slides_ui() -> None:
    """One box per slide: where it goes, its title and text, and moving or deleting it."""
    slides = mine.slides()
    if not slides:
        st.info(text.EMPTY)
        return
    for i, slide in enumerate(slides):
        with st.container(border=True, key=f"deck_slide_{slide['id']}"):
            _slide_ui(i, len(slides), slide)


def _slide_ui(i: int, n: int, slide: dict) -> None:
    sid, ss = slide["id"], st.session_state
    where = " ".join(f"{name}={value}" for name, value in slide["params"].items())
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown(f"**Slide {i + 1}** · /{md(slide['page'])} {md(where[:100])}", width="stretch")
        st.button(
            "Up",
            key=f"deck_up_{sid}",
            on_click=mine.move,
            args=(sid, -1),
            disabled=i == 0,
            icon=":material/arrow_upward:",
            type="tertiary",
        )
        st.button(
            "Down",
            key=f"deck_down_{sid}",
            on_click=mine.move,
            args=(sid, 1),
            disabled=i == n - 1,
            icon=":material/arrow_downward:",
            type="tertiary",
        )
        st.button(
            "Delete",
            key=f"deck_delete_{sid}",
            on_click=mine.delete,
            args=(sid,),
            icon=":material/delete:",
            type="tertiary",
        )
    for field, label, limit, lines in (
        ("title", text.SLIDE_TITLE_LABEL, MAX_TITLE, 1),
        ("text", text.SLIDE_TEXT_LABEL, MAX_TEXT, 4),
    ):
        key = f"deck_w_{field}_{sid}"
        clean_widget_text(key, limit, field)
        if key not in ss:
            ss[key] = slide[field]
        widget = st.text_input if lines == 1 else st.text_area
        value = widget(label, key=key, max_chars=limit, **({"height": 100} if lines > 1 else {}))
        slide[field] = clean_text(value, limit, lines)[0]


def share_link(value: str) -> str:
    """The full link that presents the deck `value` from slide 1, on this server."""
    here = st.context.url or ""
    root = here.rsplit("/", 1)[0] if here.count("/") > 2 else here.rstrip("/")
    return f"{root}/?deck={value}&slide=1"


def actions_ui(deck: Deck | None) -> None:
    """Present, save as a file, and the share link (or why there is none)."""
    value = encode_link(deck) if deck is not None else None
    fits = value is not None and len(value) <= MAX_LINK_CHARS
    write_link(value if fits else None)
    if fits or deck is None:
        st.caption(text.KEPT)
    if deck is None:
        return
    with st.container(horizontal=True):
        st.button(
            "Present from slide 1", key="deck_present_mine", on_click=bar.start, args=(value,),
            type="primary", icon=":material/slideshow:", disabled=not fits,
        )  # fmt: skip
        st.download_button(
            "Save as a file (JSON)", deck_to_json(deck), file_name="attention-explorer_deck.json",
            mime="application/json", key="deck_save", icon=":material/download:", on_click="ignore",
        )  # fmt: skip
    if fits:
        st.caption(text.SHARE)
        st.text(share_link(value))  # plain text, never markdown or an href
    else:
        st.warning(text.TOO_LONG.format(chars=len(value), limit=MAX_LINK_CHARS), icon=":material/link_off:")


def _open_file(pages: Mapping[str, object]) -> None:
    upload = st.session_state.get(FILE_KEY)
    if upload is None:
        return
    data = upload.read(MAX_JSON_BYTES + 1)
    deck, note = deck_from_json(data, pages)
    notes = [note] if note else []
    if deck is not None:
        _use(deck)
        n = len(deck.slides)
        notes.insert(0, text.OPENED.format(title=deck.title, n=n, s="s" * (n != 1)))
    st.session_state["deck_page_notes"] = notes


def open_ui(pages: Mapping[str, object]) -> None:
    st.file_uploader(
        text.OPEN_LABEL, type=["json"], key=FILE_KEY, on_change=_open_file, args=(pages,), max_upload_size=1
    )
