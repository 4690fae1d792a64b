"""The explore page's widgets: each `*_ui()` draws and returns what the user chose; the callbacks
change the page state. Computing happens elsewhere.

Widgets whose options depend on the model or the tokens (layer, head, focus token) get keys that
include those options' signature (`bound_key`) and are seeded from the canonical state
("explore_layer", ...), so a new model or text never meets a stale widget value.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.measures.analysis import TokenView
from core.models.reading import Reading
from core.models.result import AttentionResult
from dashboard import clicker, state
from dashboard.content import pairs as pairs_text
from dashboard.content.explore import (
    EXAMPLES,
    EXAMPLES_FOLD,
    FOLD_HIDE,
    FOLD_MERGE,
    HIDE_HELP,
    HIDE_LABEL,
    MERGE_HELP,
    MERGE_LABEL,
    SENTENCE_LABEL,
    VIEWS,
)
from dashboard.hosted import Limits
from dashboard.presenter import owns_clicker, presenting
from dashboard.widgets import md

MAX_TEXT_CHARS = 10_000
PAIR_KEY = "explore_text_b"  # sentence B's box (the link's `pair`)


def max_chars(limits: Limits) -> int:
    """The longest sentence the page keeps, from the box or a link."""
    return min(MAX_TEXT_CHARS, limits.max_text_chars)


# ---- widget keys bound to canonical state ----------------------------------------------------------


def reset_widgets(name: str) -> None:
    state.reset_widgets("explore", name)


def bound_key(name: str, sig: object, value: object) -> str:
    return state.bound_key("explore", name, sig, value)


# ---- callbacks -------------------------------------------------------------------------------------


def _on_example() -> None:
    ss = st.session_state
    name = ss.get("explore_example")
    if name in EXAMPLES:
        ss["explore_text"] = EXAMPLES[name].text
        ss["explore_pending"] = name
        ss["explore_pending_best_head"] = True


def _on_text_change() -> None:
    ss = st.session_state
    name = ss.get("explore_example")
    if name in EXAMPLES and ss.get("explore_text") != EXAMPLES[name].text:
        ss["explore_example"] = None


def open_head(layer: int, head: int) -> None:
    """Callback: show (layer, head) in the head view."""
    ss = st.session_state
    ss["explore_layer"], ss["explore_head"], ss["explore_view"] = int(layer), int(head), "head"
    for name in ("layer", "head", "model_layer", "model_head"):
        reset_widgets(name)


def on_grid_select() -> None:
    """Callback: a click on a model-view thumbnail opens that head."""
    event = st.session_state.get("explore_model_grid")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for point in points:
        data = point.get("customdata")  # [layer, head]; a typed array may arrive as {"0": l, "1": h}
        if isinstance(data, dict):
            data = [data.get("0"), data.get("1")]
        if isinstance(data, list) and len(data) == 2 and all(isinstance(v, int | float) for v in data):
            open_head(int(data[0]), int(data[1]))
            return


# ---- the sentence and the options ------------------------------------------------------------------


def sentence_ui(limits: Limits, reading: Reading, max_tokens: int) -> tuple[str, bool, bool]:
    """The examples gallery, the two token toggles and the sentence box, with sentence B's box beside
    it (PAIR_KEY; the page reads it: dashboard/views/explore/pairs.py): (text, merge word pieces,
    hide the special tokens). The gallery and the toggles fit the model (`reading`): no word pieces
    to merge for a model that reads letters, no toggle to hide special tokens where none are added.
    Once there is a sentence, the examples and the toggles fold into one line, so that at 1280 x 800
    the view's answer and chart reach the first screen (presenter mode has folded every control).
    `max_tokens`: what the page reads of this model (its context, or this server's limit)."""
    ss = st.session_state
    offered = [name for name, example in EXAMPLES.items() if example.letters == reading.letters]
    if ss.get("explore_example") not in offered:
        ss["explore_example"] = None  # another model's example: its text stays in the box
    fold = not presenting() and bool(str(ss.get("explore_text", "")).strip())
    example = ss.get("explore_example")
    shown = f" · {EXAMPLES[example].title}" if example in EXAMPLES else ""
    specials = md(reading.specials_text)
    toggles = [FOLD_MERGE] * (not reading.letters) + [FOLD_HIDE.format(specials=specials)] * bool(specials)
    title = EXAMPLES_FOLD.format(example=shown, toggles=f" · {', '.join(toggles)}" if toggles else "")
    merge = hide = False
    with st.expander(title, icon=":material/list:") if fold else st.container():
        st.pills(
            "Examples",
            offered,
            format_func=lambda name: EXAMPLES[name].title,
            key="explore_example",
            on_change=_on_example,
        )
        if example in EXAMPLES:
            st.caption(EXAMPLES[example].caption)
        cols = st.columns(2)
        if not reading.letters:
            merge = cols[0].toggle(MERGE_LABEL, key="explore_merge", help=MERGE_HELP)
        if specials:
            hide = cols[1].toggle(HIDE_LABEL.format(specials=specials), key="explore_hide", help=HIDE_HELP)
    sentence_a, sentence_b = st.columns([3, 2])  # B beside A: the chart stays on the first screen
    sentence_a.text_area(
        SENTENCE_LABEL.format(max_tokens=max_tokens),
        key="explore_text",
        height=68,
        max_chars=max_chars(limits),
        on_change=_on_text_change,
    )
    sentence_b.text_area(
        pairs_text.PAIR_LABEL,
        key=PAIR_KEY,
        height=68,
        max_chars=pairs_text.MAX_PAIR_CHARS,
        placeholder=pairs_text.PAIR_PLACEHOLDER,
        help=pairs_text.PAIR_HELP,
    )
    return ss.get("explore_text", ""), merge, hide


def view_ui(views: list[str] | None = None) -> str:
    """The view switch over `views` (default: every view), on a row of its own (beside the toggles,
    at 1280 px its first option was cut off)."""
    views = list(VIEWS) if views is None else views
    view = st.segmented_control(
        "View", views, format_func=lambda v: VIEWS[v], key="explore_view", required=True
    )
    return view or "head"


# ---- layer, head and token pickers -----------------------------------------------------------------


def layer_head_ui(result: AttentionResult, *, with_head: bool = True) -> tuple[int, int]:
    """Layer (and head) sliders, shown 1-indexed, bound to explore_layer / explore_head."""
    ss = st.session_state
    n_layers, n_heads = result.n_layers, result.n_heads
    layer = min(int(ss.get("explore_layer", 0)), n_layers - 1)
    head = min(int(ss.get("explore_head", 0)), n_heads - 1)
    cols = st.columns(2)
    with cols[0]:
        layer = st.select_slider(
            f"Layer (1–{n_layers})",
            options=list(range(n_layers)),
            format_func=lambda i: str(i + 1),
            key=bound_key("layer", n_layers, layer),
        )
    if with_head:
        with cols[1]:
            head = st.select_slider(
                f"Head (1–{n_heads})",
                options=list(range(n_heads)),
                format_func=lambda i: str(i + 1),
                key=bound_key("head", n_heads, head),
            )
    ss["explore_layer"], ss["explore_head"] = layer, head
    return layer, head


def _default_item(view: TokenView, special: np.ndarray, skip: int | None = None) -> int:
    """The first shown item that is not a special token (and not `skip`)."""
    for item, (start, _stop) in enumerate(view.shown_spans):
        if not special[start] and item != skip:
            return item
    return 0


def token_picker_ui(
    name: str,
    label: str,
    view: TokenView,
    result: AttentionResult,
    sig: str,
    token: int | None,
    avoid: int | None = None,
) -> tuple[int, bool]:
    """A selectbox over the shown tokens, seeded from `token` (the word `explore_<name>` names,
    resolved by the page) or the page's default. Returns (the shown item, whether it is the user's
    choice rather than the default); the caller stores the choice as a word reference."""
    item = view.item_of_token(token) if token is not None and token < result.n_tokens else None
    default = _default_item(view, result.special_mask, skip=avoid)
    labels = view.labels
    key = bound_key(name, sig, default if item is None else item)
    chosen = st.selectbox(
        label, list(range(view.n_items)), format_func=lambda i: f"{labels[i]}  (#{i + 1})", key=key
    )
    return chosen, item is not None or chosen != default


# ---- stepping heads or layers with the keyboard (a presentation clicker sends PageDown / PageUp) ----


def _step(result_shape: tuple[int, int], by: str, delta: int) -> None:
    """Move to the next (delta 1) or previous (-1) head, across layers; or layer, in the lines view."""
    ss = st.session_state
    n_layers, n_heads = result_shape
    layer, head = int(ss.get("explore_layer", 0)), int(ss.get("explore_head", 0))
    if by == "layer":
        layer = (layer + delta) % n_layers
    else:
        flat = (layer * n_heads + head + delta) % (n_layers * n_heads)
        layer, head = divmod(flat, n_heads)
    ss["explore_layer"], ss["explore_head"] = layer, head
    ss[f"explore_w_layer_{n_layers}"], ss[f"explore_w_head_{n_heads}"] = layer, head


def step_ui(result: AttentionResult, by: str = "head") -> None:
    """Previous / next buttons for heads (or layers), also on ← / PageUp and → / PageDown (a
    presentation clicker: dashboard/clicker.py; not while a deck is on, whose slides take the keys)."""
    shape = (result.n_layers, result.n_heads)
    moves = {name: (_step, (shape, by, delta)) for name, delta in (("prev", -1), ("next", 1))}
    with st.container(horizontal=True, horizontal_alignment="distribute"):
        for name, label in (("prev", f"Previous {by}"), ("next", f"Next {by}")):
            st.button(
                label,
                key=f"explore_{name}",
                on_click=moves[name][0],
                args=moves[name][1],
                type="tertiary",
                help="Also → / PageDown and ← / PageUp (a presentation clicker).",
            )
    if owns_clicker():
        clicker.bind(moves["next"], moves["prev"])


def downloads_ui(result: AttentionResult) -> None:
    """The whole result in the CLI's formats (core.export): JSON and NPZ."""
    from core.export import to_json, to_npz

    st.caption("The whole result (every layer and head), as `python -m core attend` writes it:")
    with st.container(horizontal=True):
        # written when clicked, not on every run: at 512 tokens the JSON alone is about 200 MB
        for label, write, ext, mime in (
            ("JSON", to_json, "json", "application/json"),
            ("NPZ", to_npz, "npz", "application/octet-stream"),
        ):
            st.download_button(
                label,
                lambda write=write: write(result),
                file_name=f"attention-explorer_explore_result.{ext}",
                mime=mime,
                key=f"explore_download_{ext}",
                icon=":material/download:",
                on_click="ignore",
            )


def present_part_ui(key: str, label: str, parts: dict[str, str]) -> str:
    """Presenter mode's choice of which part of a view fills the screen (no scrolling on a
    projector): a segmented control over `parts` {value: label}, the first one by default."""
    first = next(iter(parts))
    if st.session_state.get(key) not in parts:
        st.session_state[key] = first
    part = st.segmented_control(label, list(parts), format_func=parts.get, key=key, required=True)
    return part or first
