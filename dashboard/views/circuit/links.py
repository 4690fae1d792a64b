"""The circuit page's links: its query parameters as one dashboard.state.PageLinks table, and the link
that opens a head on explore.

URL parameters: view (graph | direct | q | kv | prev | logit | gpt2: dashboard.content.circuit.VIEWS),
part (the kv view's grid: kv, the keys and values summed, | k | v),
prompt (which of the circuit's prompts explore opens with, 0-indexed), layer, head (the picked head,
0-indexed; checked against the circuit once it is read). A link is read on the session's first run;
the URL is written at the end of every run.
"""

from __future__ import annotations

from urllib.parse import quote

import streamlit as st

from core.models.smollm2 import SMOLLM2_KEY
from dashboard.content.circuit import PARTS, VIEWS
from dashboard.state import PageLinks, choice_param, int_param, position_note

PAGE = "circuit"
EXPLORE_TEXT_CHARS = 2000  # a prompt carried to explore is cut to this many characters
KEEP = ("circuit_view", "circuit_part", "circuit_prompt", "circuit_layer", "circuit_head", "circuit_own")
MAX_INDEX = 10_000


def page_links() -> PageLinks:
    return PageLinks(
        PAGE,
        (
            choice_param("view", "circuit_view", "graph", tuple(VIEWS)),
            choice_param("part", "circuit_part", "kv", tuple(PARTS)),
            int_param("prompt", "circuit_prompt", 0, 0, MAX_INDEX),
            # any whole number here; check_positions moves it into the circuit's range and says so
            int_param("layer", "circuit_layer", None, -MAX_INDEX, MAX_INDEX),
            int_param("head", "circuit_head", None, -MAX_INDEX, MAX_INDEX),
        ),
        keep=KEEP,
    )


def init_state() -> list[str]:
    """The link's values into session state once per session; notes about values that were not used."""
    links = page_links()
    notes = links.read_url()
    links.restore()
    return notes


def check_positions(shape: tuple[int, int], n_prompts: int) -> list[str]:
    """The link's prompt, layer and head against the circuit read (the nearest valid value, said)."""
    ss, notes = st.session_state, []
    for name, size, what in (("layer", shape[0], "layers"), ("head", shape[1], "heads")):
        key = f"circuit_{name}"
        if ss.get(key) is not None:
            ss[key], note = position_note(name, int(ss[key]), size, what)
            notes += [note] if note else []
    if int(ss.get("circuit_prompt") or 0) >= n_prompts:
        notes.append(f"The link's `prompt` is past the circuit's {n_prompts} prompts; showing the first.")
        ss["circuit_prompt"] = 0
    return notes


def explore_url(prompt: str, layer: int, head: int, model: str = SMOLLM2_KEY) -> str:
    """explore's head view of this head on `prompt` (0-indexed in the URL); the text only URL-encoded."""
    text = quote(prompt[:EXPLORE_TEXT_CHARS], safe="")
    return f"/explore?model={quote(model, safe='')}&text={text}&view=head&layer={layer}&head={head}"


def write_url() -> None:
    page_links().write_url()
