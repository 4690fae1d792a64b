"""The learn page's widgets. Each *_ui() draws its widgets and returns their values; computing
happens elsewhere. Every widget has a `learn_*` key, which links.py mirrors into the URL."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import streamlit as st

from core.lesson.attention import MASK_KINDS
from core.lesson.toy import MAX_TOKENS
from core.lesson.worked_examples import WorkedExample
from dashboard import clicker
from dashboard.content import pairs as pairs_text
from dashboard.content.learn import (
    D_K_CHOICES,
    INPUT_TITLES,
    MODE_LABELS,
    MODES,
    SENTENCES,
    STEP_VIEW_LABELS,
)
from dashboard.presenter import owns_clicker
from dashboard.views.learn.links import DEFAULTS, MAX_CHARS

INPUT_LIMIT = 1000.0  # edited numbers are clipped to ±this, so exp() and products stay finite
SEGMENTS_MAX = 8  # more choices than this go in a drop-down, not a row of buttons


def mode_ui() -> str:
    """The page's modes (content.learn.MODES: the toy model, the real models, the worked examples and
    the translator's cross-attention)."""
    if st.session_state.get("learn_mode") not in MODES:
        st.session_state["learn_mode"] = "sentence"
    mode = st.segmented_control(
        "What to compute", MODES, format_func=MODE_LABELS.get, key="learn_mode", required=True
    )
    return mode if mode in MODES else "sentence"


def _pick_sentence(examples: dict[str, tuple[str, str]]) -> None:
    pick = st.session_state.get("learn_pick")
    if pick in examples:
        st.session_state["learn_text"] = examples[pick][1]
    st.session_state["learn_pick"] = None  # a ready example is a one-off action, not a state


def sentence_ui(examples: dict[str, tuple[str, str]] = SENTENCES) -> str:
    """The ready examples (name -> (button, text): English ones, or runs of letters for a decoder
    that reads letters) and the sentence box."""
    st.pills(
        "Ready examples",
        list(examples),
        format_func=lambda k: examples[k][0],
        key="learn_pick",
        on_change=_pick_sentence,
        args=(examples,),
    )
    text = st.text_input(
        "Sentence",
        key="learn_text",
        max_chars=MAX_CHARS,
        placeholder="Type a sentence, e.g. The cat sat on the mat",
        help=f"Split into words and punctuation; the first {MAX_TOKENS} tokens are used.",
    )
    return text or ""


def pair_ui() -> str | None:
    """Sentence B's box (the real BERT's mode): sentence B stripped, or None for none. Only spaces
    are said in one line and read as none."""
    raw = st.text_input(
        pairs_text.PAIR_LABEL,
        key="learn_text_b",
        max_chars=pairs_text.MAX_PAIR_CHARS,
        placeholder=pairs_text.PAIR_PLACEHOLDER,
        help=pairs_text.PAIR_HELP,
    )
    if raw and not raw.strip():
        st.caption(pairs_text.ONLY_SPACES)
    return (raw.strip() or None) if raw else None


def settings_ui() -> dict:
    """The toy model's controls, in one bordered row. Returns ToySettings keyword arguments."""
    with st.container(border=True):
        # the toggles' column wide enough for their labels on a 1280 px screen
        c = st.columns([0.9, 0.9, 1.1, 1, 1.7, 1.1, 1.1])
        c[0].number_input("d_model", 1, 64, step=1, key="learn_d_model", help="Width of every token vector.")
        c[1].number_input("Heads", 1, 8, step=1, key="learn_heads", help="Heads that attend in parallel.")
        c[2].selectbox(
            "d_k per head",
            D_K_CHOICES,
            format_func=lambda v: "auto" if v == 0 else str(v),
            key="learn_d_k",
            help="Width of one head's queries, keys and values. Auto is d_model ÷ heads, "
            "the usual choice (BERT-base: 768 ÷ 12 = 64; the bundled all-MiniLM-L6-v2: 384 ÷ 12 = 32).",
        )
        c[3].number_input("Seed", 0, 2**31 - 1, step=1, key="learn_seed", help="Same seed, same numbers.")
        c[4].toggle("Scale by √d_k", key="learn_scale", help="Switch off to see the softmax saturate.")
        c[4].toggle(
            "Positions", key="learn_pe", help="Add sinusoidal positional encodings to the embeddings."
        )
        c[5].selectbox(
            "Mask",
            MASK_KINDS,
            key="learn_mask",
            help="causal: only earlier tokens. local: a window each side. strided: recent tokens "
            "plus every stride-th earlier one.",
        )
        mask = st.session_state["learn_mask"]
        c[6].number_input(
            "Window / stride",
            0,
            16,
            step=1,
            key="learn_window",
            disabled=mask not in ("local", "strided"),
            help="local: how many tokens each side a token sees. strided: the stride (1 or more).",
        )
    ss = st.session_state
    return {
        "d_model": int(ss["learn_d_model"]),
        "n_heads": int(ss["learn_heads"]),
        "d_k": int(ss["learn_d_k"]) or None,
        "seed": int(ss["learn_seed"]),
        "scale": bool(ss["learn_scale"]),
        "mask": mask,
        "window": int(ss["learn_window"]),
        "positional": bool(ss["learn_pe"]),
    }


