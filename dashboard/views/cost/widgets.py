"""The cost page's widgets: the presenter part switch, the sentence, layer and head, the variant and
its parameters, a decoder's context n. Each writes the page's canonical session key (links.py), so
the link follows."""

from __future__ import annotations

import streamlit as st

from core.cost.variants import VARIANTS
from dashboard.content import cost as text

PRESENTER_CONTROLS = "Sentence, head and variant"


def part_ui(parts: tuple[str, ...]) -> str:
    """Presenter mode: which of the model's parts fills the screen (an encoder's three, a decoder's
    price and one more token); a part this model lacks becomes the price."""
    ss = st.session_state
    if ss.get("cost_part") not in parts:
        ss["cost_part"] = parts[0]
    return (
        st.segmented_control("Part", list(parts), format_func=text.PARTS.get, key="cost_part", required=True)
        or parts[0]
    )


def n_ui(max_tokens: int) -> int:
    """A decoder's context n for the cache's size, 1..max_tokens (links.check_n keeps it in range)."""
    return int(st.number_input(text.NEXT_PICK, min_value=1, max_value=max_tokens, step=1, key="cost_n"))


def sentence_ui(max_chars: int) -> str:
    return st.text_area(text.SENTENCE_LABEL, key="cost_text", max_chars=max_chars, height=80)


def head_ui(n_layers: int, n_heads: int) -> tuple[int, int]:
    """Layer and head (0-indexed; numbered from 1 on screen), kept inside this model's ranges."""
    ss = st.session_state
    ss["cost_layer"] = min(max(int(ss.get("cost_layer", 0)), 0), n_layers - 1)
    ss["cost_head"] = min(max(int(ss.get("cost_head", 0)), 0), n_heads - 1)
    left, right = st.columns(2)
    with left:
        layer = st.selectbox("Layer", range(n_layers), format_func=lambda i: str(i + 1), key="cost_layer")
    with right:
        head = st.selectbox("Head", range(n_heads), format_func=lambda i: str(i + 1), key="cost_head")
    return int(layer), int(head)


def variant_ui() -> tuple[str, dict[str, int]]:
    """The variant and its parameters (only the chosen variant's are drawn; the others keep their
    values in session state for the link)."""
    ss = st.session_state
    columns = st.columns(3)
    with columns[0]:
        name = st.selectbox(
            text.VARIANT_LABEL, VARIANTS, format_func=lambda v: text.VARIANT_TEXT[v][0], key="cost_variant"
        )
    for column, param in zip(columns[1:], text.VARIANT_PARAMS[name], strict=False):
        label, low, high, help_text = text.PARAMS[param]
        with column:
            st.number_input(label, min_value=low, max_value=high, step=1, key=f"cost_{param}", help=help_text)
    return name, {param: int(ss[f"cost_{param}"]) for param in text.PARAMS}
