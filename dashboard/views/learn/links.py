"""The learn page's link: URL query parameters <-> session state, so a copied link reproduces a slide.

Parameters: `example` (cat-mat, i-love-nlp, bert, decoder or its first name gpt2; none = your
sentence), `text`, `pair` (sentence B, which the real BERT reads with `text` as a pair), the toy
model's `d_model`, `d_k`, `heads`, `seed`, `scale`, `mask`, `window`, `pe`, `head`, the real model's
`layer` and `head`, the decoder's `model` (letters, smollm2, a Hub id or a
folder), and `step` (1 to 7, heads, all; a GPT-2 adds ln, mask, mlp; a Llama rmsnorm, rope, gqa, mask,
swiglu). Layers and heads are 0-indexed in links, shown from 1.

The translator's cross-attention (views/learn/translator.py): `model=translator` (no `example`), with
`text`, `layer`, `head` (default: the head that aligned best in training), `target` (the French word
followed: "noir", "le#2" for the second "le") and `step` (1 to 7, check, all).
"""

from __future__ import annotations

import streamlit as st

from core.lesson.attention import MASK_KINDS
from core.lesson.toy import clean_text
from core.lesson.worked_examples import EXAMPLES
from core.models.registry import MAX_CHOICE_CHARS
from core.text import clean_input
from core.translate.engine import TRANSLATOR_DIR, TRANSLATOR_KEY
from core.translate.lesson import best_cross_head
from dashboard.content.learn import D_K_CHOICES, DEFAULT_TEXT, STEP_VIEWS
from dashboard.content.learn_decoder import DECODER_VIEWS, DEFAULT_DECODER
from dashboard.content.learn_llama import LLAMA_VIEWS
from dashboard.content.learn_translator import DEFAULT_TEXT as TR_TEXT
from dashboard.content.learn_translator import MODE as TR_MODE
from dashboard.content.learn_translator import VIEWS as TR_VIEWS
from dashboard.content.pairs import MAX_PAIR_CHARS
from dashboard.state import (
    PageLinks,
    Parsed,
    UrlParam,
    choice_param,
    flag_param,
    int_param,
    parse_int,
    text_param,
    write_params,
)

MAX_CHARS = 2000  # the text box and the URL; 64 tokens never need more
MAX_LAYERS = MAX_BERT_HEADS = 64  # a link's bounds; the model's own are checked once it is loaded
DEFAULTS = {
    "learn_mode": "sentence",
    "learn_text": DEFAULT_TEXT,
    "learn_text_b": "",  # sentence B: the real BERT reads the two as a pair
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
    "learn_decoder": DEFAULT_DECODER,
    "learn_edit_version": 0,
    "learn_step": "1",
    # the translator's (views/learn/translator.py); None: the page's choice once the model is loaded
    "learn_tr_text": TR_TEXT,
    "learn_tr_layer": None,
    "learn_tr_head": None,
    "learn_tr_target": None,
}
TR_MAX_CHARS = 300  # the translator's sentence box


TOY_PARAMS = ("d_model", "d_k", "heads", "seed", "scale", "mask", "window", "pe")  # the toy model's
REAL_MODES = ("bert", "decoder")  # a real model's layer: `layer` and its own `head`


def _parse_mode(raw: str) -> Parsed:
    if raw == "gpt2":  # the decoder mode's first name, from when GPT-2 was its only family: old links
        return "decoder", None
    if raw == "" or raw in EXAMPLES or raw in REAL_MODES or raw == TR_MODE:
        return raw or "sentence", None
    return "sentence", (
        "The link asks for a worked example this page does not have; showing your own "
        f"sentence instead. The examples are: {', '.join(EXAMPLES)}."
    )


def _parse_d_k(raw: str) -> Parsed:
    d_k, note = parse_int("d_k", raw, 0, 0, 64)
    if d_k not in D_K_CHOICES:
        return 0, f"The link's `d_k` must be one of {', '.join(map(str, D_K_CHOICES[1:]))}; using auto."
    return d_k, note


def _parse_decoder(raw: str) -> Parsed:
    """The decoder a link names: cleaned and capped here, validated when it is loaded (its message
    is then said on the page)."""
    return clean_input(raw, MAX_CHOICE_CHARS + 1)[0].strip() or DEFAULT_DECODER, None


def _link_mode() -> str:
    """The mode a link asks for: `model=translator` (alone, or with the decoder's `example`) is the
    translator's cross-attention."""
    example = st.query_params.get("example") or ""
    if st.query_params.get("model") == TRANSLATOR_KEY and example in ("", "decoder", TR_MODE):
        return TR_MODE
    return _parse_mode(example)[0]


def _parse_target(raw: str) -> Parsed:
    """A French word reference, checked against the translation once it is written."""
    return clean_input(raw, 64)[0].strip() or None, None


