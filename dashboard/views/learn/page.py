"""The learn page put together: the mode, then its source of numbers, its trace, and the one
renderer of the seven steps (steps.py).

Four sources fill one core.lesson.trace.LayerTrace: the seeded toy model of core.lesson.toy on the user's
sentence, an article's worked example (core.lesson.worked_examples, inputs editable in tables), one
layer of the bundled BERT (core.models.bert, through dashboard.engines), and one block of a GPT-2 the
user loads (decoder.py). User text is shown only through
st.text, dataframes and Plotly labels, never through markdown (which would interpret *, $ and
:colour[...]) or HTML. Nothing here imports torch or transformers, so the page opens fast.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

import numpy as np
import streamlit as st

from core.lesson.toy import MAX_TOKENS, ToySettings, tokenize
from core.lesson.worked_examples import EXAMPLES, WorkedExample
from dashboard.content.learn import (
    BERT_ABOUT,
    BERT_EMPTY,
    BERT_TRUNCATED,
    EDITED,
    EMPTY_SENTENCE,
    INTRO,
    SENTENCES,
    TO_EXPLORE,
)
from dashboard.content.pairs import HOW_SEGMENTS, ONE_SENTENCE_MODE
from dashboard.presenter import presenting
from dashboard.state import clean_widget_text
from dashboard.views.learn import compute, links
from dashboard.views.learn.checks import draw_summary
from dashboard.views.learn.decoder import decoder_mode, ready_examples
from dashboard.views.learn.sources import BERT_VIEWS, SHOWN_DIMS, bert_source, example_source, sentence_source
from dashboard.views.learn.steps import draw_steps
from dashboard.views.learn.translator import MODE as TRANSLATOR_MODE
from dashboard.views.learn.translator import translator_mode
from dashboard.views.learn.widgets import (
    head_shown,
    head_ui,
    inputs_ui,
    layer_ui,
    mode_ui,
    pair_ui,
    past_the_end,
    reset_ui,
    sentence_ui,
    settings_ui,
    shown,
    step_pager_ui,
    step_picker_ui,
)
from dashboard.widgets import copy_link_ui, error_md

LOG = logging.getLogger(__name__)


def render() -> None:
    if not presenting():  # on a projector the step's heading comes first
        st.title("Learn: attention from scratch")
    try:
        _render()
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("learn page failed")
        st.error(f"Something went wrong while drawing this page ({type(err).__name__}). Try other settings.")


def _render() -> None:
    notes = links.init_state()
    if not presenting():
        st.markdown(INTRO)
    for note in notes:
        st.warning(note, icon=":material/link:")
    controls = _controls()
    with controls:
        mode = mode_ui()
        if note := clean_widget_text("learn_text", links.MAX_CHARS, "sentence"):
            st.warning(note, icon=":material/content_cut:")
        text, pair = st.session_state.get("learn_text") or "", None
        if mode in ("sentence", "bert", "decoder"):
            text = sentence_ui(ready_examples() if mode == "decoder" else SENTENCES)
        if mode == "bert":
            pair = pair_ui()
        elif str(st.session_state.get("learn_text_b") or "").strip():  # a link's sentence B: say why not
            st.caption(ONE_SENTENCE_MODE)
    if mode == "sentence":
        _sentence(text, controls)
    elif mode == "bert":
        _bert(text, controls, pair)
    elif mode == "decoder":
        decoder_mode(text, controls)
    elif mode == TRANSLATOR_MODE:
        translator_mode(controls)
    else:
        _example(EXAMPLES[mode], controls)
    links.write_url(mode, text)
    links.save_state()
    with st.sidebar:
        copy_link_ui()


def _controls():
    """Where the controls go: in place, or in presenter mode folded into a closed panel, so the
    step's heading, chart and explanation fill the screen."""
    if presenting():
        return st.expander("Controls: what to compute, settings, step", icon=":material/tune:")
    return st.container()


