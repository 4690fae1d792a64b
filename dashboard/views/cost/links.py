"""The cost page's links: its query parameters as one dashboard.state.PageLinks table, and the checks
that need the model or the sentence.

URL parameters: text, model, engine (dashboard/model_pick.py; the variants need the NumPy engine),
layer, head (0-indexed), variant, w, s, r, m, k (the variants' parameters), n (a decoder's context
for the KV cache's size; checked against the model once it is loaded), part (presenter mode:
"price", "head", "model" or "next"). A parameter out of range becomes the nearest valid value, and the page
says so. A link is read on the session's first run; the URL is written at the end of every run.
"""

from __future__ import annotations

import streamlit as st

from core.cost.variants import VARIANTS
from dashboard.content.cost import DEFAULT_TEXT, N_NOTE, PARAMS, PARTS
from dashboard.hosted import Limits
from dashboard.model_pick import model_url_params
from dashboard.state import (
    PageLinks,
    Parsed,
    UrlParam,
    choice_param,
    clamped_int_param,
    position_note,
    position_param,
    text_param,
)

PAGE = "cost"
MAX_TEXT_CHARS = 2_000
DEFAULTS = {"w": 2, "s": 4, "r": 2, "m": 64, "k": 8}  # core.cost.variants.Variant's
KEEP = (
    "cost_text",
    "cost_layer",
    "cost_head",
    "cost_variant",
    "cost_part",
    "cost_n",
    *(f"cost_{name}" for name in DEFAULTS),
)


def max_chars(limits: Limits) -> int:
    return min(MAX_TEXT_CHARS, limits.max_text_chars)


def page_links(limits: Limits) -> PageLinks:
    return PageLinks(
        PAGE,
        (
            text_param("text", "cost_text", DEFAULT_TEXT, max_chars(limits)),
            *model_url_params(PAGE, limits),
            position_param("layer", "cost_layer"),  # checked against the model: check_positions
            position_param("head", "cost_head"),
            choice_param("variant", "cost_variant", "window", VARIANTS),
            *(
                clamped_int_param(name, f"cost_{name}", default, PARAMS[name][1], PARAMS[name][2])
                for name, default in DEFAULTS.items()
            ),
            choice_param("part", "cost_part", "price", list(PARTS)),
            UrlParam("n", "cost_n", None, _parse_n),  # checked against the model: check_n
        ),
        keep=KEEP,
    )


def _parse_n(raw: str) -> Parsed:
    """Any whole number (the model's context is not known yet); anything else is left unset."""
    try:
        return int(raw), None
    except ValueError:  # also for numbers of more than 4,300 digits
        return None, "The link's `n` value is not a whole number; using the model's whole context."


def init_state(limits: Limits) -> list[str]:
    """Seed the page state from the link once per session; return messages about bad URL values."""
    links = page_links(limits)
    if not links.url_was_read():  # checked once the model is known (check_positions)
        st.session_state["cost_check_link"] = "layer" in st.query_params or "head" in st.query_params
        st.session_state["cost_check_n"] = "n" in st.query_params
    notes = links.read_url()
    links.restore()
    return notes


def check_positions(n_layers: int, n_heads: int) -> list[str]:
    """Once per session, with the model: a link's layer or head the model does not have becomes the
    nearest one it has, with a note in the model's own numbering (from 1 on screen)."""
    ss = st.session_state
    if not ss.pop("cost_check_link", False):
        return []
    notes = []
    for name, size, what in (("layer", n_layers, "layers"), ("head", n_heads, "heads")):
        ss[f"cost_{name}"], note = position_note(name, ss.get(f"cost_{name}", 0), size, what)
        notes += [note] if note else []
    return notes


def check_n(max_tokens: int) -> str | None:
    """A decoder's context n for the cache, kept within 1..max_tokens (unset: the whole context);
    a link's value outside becomes the nearest, with a note, once per session."""
    ss = st.session_state
    value = ss.get("cost_n")
    value = max_tokens if not isinstance(value, int) else value
    nearest = min(max(value, 1), max_tokens)
    ss["cost_n"] = nearest
    if not ss.pop("cost_check_n", False) or nearest == value:
        return None
    shown = value if abs(value) < 10**12 else "(a huge number)"
    return N_NOTE.format(shown=shown, max_tokens=max_tokens, nearest=nearest)


def write_url(limits: Limits, model: str | None = None) -> None:
    overrides = {} if model is None else {"model": model}
    page_links(limits).write_url(**overrides)
