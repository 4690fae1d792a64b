"""The explore page put together: state from the link, the model, the sentence and the options, the
result, then one view. Each step that can fail says why in the page and stops there."""

from __future__ import annotations

import logging
from importlib import import_module

import streamlit as st

from core.models.architectures import is_decoder
from core.models.errors import ModelError
from core.models.reading import Reading
from core.models.registry import MAX_CHOICE_CHARS, ModelSpec
from core.models.result import AttentionResult
from core.translate.engine import is_translator
from dashboard.content import pairs as pairs_text
from dashboard.content.explore import HOW_TO_READ, HOW_TO_READ_LABEL, TO_LEARN
from dashboard.engines import allowed_engines, model_reading
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, current_limits
from dashboard.model_pick import showing_ui
from dashboard.on_screen import ModelOnScreen, attention_kind, counting_specials
from dashboard.presenter import presenting
from dashboard.state import clean_widget_text, signature
from dashboard.trained_models import is_translator_here, letters_became
from dashboard.views.explore import links, loading, pairs
from dashboard.views.explore.decoder import lens_view, nextword_view, sinks_view, views_for, wrong_kind_note
from dashboard.views.explore.flow import rollout_view
from dashboard.views.explore.generate import generate_view
from dashboard.views.explore.induction import induction_view
from dashboard.views.explore.masks import masks_ui
from dashboard.views.explore.results import result_for, shown_token_view
from dashboard.views.explore.views import head_view, lines_view, model_view
from dashboard.views.explore.widgets import PAIR_KEY, downloads_ui, max_chars, sentence_ui, view_ui
from dashboard.widgets import copy_link_ui, md

LOG = logging.getLogger(__name__)
BERT_READING = Reading("word pieces", ("[CLS]", "[SEP]"))  # the bundled model's, while none is loaded


def _imported_when_shown(module: str, name: str):
    """A view whose module is imported the first time the view is shown: a server's first run on
    the head view (the default) does not wait for the other views' modules and the measures,
    corpora and charts they bring."""

    def view(*args):
        return getattr(import_module(f"dashboard.views.explore.{module}"), name)(*args)

    return view


ablation_view = _imported_when_shown("ablation", "ablation_view")
attribution_view = _imported_when_shown("attribution", "attribution_view")
focus_view = _imported_when_shown("focus", "focus_view")
qk_view = _imported_when_shown("qk_space", "qk_view")
similarity_view = _imported_when_shown("similarity", "similarity_view")
translator_view = _imported_when_shown("translator", "translator_view")


def render() -> None:
    if not presenting():  # on a projector the view's chart comes first
        st.title("Explore: a pretrained model's attention")
    limits = current_limits()  # read on every run: the setting can change without a restart
    try:
        _render(limits)
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("explore page failed")
        st.error(
            f"Something went wrong while drawing this view ({type(err).__name__}). Try another view or text."
        )
    finally:
        links.page_links(limits).save()


def _start(limits: Limits) -> None:
    """State from the link (first run), widget state back from other pages, text boxes cleaned."""
    for note in links.init_state(limits):
        st.info(note)
    links.page_links(limits).restore()
    # Text boxes hold user input: clean it before the widgets are drawn (see dashboard.state).
    for key, most, what in (
        ("explore_text", max_chars(limits), "sentence"),
        (PAIR_KEY, pairs_text.MAX_PAIR_CHARS, "sentence B"),
        ("explore_model_custom", MAX_CHOICE_CHARS, "model name"),
    ):
        if note := clean_widget_text(key, most, what):
            st.warning(note)


def _compute(spec: ModelSpec, engine: str, text: str | tuple, limits: Limits) -> AttentionResult | None:
    """The result for the sentence (or the (A, B) pair), or None with the reason shown."""
    try:
        return result_for(spec.key, engine, text, limits)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
    except (ModelError, ValueError) as err:  # ValueError: text an engine cannot read (TextError)
        st.error(f"Could not run the model on this text: {loading.error_md(err)}")
    except Exception as err:
        LOG.exception("computing attention failed")
        st.error(f"Could not run the model on this text ({type(err).__name__}).")
    return None


def _notices(result: AttentionResult, limits: Limits, reading: Reading, text: str, tokenizer) -> bool:
    """What the page must say about this result; False when there is nothing to show."""
    if result.truncated:
        total = result.meta.get("n_tokens_input")
        limit = result.meta.get("max_tokens", result.n_tokens)
        reader = "this public demo" if limits.hosted and limit == limits.max_tokens else "the model"
        st.warning(
            f"This text is {total or 'more than ' + str(limit)} tokens long; {reader} reads at most "
            f"{limit}{counting_specials(result)}, so only the first {result.n_tokens} tokens are shown."
        )
    if reading.letters and (note := letters_became(tokenizer, text)):
        st.info(note)
    for note in links.check_link_positions(result):
        st.info(note)
    if result.special_mask.all():
        st.info(
            "The model finds no words in this text: its tokenizer drops control characters and "
            "invisible marks. Type a sentence, or pick an example."
        )
        return False
    return True