def _translator_links() -> PageLinks:
    return PageLinks(
        "learn",
        (
            UrlParam("example", "learn_mode", "sentence", _parse_mode),
            text_param("text", "learn_tr_text", TR_TEXT, TR_MAX_CHARS),
            int_param("layer", "learn_tr_layer", None, 0, MAX_LAYERS - 1),
            int_param("head", "learn_tr_head", None, 0, MAX_BERT_HEADS - 1),
            UrlParam("target", "learn_tr_target", None, _parse_target),
            choice_param("step", "learn_step", DEFAULTS["learn_step"], TR_VIEWS),
        ),
        keep=tuple(DEFAULTS),
    )


def _links(mode: str) -> PageLinks:
    """The page's URL table. `head` is the toy model's head, or in a real model's mode (which also
    has `layer`) the real model's, checked against it once it is loaded; the decoder mode adds `model`
    and its extra steps."""
    if mode == TR_MODE:
        return _translator_links()
    if mode in REAL_MODES:
        heads = (
            int_param("layer", "learn_layer", 0, 0, MAX_LAYERS - 1),
            int_param("head", "learn_bert_head", 0, 0, MAX_BERT_HEADS - 1),
        )
    else:
        heads = (int_param("head", "learn_head", 0, 0, 7),)
    if mode == "decoder":
        heads += (UrlParam("model", "learn_decoder", DEFAULT_DECODER, _parse_decoder),)
    # a decoder's stops depend on its family, known once it is loaded: the link may name any of them
    views = tuple(dict.fromkeys(DECODER_VIEWS + LLAMA_VIEWS)) if mode == "decoder" else STEP_VIEWS
    return PageLinks(
        "learn",
        (
            UrlParam("example", "learn_mode", "sentence", _parse_mode),
            text_param("text", "learn_text", DEFAULT_TEXT, MAX_CHARS, clean=clean_text),
            text_param("pair", "learn_text_b", "", MAX_PAIR_CHARS),
            int_param("d_model", "learn_d_model", DEFAULTS["learn_d_model"], 1, 64),
            UrlParam("d_k", "learn_d_k", 0, _parse_d_k),
            int_param("heads", "learn_heads", DEFAULTS["learn_heads"], 1, 8),
            int_param("seed", "learn_seed", 0, 0, 2**31 - 1),
            flag_param("scale", "learn_scale", True, strict=True),
            choice_param("mask", "learn_mask", "none", MASK_KINDS),
            int_param("window", "learn_window", DEFAULTS["learn_window"], 0, 16),
            flag_param("pe", "learn_pe", False, strict=True),
            *heads,
            choice_param("step", "learn_step", DEFAULTS["learn_step"], views),
        ),
        keep=tuple(DEFAULTS),
    )


def init_state() -> list[str]:
    """Defaults first; on a session's first run, the link's values over them (each one checked).
    Returns notes on the link's values that could not be used (first run only)."""
    ss = st.session_state
    links = _links(_link_mode())
    first_run = not links.url_was_read()
    notes = links.read_url()
    if first_run and _link_mode() == TR_MODE:
        ss["learn_mode"] = TR_MODE
    toy = first_run and ss["learn_mode"] not in (*REAL_MODES, TR_MODE)  # the toy model's head, linked
    if toy and ss["learn_head"] >= ss["learn_heads"]:
        notes.append(
            f"The link's `head` value {ss['learn_head']} is past its {ss['learn_heads']} head(s) "
            "(links count from 0); showing head 1."
        )
        ss["learn_head"] = 0
    # Streamlit forgets the state of widgets a run does not draw, e.g. during a visit to another
    # page; the copy save_state keeps brings the user's settings back on return.
    links.restore(DEFAULTS)
    return notes


def save_state() -> None:
    _links("sentence").save()


def write_url(mode: str, text: str) -> None:
    """Mirror what is on screen into the link (defaults left out)."""
    ss = st.session_state
    links = _links(mode)
    if mode == TR_MODE:  # the best head and the page's own word are left out of the link
        best = best_cross_head(TRANSLATOR_DIR)
        layer, head = ss.get("learn_tr_layer"), ss.get("learn_tr_head")
        best_shown = (layer, head) == best
        links.write_url(
            example=None,
            model=TRANSLATOR_KEY,
            text=ss.get("learn_tr_last") or ss.get("learn_tr_text"),  # the sentence shown, read
            layer=None if best_shown else layer,
            head=None if best_shown else head,
            **dict.fromkeys(TOY_PARAMS),
        )
        return
    write_params(target=None)  # the translator's alone
    if mode in REAL_MODES:  # the real model reads the text; the decoder's mode names its model
        model = {"pair": None} if mode == "decoder" else {"model": None}  # only BERT reads a pair
        links.write_url(example=mode, text=text, **model, **dict.fromkeys(TOY_PARAMS))
    elif mode != "sentence":
        links.write_url(
            example=mode, text=None, head=None, layer=None, model=None, pair=None, **dict.fromkeys(TOY_PARAMS)
        )
    else:
        window = ss["learn_window"] if ss["learn_mask"] in ("local", "strided") else None
        links.write_url(example=mode, text=text, window=window, layer=None, model=None, pair=None)
