"""The learn page's link: URL query parameters <-> session state, so a copied link reproduces a slide.

Parameters: `example` (cat-mat, i-love-nlp or bert; none = your sentence), `text`, the toy model's
`d_model`, `d_k`, `heads`, `seed`, `scale`, `mask`, `window`, `pe`, `head`, the real BERT's `layer`
and `head`, and `step` (1 to 7, heads, all). Layers and heads are 0-indexed in links, shown from 1.
"""

from __future__ import annotations

import streamlit as st

from core.attention import MASK_KINDS
from core.toy import clean_text
from core.worked_examples import EXAMPLES
from dashboard.content.learn import D_K_CHOICES, DEFAULT_TEXT, STEP_VIEWS
from dashboard.state import read_choice_param, read_int_param, read_text_param, write_params

MAX_CHARS = 2000  # the text box and the URL; 64 tokens never need more
MAX_LAYERS = MAX_BERT_HEADS = 64  # a link's bounds; the model's own are checked once it is loaded
DEFAULTS = {
    "learn_mode": "sentence",
    "learn_text": DEFAULT_TEXT,
    "learn_d_model": 8,
    "learn_d_k": 0,
    "learn_heads": 2,
    "learn_seed": 0,
    "learn_scale": True,
    "learn_mask": "none",
    "learn_window": 2,
    "learn_pe": False,
    "learn_head": 0,
    "learn_layer": 0,
    "learn_bert_head": 0,
    "learn_edit_version": 0,
    "learn_step": "1",
}


def init_state() -> list[str]:
    """Defaults first; on a session's first run, the link's values over them (each one checked).
    Returns notes on the link's values that could not be used (first run only)."""
    ss = st.session_state
    notes: list[str] = []
    if not ss.get("learn_url_read"):
        ss["learn_url_read"] = True
        notes = _read_url()
    # Streamlit forgets the state of widgets a run does not draw, e.g. during a visit to another
    # page; a plain copy kept under another key brings the user's settings back on return.
    saved = ss.get("learn_saved", {})
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = saved.get(key, value)
    return notes


def save_state() -> None:
    st.session_state["learn_saved"] = {k: st.session_state[k] for k in DEFAULTS if k in st.session_state}


def _read_url() -> list[str]:
    ss = st.session_state
    notes: list[str] = []

    def take(pair: tuple[object, str | None]) -> object:
        value, note = pair
        if note:
            notes.append(note)
        return value

    raw_example = st.query_params.get("example")
    if raw_example:
        if raw_example in EXAMPLES or raw_example == "bert":
            ss["learn_mode"] = raw_example
        else:
            notes.append(
                "The link asks for a worked example this page does not have; showing your own "
                f"sentence instead. The examples are: {', '.join(EXAMPLES)}."
            )
    ss["learn_text"] = clean_text(read_text_param("text", DEFAULT_TEXT, MAX_CHARS))
    ss["learn_d_model"] = take(read_int_param("d_model", DEFAULTS["learn_d_model"], 1, 64))
    ss["learn_heads"] = take(read_int_param("heads", DEFAULTS["learn_heads"], 1, 8))
    d_k = take(read_int_param("d_k", 0, 0, 64))
    if d_k not in D_K_CHOICES:
        notes.append(f"The link's `d_k` must be one of {', '.join(map(str, D_K_CHOICES[1:]))}; using auto.")
        d_k = 0
    ss["learn_d_k"] = d_k
    ss["learn_seed"] = take(read_int_param("seed", 0, 0, 2**31 - 1))
    ss["learn_scale"] = take(read_choice_param("scale", ("0", "1"), "1")) == "1"
    ss["learn_mask"] = take(read_choice_param("mask", MASK_KINDS, "none"))
    ss["learn_window"] = take(read_int_param("window", DEFAULTS["learn_window"], 0, 16))
    ss["learn_pe"] = take(read_choice_param("pe", ("0", "1"), "0")) == "1"
    if ss.get("learn_mode") == "bert":  # the real model's layer and head, checked against it later
        ss["learn_layer"] = take(read_int_param("layer", 0, 0, MAX_LAYERS - 1))
        ss["learn_bert_head"] = take(read_int_param("head", 0, 0, MAX_BERT_HEADS - 1))
    else:
        ss["learn_head"] = take(read_int_param("head", 0, 0, 7))
        if ss["learn_head"] >= ss["learn_heads"]:
            notes.append(
                f"The link's `head` value {ss['learn_head']} is past its {ss['learn_heads']} head(s) "
                "(links count from 0); showing head 1."
            )
            ss["learn_head"] = 0
    ss["learn_step"] = take(read_choice_param("step", STEP_VIEWS, DEFAULTS["learn_step"]))
    return notes


def _unless_default(key: str, url_value: object = None) -> object:
    value = st.session_state[key]
    return None if value == DEFAULTS[key] else (value if url_value is None else url_value)


def write_url(mode: str, text: str) -> None:
    """Mirror what is on screen into the link (defaults left out)."""
    ss = st.session_state
    step = _unless_default("learn_step")
    toy = dict.fromkeys(("d_model", "d_k", "heads", "seed", "scale", "mask", "window", "pe"))
    if mode == "bert":
        kept_text = None if text == DEFAULT_TEXT else text  # the real model reads the text
        write_params(example=mode, text=kept_text, **toy)
        write_params(layer=_unless_default("learn_layer"), head=_unless_default("learn_bert_head"), step=step)
        return
    if mode != "sentence":
        write_params(example=mode, text=None, **toy)
        write_params(layer=None, head=None, step=step)
        return
    write_params(
        example=None,
        text=None if text == DEFAULT_TEXT else text,
        d_model=_unless_default("learn_d_model"),
        d_k=_unless_default("learn_d_k"),
        heads=_unless_default("learn_heads"),
        seed=_unless_default("learn_seed"),
        scale=_unless_default("learn_scale", "0"),
        mask=_unless_default("learn_mask"),
        window=_unless_default("learn_window") if ss["learn_mask"] in ("local", "strided") else None,
        pe=_unless_default("learn_pe", "1"),
        head=_unless_default("learn_head"),
        layer=None,
        step=step,
    )