def _numbered_ui(label: str, n: int, key: str, noun: str) -> int:
    """One of n things (heads, layers), numbered from 1 on screen and from 0 in code."""
    if st.session_state.get(key, 0) not in range(n):
        st.session_state[key] = 0
    if n == 1:
        return 0
    if n <= SEGMENTS_MAX:
        value = st.segmented_control(
            label, list(range(n)), format_func=lambda i: f"{noun} {i + 1}", key=key, required=True
        )
    else:
        value = st.selectbox(
            label, list(range(n)), format_func=lambda i: f"{noun} {i + 1} of {n}", key=key, width=320
        )
    return int(value or 0)


def head_ui(n_heads: int, key: str = "learn_head") -> int:
    return _numbered_ui("Head shown in steps 2 to 6 (numbered from 1)", n_heads, key, "Head")


def layer_ui(n_layers: int) -> int:
    return _numbered_ui("Layer (numbered from 1)", n_layers, "learn_layer", "Layer")


# ---- which steps are on screen ----------------------------------------------------------------


def shown(step: int | str) -> bool:
    """Whether a step (1 to 7, or "heads") is on screen in the chosen view."""
    view = st.session_state.get("learn_step", DEFAULTS["learn_step"])
    return view == "all" or view == str(step)


def head_shown() -> bool:
    """Whether a view that shows one head (steps 2 to 6, a decoder's causal mask) is on screen: only
    then is the head picker."""
    return any(shown(n) for n in (2, 3, 4, 5, 6, "mask"))


def past_the_end(key: str, n: int, noun: str, nouns: str) -> None:
    """A link's layer or head past the model's last: say so, and show the first."""
    ss = st.session_state
    if ss.get(key, 0) >= n:
        st.warning(
            f"The link's `{noun}` value {ss[key]} is past the model's {n} {nouns} (links count from 0); "
            f"showing {noun} 1.",
            icon=":material/link:",
        )
        ss[key] = 0


def step_picker_ui(
    views: tuple[str, ...], labels: Mapping[str, str] = STEP_VIEW_LABELS, unit: str = "layer"
) -> None:
    """The row of steps above the matrices (named by `labels`; "All steps" shows the whole `unit`);
    the choice is kept in the URL (`step`).

    The step lives in `learn_step`, a key no widget owns; the picker gets a key of its own per step on
    screen (`learn_step_picker_<step>`). A browser sends every widget's value with each request, and
    one that has not yet redrawn after a pager move still holds the picker's old value: had the
    picker owned `learn_step`, a second clicker press landing then would put the old step back
    before the pager moved on from it. The old picker's key is never read again, so it cannot."""
    ss = st.session_state
    if ss.get("learn_step") not in views:
        ss["learn_step"] = DEFAULTS["learn_step"]
    picked = ss.pop(_picker_key(ss["learn_step"]), None)  # a click on the picker this step drew
    if picked in views:
        ss["learn_step"] = picked
    st.segmented_control(
        "Step on screen",
        views,
        default=ss["learn_step"],
        format_func=labels.get,
        key=_picker_key(ss["learn_step"]),
        required=True,
        help=f"One step at a time fits a projector; “All steps” puts the whole {unit} on one page.",
    )


def _picker_key(view: str) -> str:
    return f"learn_step_picker_{view}"


def _step_by(stops: tuple[str, ...], delta: int) -> None:
    """Move `delta` stops from the step on screen now. Relative, not a target fixed when the button
    was drawn: a key pressed while the page reruns for the previous press reaches the button the
    previous run drew, and a fixed target would repeat that press instead of going one further."""
    view = st.session_state.get("learn_step")
    i = stops.index(view) if view in stops else 0
    _go_to(stops[min(max(i + delta, 0), len(stops) - 1)])


def _go_to(view: str) -> None:
    st.session_state["learn_step"] = view
    # the next run brings the new step's heading to the top of the screen (scroll_to_step)
    st.session_state["learn_scroll"] = st.session_state.get("learn_scrolls", 0) + 1
    st.session_state["learn_scrolls"] = st.session_state["learn_scroll"]


# Fixed script (no user text): bring the step's heading (anchor step-N, or the heads' section) to
# the top of the screen once the page has drawn it. {run} only makes each scroll a new element.
_SCROLL = """<script>/* scroll {run} */
(() => {{
  const doc = window.parent ? window.parent.document : document;
  let tries = 0;
  const go = () => {{
    const heading = doc.getElementById("{anchor}");
    if (heading) {{ heading.scrollIntoView({{block: "start"}}); }}
    else if (++tries < 20) {{ setTimeout(go, 100); }}
  }};
  setTimeout(go, 50);
}})();
</script>"""


