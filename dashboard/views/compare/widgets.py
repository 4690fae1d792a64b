"""The compare page's widgets: each `*_ui()` draws and returns what the user chose; the callbacks
change the page state. Computing happens in core/measures/compare.py and page.py.

Widgets whose options depend on the model or the texts (layer, head, focus word) get keys that carry
those options' signature and are seeded from the canonical state ("compare_layer", ...), so a new
model or text never meets a stale widget value.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.measures.compare import HeadChange
from dashboard import state
from dashboard.content import compare as text
from dashboard.content.compare import OWN, PRESENT_VIEWS, PRESET_TITLES, PRESETS
from dashboard.hosted import Limits
from dashboard.state import signature
from dashboard.views.compare import links
from dashboard.views.compare.links import max_chars

TOP_BUTTONS = 5  # the top heads offered as buttons above the table


def reset_widgets(name: str) -> None:
    state.reset_widgets("compare", name)


def bound_key(name: str, sig: object, value: object) -> str:
    return state.bound_key("compare", name, sig, value)


# ---- callbacks -------------------------------------------------------------------------------------


def _on_preset() -> None:
    ss = st.session_state
    name = ss.get("compare_preset")
    if name in PRESETS:
        preset = PRESETS[name]
        ss["compare_text"], ss["compare_text2"] = preset.text, preset.text2
        ss["compare_focus"] = preset.focus
        ss["compare_pending_best"] = True  # open the head that changed most, once it is known
        reset_widgets("focus")
        if note := links.fit_model_to_preset():  # said by the run this callback starts
            ss.setdefault("compare_replay", []).append(note)


def _on_text_change() -> None:
    """Editing a box makes the pair "your own"."""
    ss = st.session_state
    name = ss.get("compare_preset")
    if name in PRESETS:
        preset = PRESETS[name]
        if (ss.get("compare_text"), ss.get("compare_text2")) != (preset.text, preset.text2):
            ss["compare_preset"] = OWN


def open_head(layer: int, head: int) -> None:
    """Callback: show (layer, head) in the heatmaps."""
    ss = st.session_state
    ss["compare_layer"], ss["compare_head"] = int(layer), int(head)
    reset_widgets("layer")
    reset_widgets("head")


# ---- the two sentences -------------------------------------------------------------------------------


def sentences_ui(limits: Limits) -> tuple[str, str]:
    """The preset buttons and the two sentence boxes; returns the two texts."""
    ss = st.session_state
    if ss.get("compare_preset") not in PRESET_TITLES:
        ss["compare_preset"] = OWN
    st.segmented_control(
        "Sentence pair",
        list(PRESET_TITLES),
        format_func=PRESET_TITLES.get,
        key="compare_preset",
        on_change=_on_preset,
        required=True,
    )
    name = ss.get("compare_preset")
    st.caption(PRESETS[name].caption if name in PRESETS else text.OWN_CAPTION)
    cols = st.columns(2)
    for col, key, label in (
        (cols[0], "compare_text", text.SENTENCE1_LABEL),
        (cols[1], "compare_text2", text.SENTENCE2_LABEL),
    ):
        with col:
            st.text_area(
                label,
                key=key,
                height=80,
                max_chars=max_chars(limits),
                on_change=_on_text_change,
                help=text.SENTENCE_HELP.format(max_tokens=limits.max_tokens),
            )
    return ss.get("compare_text", ""), ss.get("compare_text2", "")


# ---- layer, head, focus ------------------------------------------------------------------------------


def layer_head_ui(n_layers: int, n_heads: int, cols) -> tuple[int, int]:
    """Layer and head sliders (in the two columns `cols`), shown 1-indexed, bound to compare_layer /
    compare_head."""
    ss = st.session_state
    layer = min(max(int(ss.get("compare_layer", 0)), 0), n_layers - 1)
    head = min(max(int(ss.get("compare_head", 0)), 0), n_heads - 1)
    with cols[0]:
        layer = st.select_slider(
            f"Layer (1–{n_layers})",
            options=list(range(n_layers)),
            format_func=lambda i: str(i + 1),
            key=bound_key("layer", n_layers, layer),
        )
    with cols[1]:
        head = st.select_slider(
            f"Head (1–{n_heads})",
            options=list(range(n_heads)),
            format_func=lambda i: str(i + 1),
            key=bound_key("head", n_heads, head),
        )
    ss["compare_layer"], ss["compare_head"] = layer, head
    return layer, head


def focus_ui(options: Sequence[str], default: str) -> str:
    """The focus word, among the words both sentences share (word references)."""
    ss = st.session_state
    current = ss.get("compare_focus")
    seed = current if current in options else default
    chosen = st.selectbox(
        text.FOCUS_LABEL,
        list(options),
        key=bound_key("focus", signature(tuple(options)), seed),
        help=text.FOCUS_HELP,
    )
    ss["compare_focus"] = chosen
    return chosen


def present_view_ui(views: Sequence[str]) -> str:
    """Presenter mode: one chart area, showing one of `views` (keys of PRESENT_VIEWS: side by side,
    the difference where the tokens line up, patching where their numbers agree)."""
    if st.session_state.get("compare_show") not in views:
        st.session_state["compare_show"] = "side"
    shown = st.segmented_control(
        "Show", list(views), format_func=PRESENT_VIEWS.get, key="compare_show", required=True
    )
    return shown or "side"


# ---- the ranking -------------------------------------------------------------------------------------


def ranking_frame(ranked: Sequence[HeadChange], words1: Sequence[str], words2: Sequence[str]) -> pd.DataFrame:
    """The ranking as a table, layers and heads from 1."""
    return pd.DataFrame(
        {
            "layer": [c.layer + 1 for c in ranked],
            "head": [c.head + 1 for c in ranked],
            "change": [c.change for c in ranked],
            "sentence 1: top word": [words1[c.top1] for c in ranked],
            "weight 1": [c.weight1 for c in ranked],
            "sentence 2: top word": [words2[c.top2] for c in ranked],
            "weight 2": [c.weight2 for c in ranked],
        }
    )


def ranking_ui(ranked: Sequence[HeadChange], words1: Sequence[str], words2: Sequence[str], sig: str) -> None:
    """The top heads as buttons, and every head in a table whose row click opens that head."""
    heads = [(c.layer, c.head) for c in ranked]
    st.caption(text.OPEN_TOP)
    with st.container(horizontal=True):
        for rank, change in enumerate(ranked[:TOP_BUTTONS], start=1):
            st.button(
                f"Layer {change.layer + 1}, head {change.head + 1}: {change.change:.2f}",
                key=f"compare_top_{rank}",
                on_click=open_head,
                args=(change.layer, change.head),
            )
    key = f"compare_rank_{sig}"

    def on_select() -> None:
        rows = st.session_state[key]["selection"]["rows"]
        if rows and 0 <= rows[0] < len(heads):
            open_head(*heads[rows[0]])

    number = st.column_config.NumberColumn(format="%.3f")
    st.dataframe(
        ranking_frame(ranked, words1, words2),
        key=key,
        on_select=on_select,
        selection_mode="single-row",
        hide_index=True,
        height=300,
        column_config={"change": number, "weight 1": number, "weight 2": number},
        width="stretch",
    )
    st.caption(text.RANK_HELP)