def _sentence(text: str, controls) -> None:
    """The toy model on the user's sentence."""
    with controls:
        values = settings_ui()
        try:
            settings = ToySettings(**values)
        except ValueError as err:
            st.warning(f"These settings do not fit together: {err}.", icon=":material/warning:")
            return
        tok = tokenize(text)
        if not tok.tokens:
            st.info(EMPTY_SENTENCE, icon=":material/edit_note:")
            return
        if tok.truncated:
            st.warning(
                f"Your text has {tok.total} tokens. This page keeps the first {MAX_TOKENS}, so every "
                "matrix still fits on the screen; the rest is left out.",
                icon=":material/content_cut:",
            )
        st.caption(f"Tokens (T = {len(tok.tokens)}), as plain text:")
        st.text("  ·  ".join(tok.tokens))
        trace = compute.sentence_trace(tok.tokens, settings)
        source = sentence_source(tok.tokens, settings)
        step_picker_ui(source.views)
        head = head_ui(settings.n_heads) if head_shown() else 0
    draw_steps(trace, source, head)
    _to_explore(text)
    step_pager_ui(source.views)


def _example(ex: WorkedExample, controls) -> None:
    """An article's worked example: its inputs (editable), its numbers checked, then the steps."""
    with controls:
        st.subheader(ex.title, anchor="worked-example")
        st.caption(f"Source: {ex.source}. Its inputs are loaded below; every step is recomputed from them.")
        checks = compute.example_checks(ex.slug)
        draw_summary(ex, checks)
        for remark in ex.remarks:
            st.info(remark, icon=":material/menu_book:")
        st.markdown("#### Inputs: edit any number and every step below follows")
        inputs, notes = inputs_ui(ex)
        edited = any(not np.array_equal(inputs[k], ex.inputs[k]) for k in ex.inputs)
        for note in notes:
            st.warning(note)
        if edited:
            st.info(EDITED, icon=":material/edit:")
        reset_ui(edited)
        trace = ex.trace(inputs)
        source = example_source(ex, trace, checks)
        step_picker_ui(source.views)
    draw_steps(trace, source, head=0)
    step_pager_ui(source.views)


def _bert(text: str, controls, pair: str | None = None) -> None:
    """One layer of the bundled BERT on the user's sentence (and sentence B, read as a pair)."""
    with controls:
        found = _bert_controls(text, pair)
    if found is not None:
        trace, layer, n_layers, head = found
        draw_steps(trace, bert_source(trace, layer, n_layers, head), head)
        _to_explore(text, pair)
        step_pager_ui(BERT_VIEWS)


def _to_explore(text: str, pair: str | None = None) -> None:
    """Under the last step: the same sentence (and sentence B) on the explore page (user text only
    URL-encoded, in a link button: never in markdown)."""
    if shown(7) and not presenting():
        b = f"&pair={quote(pair, safe='')}" if pair else ""
        st.link_button(TO_EXPLORE, f"explore?text={quote(text, safe='')}{b}", icon=":material/biotech:")


def _bert_controls(text: str, pair: str | None = None):
    """The real BERT's layer and head pickers and what it read: (trace, layer, layers, head), or
    None when it cannot run (said on the page). `pair`: sentence B, read with the text as a pair."""
    if not text.strip():
        st.info(BERT_EMPTY, icon=":material/edit_note:")
        return None
    try:
        config = compute.bert_engine().config
        past_the_end("learn_layer", config.num_hidden_layers, "layer", "layers")
        layer = layer_ui(config.num_hidden_layers)
        trace, total = compute.bert_trace(text, layer, pair)
    except Exception as err:  # a model that cannot load or a text it cannot read: say so, keep the page
        LOG.warning("the real BERT could not run: %s", err)
        st.error(
            f"The real model could not run on this text: {type(err).__name__}: {error_md(str(err)[:300])}"
        )
        return None
    if total > len(trace.key_tokens):
        st.warning(BERT_TRUNCATED.format(total=total, kept=len(trace.key_tokens)))
    about = BERT_ABOUT.format(
        n_layers=config.num_hidden_layers,
        d_model=config.hidden_size,
        n_heads=config.num_attention_heads,
        d_k=config.d_k,
        layer=layer + 1,
        dims=SHOWN_DIMS,
    )
    st.info(about, icon=":material/model_training:")
    st.caption(f"Word pieces (T = {len(trace.key_tokens)}), as plain text:")
    st.text(" · ".join(trace.key_tokens))
    if pair:
        st.caption(HOW_SEGMENTS)
    step_picker_ui(BERT_VIEWS)
    past_the_end("learn_bert_head", trace.n_heads, "head", "heads")
    head = (
        head_ui(trace.n_heads, key="learn_bert_head") if head_shown() else st.session_state["learn_bert_head"]
    )
    return trace, layer, config.num_hidden_layers, head