def _show(
    result: AttentionResult,
    screen: ModelOnScreen,
    text: str | tuple,
    limits: Limits,
    options: tuple,
    controls,
) -> None:
    """The view picked in the options, on the tokens the toggles ask for; `text`: the sentence, or
    the (A, B) pair the head, lines and model views read."""
    engine = screen.engine
    ss = st.session_state
    view_name, merge, hide = options
    view = shown_token_view(result, merge, hide)
    links.apply_pending(result, view)
    tokens, notes, lost = links.resolve_pair(result)  # focus and target name words: follow them
    for note in notes:
        st.info(note)
    if lost:  # words a typed sentence lacks: one line, not a box each (the view stays in sight)
        st.caption(lost)
    links.apply_link_pair(result, view, tokens)
    sig = signature(screen.key, engine, text, merge, hide)
    chosen = ss.get("explore_focus") and ss.get("explore_target")  # mark a pair only when chosen
    pair = tuple(view.item_of_token(t) if chosen and t is not None else None for t in tokens)
    across = st.container()  # sentence B: the crossing share, above the chart, once the view picked its head
    if view_name == "head":
        head_view(result, view, pair, controls)
    elif view_name == "lines":
        lines_view(result, view, sig, limits.max_lines, controls)
    elif view_name == "model":
        model_view(result, view, screen.key, engine, text, limits.max_tokens)
    elif view_name == "rollout":
        rollout_view(result, view, sig, tokens, controls)
    elif view_name == "similarity":
        similarity_view(result, view, sig, tokens, controls)
    elif view_name == "ablation":
        ablation_view(result, view, sig, tokens, limits, controls)
    elif view_name == "attribution":
        attribution_view(result, view, limits, controls)
    elif view_name == "qk":
        qk_view(result, controls)
    elif view_name in DECODER_VIEWS:
        DECODER_VIEWS[view_name](result, limits, controls)
    else:
        focus_view(result, view, sig, tokens, screen, controls)
    if view_name in pairs.PAIR_VIEWS:
        with across:
            pairs.statement_ui(result, view_name, ss.get("explore_layer", 0), ss.get("explore_head", 0))
        pairs.ranking_ui(result)


DECODER_VIEWS = {
    "nextword": lambda result, _limits, _controls: nextword_view(result),
    "generate": generate_view,
    "lens": lambda result, _limits, _controls: lens_view(result),
    "sinks": lambda result, _limits, _controls: sinks_view(result),
    "induction": induction_view,
}


def _views(loaded) -> list[str]:
    """The views this model has; a view of the other kind (a link's, or the last model's) turns
    into the head view, with one line saying why."""
    ss = st.session_state
    decoder = loaded is not None and is_decoder(loaded[1])
    views = views_for(decoder)
    if ss.get("explore_view") not in views:
        if ss.get("explore_view") is not None:
            ss["explore_view_note"] = wrong_kind_note(ss["explore_view"], decoder)
        ss["explore_view"] = "head"
    return views


def _primer(reading: Reading) -> None:
    """How to read the page, in the paragraphs that fit the model shown."""
    kept = ["layers", "map", *(["specials"] if reading.specials else []), reading.pieces, "not"]
    with st.expander(HOW_TO_READ_LABEL):
        st.markdown("\n".join(HOW_TO_READ[name] for name in kept).format(specials=md(reading.specials_text)))


def _controls():
    """Where the sentence, view and pickers go: in place, or in presenter mode folded into one
    closed panel at the top, so the view's chart and its explanation fill the screen."""
    if presenting():
        return st.expander("Controls: sentence, view, layer and head", icon=":material/tune:")
    return st.container()


def _is_translator(model: str, limits: Limits) -> bool:
    """The shipped translator, one the train page saved, or (on your own machine) a folder holding one."""
    return is_translator_here(model) or (limits.allow_custom_models and is_translator(model))


def _render(limits: Limits) -> None:
    _start(limits)
    if not allowed_engines(limits):
        st.error(
            "No engine can run here: hosted mode offers only engines that run without PyTorch, and "
            "none is installed."
        )
        return
    requested, engine = loading.model_ui(limits)
    if _is_translator(requested, limits):  # three kinds of attention: views of its own
        st.session_state["explore_model"] = requested
        pairs.translator_note()
        translator_view(limits, _controls(), requested)
        links.write_url(limits)
        return
    engine = loading.engine_for(requested, engine, limits)
    loaded = loading.resolve_model(requested, engine, limits)
    reading = BERT_READING if loaded is None else model_reading(loaded[0].key, engine, loaded[1].tokenizer)
    if not presenting():  # a room sees the chart; the reader alone gets the primer
        _primer(reading)
    controls = _controls()
    views = _views(loaded)
    with controls:
        context = getattr(loaded[1], "max_tokens", limits.max_tokens) if loaded else limits.max_tokens
        text, merge, hide = sentence_ui(limits, reading, min(limits.max_tokens, context))
        options = (view_ui(views), merge, hide)
    if note := st.session_state.pop("explore_view_note", None):
        st.info(note)
    source = pairs.page_input(text, options[0])  # the sentence, or (A, B) where the view reads a pair
    if loaded is None:
        st.info("No model is available; fix the problem above and reload the page.")
        return
    spec = loaded[0]
    st.session_state["explore_model"] = spec.key  # the link names the model shown
    showing_ui(spec.label, engine, loaded[1])
    if not text.strip():
        st.info("Type a sentence above, or pick an example.")
        links.write_url(limits)
        return
    if not presenting():
        decoder = spec.key if is_decoder(loaded[1]) else None
        model = "this decoder" if decoder else "the bundled model"
        st.sidebar.caption(TO_LEARN.format(model=model, url=links.learn_url(text, decoder=decoder)))
    result = _compute(spec, engine, source, limits)
    if result is None:
        return
    st.sidebar.caption(f"{result.n_layers} layers × {result.n_heads} heads · {result.n_tokens} tokens")
    with st.sidebar:
        loading.parity_ui(spec.key, engine, source, limits, result)
    if _notices(result, limits, reading, text, loaded[1].tokenizer):
        masks_ui(result, spec.key, engine, text)
        screen = ModelOnScreen(spec.key, engine, limits.max_tokens, attention_kind(result), reading)
        _show(result, screen, source, limits, options, controls)
    links.write_url(limits)
    with st.sidebar:  # after write_url: the link names what is on screen
        downloads_ui(result)
        copy_link_ui()
