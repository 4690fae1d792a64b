"""Query-parameter sync shared by the pages, so a copied link reproduces a view.

URL values are user input: every reader validates and falls back to a default, returning a
message to show instead of raising. Cached loaders for models live beside the pages that use them.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def read_int_param(name: str, default: int, lo: int, hi: int) -> tuple[int, str | None]:
    """The integer query parameter `name` within [lo, hi], or `default` with a message why."""
    raw = st.query_params.get(name)
    if raw is None or raw == "":
        return default, None
    try:
        value = int(raw)
    except ValueError:
        return default, f"The link's `{name}` value is not a whole number; showing {default} instead."
    if not lo <= value <= hi:
        return default, f"The link's `{name}` value {value} is outside {lo}–{hi}; showing {default} instead."
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
    return raw[:max_chars]


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
