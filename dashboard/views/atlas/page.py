"""The atlas page put together: state from the link, the model, what the numbers are measured on,
the atlas (memory, disk cache or computed with a progress bar), then the grid, the table and the
explanations. Each step that can fail says why in the page and stops there."""

from __future__ import annotations

import logging

import numpy as np
import streamlit as st

from core.measures.atlas import HeadAtlas, head_roles
from core.models.architectures import is_decoder
from core.models.errors import ModelError
from core.models.registry import ModelSpec
from core.translate.engine import TRANSLATOR_KEY
from dashboard.content import atlas as text
from dashboard.engines import load_engine
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, current_limits
from dashboard.model_pick import load_choice, model_choice_ui
from dashboard.presenter import presenting
from dashboard.state import clean_widget_text
from dashboard.views.atlas import links, translator
from dashboard.views.atlas.compute import NoWords, TooShort, sentence_atlas
from dashboard.views.atlas.widgets import (
    atlas_may_start,
    explain_ui,
    grid_ui,
    pick_link_ui,
    read_atlas,
    roles_ui,
    sentence_ui,
    source_ui,
    stat_ui,
    table_ui,
)
from dashboard.widgets import copy_link_ui, error_md, md

LOG = logging.getLogger(__name__)


def render() -> None:
    limits = current_limits()  # read on every run: the setting can change without a restart
    try:
        _render(limits)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("atlas page failed")
        st.error(f"Something went wrong while drawing the atlas ({type(err).__name__}). Try another model.")
    finally:
        links.page_links(limits).save()


def _start(limits: Limits) -> None:
    """State from the link (first run), widget state back from other pages, the text box cleaned."""
    for note in links.init_state(limits):
        st.info(note)
    links.page_links(limits).restore()
    # the text box holds user input: cleaned before the widget is drawn (see dashboard.state)
    if note := clean_widget_text("atlas_text", limits.max_text_chars, "sentence"):
        st.warning(note)


def _measure(
    spec: ModelSpec, engine: str, on: str, sentence: str, limits: Limits
) -> tuple[HeadAtlas, str] | None:
    """The atlas to show and the line that says what it was measured on; None after saying why not."""
    if on == "corpus":
        try:
            if not atlas_may_start(spec.key, engine):
                return None
            measured = read_atlas(spec.key, engine)
        except ModelError as err:  # the model's files went missing after it loaded
            st.error(f"Could not measure this model: {error_md(err)}")
            return None
        atlas = measured.atlas
        how = text.CORPUS_SOURCE.get(measured.source, measured.source)
        if measured.resumed_at:
            how += f", resuming after sentence {measured.resumed_at}"
        by = text.ENGINE_NAMES.get(atlas.engine, atlas.engine or "an unrecorded")
        return atlas, (
            f"Measured on the built-in corpus: {atlas.n_sentences} sentences, {atlas.n_rows:,} tokens "
            f"({how}, {measured.seconds:.2f} s; computed by the {md(by)} engine: "
            f"{text.ENGINE_NOTE}). " + text.CORPUS_CAPTION.format(n=atlas.n_sentences)
        )
    if not sentence.strip():
        st.info("Type a sentence above to measure every head on it, or switch back to the built-in corpus.")
        return None
    try:
        atlas, result = sentence_atlas(
            spec.key, engine, sentence, limits.max_tokens, limits.max_texts_per_minute
        )
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
        return None
    except TooShort:
        st.info("The model reads this as a single token, which sees only itself: type a longer sentence.")
        return None
    except NoWords:
        st.info(
            "The model finds no words in this sentence: its tokenizer drops control characters and "
            "invisible marks, leaving only \\[CLS\\] and \\[SEP\\]. Type a sentence with words."
        )
        return None
    except (ModelError, ValueError) as err:  # ValueError: text the engine cannot read (TextError)
        st.error(f"Could not run the model on this sentence: {error_md(err)}")
        return None
    if result.truncated:
        st.warning(f"Only the sentence's first {result.n_tokens} tokens were measured.")
    return atlas, text.SENTENCE_CAPTION.format(n=result.n_tokens)


def _decoder(picked: tuple[ModelSpec, str] | None) -> bool:
    """Whether the picked model is a decoder (its engine is loaded by now; a failure is said later)."""
    if picked is None:
        return False
    try:
        return is_decoder(load_engine(picked[0].key, picked[1]))
    except ModelError:
        return False


def _render(limits: Limits) -> None:
    _start(limits)
    own = (TRANSLATOR_KEY,) if translator.offered(limits) else ()
    model = model_choice_ui("atlas", limits, own=own)
    if model == TRANSLATOR_KEY and own:  # an encoder-decoder: three kinds of heads, an atlas of its own
        translator.render(limits)
        return
    if not presenting():  # on a projector the chart comes first
        st.title(text.TITLE)
        st.markdown(text.INTRO)
    picked = load_choice("atlas", model, limits)
    controls = (
        st.expander(text.PRESENTER_CONTROLS, icon=":material/tune:") if presenting() else st.container()
    )
    with controls:
        left, right = st.columns(2)
        with left:
            on = source_ui()
        with right:
            stat = stat_ui(_decoder(picked))
        roles_slot = st.container()
        sentence = sentence_ui(limits.max_text_chars) if on == "sentence" else ""
    if picked is None:
        links.write_url(limits)
        return
    spec, engine = picked
    measured = _measure(spec, engine, on, sentence, limits)
    if measured is None:
        links.write_url(limits, model=spec.key)
        return
    atlas, caption = measured
    if atlas.decoder:
        caption += " " + text.DECODER_CAPTION.format(n=atlas.induction_length, seed=atlas.induction_seed)
    roles = head_roles(atlas)
    with roles_slot:
        chosen = roles_ui(roles, atlas.roles)
    shown = np.isin(roles, chosen) if chosen else np.ones(roles.shape, dtype=bool)
    measured_on = "your sentence" if on == "sentence" else f"{atlas.n_sentences} sentences"
    grid_ui(atlas, roles, shown, stat, f"{spec.label} · {measured_on}")
    link_text = sentence if on == "sentence" else None
    pick_link_ui(atlas, roles, spec.key, engine, link_text)
    st.caption(caption)
    if not shown.any():
        st.info("No head has the chosen roles.")
    table_ui(atlas, roles, shown, spec.key, engine, link_text)
    if presenting():
        with st.expander(text.EXPLAIN_LABEL):
            explain_ui(atlas)
    else:
        explain_ui(atlas)
    links.write_url(limits, model=spec.key)
    with st.sidebar:  # after write_url: the link names what is on screen
        st.caption(f"{atlas.n_layers} layers × {atlas.n_heads} heads · {md(spec.label)}")
        copy_link_ui()