def step_pager_ui(views: tuple[str, ...], labels: Mapping[str, str] = STEP_VIEW_LABELS) -> None:
    """Previous and next buttons under a single step (named by `labels`), also on → / PageDown and
    ← / PageUp."""
    stops = [v for v in views if v != "all"]
    view = st.session_state.get("learn_step")
    if view not in stops:
        return
    i = stops.index(view)
    back = stops[i - 1] if i > 0 else None
    ahead = stops[i + 1] if i + 1 < len(stops) else None
    st.divider()
    # previous at the left edge, next at the right edge, whichever of them there is
    align = "distribute" if back and ahead else ("right" if ahead else "left")
    moves = {}  # a presentation clicker's PageDown / PageUp and the arrows: dashboard/clicker.py
    with st.container(horizontal=True, horizontal_alignment=align):
        for target, delta, key, name in ((back, -1, "learn_prev", "Back"), (ahead, 1, "learn_next", "Next")):
            if not target:
                continue
            moves[name] = (_step_by, (tuple(stops), delta))
            st.button(
                f"{name}: {labels[target]}",
                key=key,
                on_click=moves[name][0],
                args=moves[name][1],
                type="primary" if name == "Next" else "secondary",
                help=f"Also {'→ / PageDown' if delta > 0 else '← / PageUp'} (a presentation clicker).",
            )
    if owns_clicker():  # not while a deck is on: its slides take the keys
        clicker.bind(moves.get("Next"), moves.get("Back"))
    scroll_to_step(view)


def scroll_to_step(view: str) -> None:
    """After the pager moved to `view`, bring its heading to the top of the screen (once)."""
    run = st.session_state.pop("learn_scroll", None)
    if run is None:
        return
    anchor = "multi-head" if view == "heads" else f"step-{view}"  # a decoder's extra stops: step-mask
    st.html(_SCROLL.format(run=int(run), anchor=anchor), unsafe_allow_javascript=True)


# ---- a worked example's inputs ------------------------------------------------------------------


def _reset_edits() -> None:
    st.session_state["learn_edit_version"] = st.session_state.get("learn_edit_version", 0) + 1


def reset_ui(edited: bool) -> None:
    st.button("Reset to the article's numbers", key="learn_reset", on_click=_reset_edits, disabled=not edited)


def _input_labels(ex: WorkedExample, name: str, shape: tuple[int, int]) -> tuple[list[str], list[str]]:
    if name in ("x", "query"):
        rows = list(ex.query_tokens)
    elif name in ("key", "value"):
        rows = list(ex.key_tokens)
    else:
        rows = [f"row {j + 1}" for j in range(shape[0])]
    return rows, [str(j + 1) for j in range(shape[1])]


def inputs_ui(ex: WorkedExample) -> tuple[dict[str, np.ndarray], list[str]]:
    """One editable table per input. Returns the (possibly edited) arrays and notes on fixes made."""
    version = st.session_state.get("learn_edit_version", 0)
    names = list(ex.inputs)
    # Q, K, V on one row, then X and W^O, so every table is wide enough to show all its columns
    first = [n for n in names if n in ("query", "key", "value")]
    rest = [n for n in names if n not in first]
    cols = list(st.columns(len(first)))
    if rest:
        cols += list(st.columns(max(len(rest), 2)))[: len(rest)]
    out: dict[str, np.ndarray] = {}
    notes: list[str] = []
    for col, name in zip(cols, first + rest, strict=True):
        with col:
            out[name] = _input_table(ex, name, f"learn_edit_{ex.slug}_{name}_{version}", notes)
    return out, notes


def _input_table(ex: WorkedExample, name: str, key: str, notes: list[str]) -> np.ndarray:
    import pandas as pd  # here, not at the top: the default page never needs it (0.2 s to import)

    rows, columns = _input_labels(ex, name, ex.inputs[name].shape)
    st.markdown(f"**{INPUT_TITLES[name]}**")
    edited = st.data_editor(
        pd.DataFrame(ex.inputs[name], index=rows, columns=columns),
        key=key,
        num_rows="fixed",
        column_config={
            c: st.column_config.NumberColumn(c, min_value=-INPUT_LIMIT, max_value=INPUT_LIMIT, step=0.01)
            for c in columns
        },
    )
    if name in ex.input_notes:
        st.caption(ex.input_notes[name])
    arr = pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    if not np.isfinite(arr).all():
        notes.append(f"{INPUT_TITLES[name]}: an empty cell counts as 0.")
        arr = np.nan_to_num(arr, nan=0.0, posinf=INPUT_LIMIT, neginf=-INPUT_LIMIT)
    if np.abs(arr).max(initial=0.0) > INPUT_LIMIT:
        notes.append(f"{INPUT_TITLES[name]}: numbers are kept within ±{INPUT_LIMIT:g}.")
        arr = np.clip(arr, -INPUT_LIMIT, INPUT_LIMIT)
    return arr
