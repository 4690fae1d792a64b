"""The compare page's links: its query parameters as one dashboard.state.PageLinks table, what a link
asks for beyond the table (a preset fills the two sentences), and the checks that wait for the model.

URL parameters: text, text2, preset, model, engine (dashboard/model_pick.py), layer, head (0-indexed),
focus (a word reference: "it", "the#2"), show (presenter mode: "side" or "diff").
A link is read on the session's first run; the URL is written at the end of every run.
"""

from __future__ import annotations

import streamlit as st

from core.models.registry import BUNDLED_KEY
from core.models.shipped import SHIPPED_KEY
from core.text import clean_input
from dashboard.content import compare as text
from dashboard.content.compare import DEFAULT_LETTER_PRESET, DEFAULT_PRESET, OWN, PRESENT_VIEWS, PRESETS
from dashboard.hosted import Limits
from dashboard.model_pick import model_label, model_url_params
from dashboard.state import (
    PageLinks,
    Parsed,
    UrlParam,
    choice_param,
    position_note,
    position_param,
    text_param,
)
from dashboard.trained_models import reads_letters
from dashboard.widgets import md

PAGE = "compare"
MAX_TEXT_CHARS = 10_000
MAX_REF_CHARS = 100
# Widgets whose keys hold the page state: Streamlit drops a widget's key when a run does not draw it.
KEEP = ("compare_text", "compare_text2", "compare_preset", "compare_show")


def max_chars(limits: Limits) -> int:
    """The longest sentence the page keeps, from a box or a link."""
    return min(MAX_TEXT_CHARS, limits.max_text_chars)


def _parse_ref(raw: str) -> Parsed:
    return clean_input(raw, MAX_REF_CHARS)[0].strip() or None, None


def page_links(limits: Limits) -> PageLinks:
    return PageLinks(
        PAGE,
        (
            text_param("text", "compare_text", "", max_chars(limits)),
            text_param("text2", "compare_text2", "", max_chars(limits)),
            choice_param("preset", "compare_preset", DEFAULT_PRESET, [*PRESETS, OWN]),
            *model_url_params(PAGE, limits),
            position_param("layer", "compare_layer"),  # checked against the model: check_link_positions
            position_param("head", "compare_head"),
            UrlParam("focus", "compare_focus", None, _parse_ref),
            choice_param("show", "compare_show", "side", list(PRESENT_VIEWS)),
        ),
        keep=KEEP,
    )


def init_state(limits: Limits) -> list[str]:
    """Seed the page state from the link once per session; return messages about bad URL values.

    A preset fills both boxes; a link whose texts differ from its preset's (or that carries texts
    and no preset) is "your own"."""
    links = page_links(limits)
    if links.url_was_read():
        return []
    notes = links.read_url()
    ss, params = st.session_state, st.query_params
    preset = ss["compare_preset"]
    has_text = "text" in params or "text2" in params
    if "preset" not in params and not has_text and reads_letters(_model_opened(params)):
        preset = DEFAULT_LETTER_PRESET  # a page opened on a letter model opens on a pair it reads
    if preset in PRESETS and has_text:
        p = PRESETS[preset]
        if (ss["compare_text"], ss["compare_text2"]) != (p.text, p.text2):
            preset = OWN  # the link's own texts win over its preset (or the default preset)
    if preset in PRESETS:
        p = PRESETS[preset]
        ss["compare_text"], ss["compare_text2"] = p.text, p.text2
        if ss["compare_focus"] is None:
            ss["compare_focus"] = p.focus
    ss["compare_preset"] = preset
    if "preset" in params and (note := fit_model_to_preset()):  # a preset the link asks for by name
        notes.append(note)
    ss["compare_check_link"] = any(name in params for name in ("layer", "head", "focus"))
    # a preset opens on the head whose focus row changed most, unless the link names a head
    ss["compare_pending_best"] = preset in PRESETS and "layer" not in params and "head" not in params
    return notes


def _model_opened(params) -> str:
    """The model the page opens on: the link's, else the one explore shows (model_pick seeds it)."""
    return params.get("model") or st.session_state.get("explore_model") or BUNDLED_KEY


def fit_model_to_preset() -> str | None:
    """A preset written for a letter model moves the picker to the letter GPT-2, and an English one
    moves it off a letter model to the bundled BERT; the line that says so, or None. Called where the
    picker is not drawn yet: on the link's first run and in the preset's callback."""
    ss = st.session_state
    preset = PRESETS.get(ss.get("compare_preset"))
    seeded = ss.get("compare_model_seeded") or "model" in st.query_params
    model = ss.get("compare_model") if seeded else _model_opened(st.query_params)
    if preset is None or reads_letters(model) == preset.letters:
        return None
    ss["compare_model"] = SHIPPED_KEY if preset.letters else BUNDLED_KEY
    ss["compare_model_seeded"] = True  # model_pick must not put explore's model back
    return text.SWITCHED_MODEL.format(
        pair=preset.title,
        reads=text.READS_LETTERS if preset.letters else text.READS_ENGLISH,
        model=md(model_label(ss["compare_model"])),
    )


def write_url(limits: Limits, model: str | None = None) -> None:
    """The URL says what is shown: a preset by its name, otherwise both texts."""
    ss = st.session_state
    own = ss.get("compare_preset") == OWN
    overrides: dict[str, object] = {
        "text": ss.get("compare_text") if own else None,
        "text2": ss.get("compare_text2") if own else None,
    }
    if model is not None:
        overrides["model"] = model
    page_links(limits).write_url(**overrides)


def check_link_positions(n_layers: int, n_heads: int) -> list[str]:
    """Once per session, with the first results: a link's layer or head past the model's is reset."""
    ss = st.session_state
    if not ss.pop("compare_check_link", False):
        return []
    notes = []
    for name, size, what in (("layer", n_layers, "layers"), ("head", n_heads, "heads")):
        value, note = position_note(name, ss.get(f"compare_{name}", 0), size, what)
        if note:
            notes.append(note)
            ss[f"compare_{name}"] = value
    return notes
