"""The explore page's links: its query parameters as one table (dashboard.state.PageLinks), what a
link asks for beyond the table (an example, a model), and the checks that wait for the model and
the text.

URL parameters: text, example, model, engine, view, layer, head, focus, target, merge, hide. Layers,
heads and token positions are 0-indexed. A link is read on the session's first run; the URL is
written at the end of every run.
"""

from __future__ import annotations

import streamlit as st

from core.analysis import TokenView, rank_heads, token_view
from core.models import BUNDLED_KEY, CURATED_HUB_MODELS, MAX_CHOICE_CHARS
from core.result import AttentionResult
from core.text import clean_input
from dashboard.content.explore import DEFAULT_EXAMPLE, EXAMPLES, VIEWS
from dashboard.engines import allowed_engines, allowed_models, default_engine
from dashboard.hosted import Limits
from dashboard.state import PageLinks, Parsed, UrlParam, choice_param, flag_param, int_param, text_param
from dashboard.views.explore.widgets import max_chars, reset_widgets

OTHER_MODEL = "__other__"  # the picker's entry for a Hub id or folder typed by the user
LINK_POSITIONS = ("layer", "head", "focus", "target")  # URL values checked against the model and text

# Widgets drawn on every run, whose keys hold the page state: Streamlit drops a widget's key when a
# run does not draw it (another page, or a run that stopped early), so PageLinks keeps a copy.
KEEP = (
    "explore_text",
    "explore_example",
    "explore_view",
    "explore_merge",
    "explore_hide",
    "explore_model_choice",
    "explore_model_custom",
    "explore_engine",
)


def _parse_example(raw: str) -> Parsed:
    if raw == "" or raw in EXAMPLES:
        return raw or None, None
    return None, "The link names an unknown example; showing the text instead."


def _parse_model(raw: str) -> Parsed:
    return clean_input(raw or BUNDLED_KEY, MAX_CHOICE_CHARS + 1)[0].strip(), None


def page_links(limits: Limits) -> PageLinks:
    """The page's URL table; "explore_model" is the key of the model shown."""
    engines = allowed_engines(limits)
    return PageLinks(
        "explore",
        (
            text_param("text", "explore_text", "", max_chars(limits)),
            UrlParam("example", "explore_example", None, _parse_example),
            UrlParam("model", "explore_model", BUNDLED_KEY, _parse_model),
            choice_param("engine", "explore_engine", default_engine(engines), engines),
            choice_param("view", "explore_view", "head", list(VIEWS), keep_default=True),
            int_param("layer", "explore_layer", 0, 0, 999, keep_default=True),
            int_param("head", "explore_head", 0, 0, 999, keep_default=True),
            int_param("focus", "explore_focus", None, 0, 99_999),
            int_param("target", "explore_target", None, 0, 99_999),
            flag_param("merge", "explore_merge"),
            flag_param("hide", "explore_hide"),
        ),
        keep=KEEP,
    )


def init_state(limits: Limits) -> list[str]:
    """Seed the page state from the link once per session; return messages about bad URL values."""
    links = page_links(limits)
    if links.url_was_read():
        return []
    notes = links.read_url()
    ss, params = st.session_state, st.query_params
    example, text = ss["explore_example"], ss["explore_text"]
    if not text and example is None and "text" not in params:
        example = DEFAULT_EXAMPLE
    if example is not None and text and text != EXAMPLES[example].text:
        example = None  # the link's own text wins
    if example is not None:
        text = EXAMPLES[example].text
    model = ss["explore_model"]
    known = [BUNDLED_KEY, *CURATED_HUB_MODELS]
    if allowed_models(limits) is not None and model not in known:
        notes.append(
            "This public demo loads only the models in the picker; the link's model is not one of "
            "them, so the bundled model is shown."
        )
        model = BUNDLED_KEY
    unset = ss["explore_focus"] is None or ss["explore_target"] is None
    ss.update(
        {
            "explore_text": text,
            "explore_example": example,
            "explore_model": model,
            "explore_model_choice": model if model in known else OTHER_MODEL,
            "explore_model_custom": "" if model in known else model,
            "explore_model_submitted": "" if model in known else model,
            "explore_last_good": BUNDLED_KEY,
            "explore_failures": {},
            # an example picks its tokens and the head that links them best, once computed
            "explore_pending": example if example is not None and unset else None,
            "explore_pending_best_head": example is not None and "layer" not in params,
            # the link's layer, head and tokens are checked against the model and text once computed
            "explore_check_link": any(name in params for name in LINK_POSITIONS),
        }
    )
    return notes


def write_url(limits: Limits) -> None:
    """The URL says what is shown: an example by its name, otherwise the text."""
    ss = st.session_state
    page_links(limits).write_url(text=None if ss.get("explore_example") else ss.get("explore_text"))


def check_link_positions(result: AttentionResult) -> list[str]:
    """Once per session, with the first result: the link's layer, head and token positions that this
    model or text does not have are reset, with a note (the URL alone cannot say they are wrong)."""
    ss = st.session_state
    if not ss.pop("explore_check_link", False):
        return []
    notes = []
    for name, size, what in (("layer", result.n_layers, "layers"), ("head", result.n_heads, "heads")):
        value = ss.get(f"explore_{name}", 0)
        if value >= size:
            notes.append(
                f"The link's `{name}` value {value} is past this model's {size} {what} (links count "
                f"from 0); showing {name} 1 instead."
            )
            ss[f"explore_{name}"] = 0
            reset_widgets(name)
    for name in ("focus", "target"):
        value = ss.get(f"explore_{name}")
        if value is not None and value >= result.n_tokens:
            notes.append(
                f"The link's `{name}` token {value} is past this text's {result.n_tokens} tokens; "
                "showing the first word instead."
            )
            ss[f"explore_{name}"] = None
    return notes


def _find_word(result: AttentionResult, word: str) -> int | None:
    """The first token index of the first whole word equal to `word` (case-insensitive)."""
    words = token_view(result.tokens, result.word_ids, result.special_mask, merge_words=True)
    for label, (start, _stop) in zip(words.labels, words.spans, strict=True):
        if label.lower() == word.lower() and not result.special_mask[start]:
            return start
    return None


def apply_pending(result: AttentionResult, view: TokenView) -> None:
    """After an example is chosen: select its two words, and the head linking them most strongly."""
    ss = st.session_state
    name = ss.get("explore_pending")
    if name not in EXAMPLES:
        return
    example = EXAMPLES[name]
    focus, target = _find_word(result, example.focus), _find_word(result, example.target)
    if focus is not None:
        ss["explore_focus"] = focus
    if target is not None:
        ss["explore_target"] = target
    reset_widgets("focus")
    reset_widgets("target")
    a = view.item_of_token(focus) if focus is not None else None
    b = view.item_of_token(target) if target is not None else None
    if ss.get("explore_pending_best_head") and a is not None and b is not None:
        best = rank_heads(view.row(result.attentions, a)[..., b], top=1)[0]
        ss["explore_layer"], ss["explore_head"] = best.layer, best.head
        reset_widgets("layer")
        reset_widgets("head")
    ss["explore_pending"] = None
    ss["explore_pending_best_head"] = False
