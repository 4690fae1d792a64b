"""Query-parameter sync shared by the pages, so a copied link reproduces a view.

URL values are user input: every reader validates and falls back to a default, returning a
message to show instead of raising. Cached loaders for models live beside the pages that use them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import streamlit as st

# A str may hold lone surrogates (U+D800–U+DFFF), which UTF-8 cannot encode: such text would make
# Streamlit fail when it sends the page back to the browser, so they become U+FFFD on the way in.
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_input(text: object, max_chars: int) -> tuple[str, bool]:
    """User text made safe to process and to send back: a str, lone surrogates replaced by U+FFFD,
    at most `max_chars` characters. Returns (text, True if it was cut). A browser enforces a text
    box's max_chars, but any client can send more over the websocket."""
    text = "" if text is None else str(text)
    text = _SURROGATES.sub("\ufffd", text)
    return text[:max_chars], len(text) > max_chars


def clean_widget_text(key: str, max_chars: int, what: str = "text") -> str | None:
    """Clean the text held by the widget `key` in session state, before the widget is drawn this run.
    Returns a message for the page when the text had to be cut, else None."""
    if key not in st.session_state:
        return None
    raw = st.session_state[key]
    text, cut = clean_input(raw, max_chars)
    if text != raw:
        st.session_state[key] = text
    return f"The {what} was cut to its first {max_chars:,} characters." if cut else None


def read_int_param(name: str, default: int, lo: int, hi: int) -> tuple[int, str | None]:
    """The integer query parameter `name` within [lo, hi], or `default` with a message why."""
    raw = st.query_params.get(name)
    if raw is None or raw == "":
        return default, None
    instead = f"showing {default} instead" if lo <= default <= hi else "ignoring it"
    try:
        value = int(raw)
    except ValueError:  # also for numbers of more than 4,300 digits
        return default, f"The link's `{name}` value is not a whole number; {instead}."
    if not lo <= value <= hi:
        shown = value if abs(value) < 10**12 else "(a huge number)"
        return default, f"The link's `{name}` value {shown} is outside {lo}–{hi}; {instead}."
    return value, None


def read_choice_param(name: str, choices: Sequence[str], default: str) -> tuple[str, str | None]:
    """The query parameter `name` if it is one of `choices`, else `default` with a message why."""
    raw = st.query_params.get(name)
    if raw is None or raw == "":
        return default, None
    if raw in choices:
        return raw, None
    return default, f"The link asks for an unknown `{name}`; showing “{default}” instead."


def read_text_param(name: str, default: str, max_chars: int) -> str:
    """Free text from the URL, capped in length (the page shows it as plain text only)."""
    raw = st.query_params.get(name)
    if raw is None:
        return default
    return clean_input(raw, max_chars)[0]


def write_params(**values: object) -> None:
    """Mirror the current view into the URL; None removes a parameter. Writes only on change,
    since every write to st.query_params is sent to the browser."""
    for name, value in values.items():
        if value is None:
            if name in st.query_params:
                del st.query_params[name]
            continue
        text = str(value)
        if st.query_params.get(name) != text:
            st.query_params[name] = text
