"""The explore page's links: its query parameters as one table (dashboard.state.PageLinks), what a
link asks for beyond the table (an example, a model), and the checks that wait for the model and
the text.

URL parameters: text, pair (sentence B), example, model, engine, view, layer, head, focus, target,
merge, hide, measure (weights | norms: the head view's measure), rescale (norm rows rescaled to sum
to 1), ablate (the ablation view's chosen heads: "layer.head" pairs, 0-indexed, joined by commas);
for a decoder's views tokens (1–50), temperature, top_k, top_p, seed and step (the generation
step shown, from 1), length and top (the induction test's copy length and how many heads it switches
off). Layers and heads are 0-indexed; the rollout view's "up to layer" and the generate view's
layer are `layer`.
Focus and target name words (core.measures.analysis.word_ref: "it", "the#2" for the second "the",
"nlp~2" for a word's second piece), so they follow the word when the sentence changes; an old
link's whole number is read as a token position when no word of the text is that number.
A link is read on the session's first run; the URL is written at the end of every run.
"""

from __future__ import annotations

from urllib.parse import quote

import streamlit as st

from core.measures.analysis import TokenView, find_word_ref, token_view, word_ref
from core.models.errors import ModelError
from core.models.registry import BUNDLED_KEY, CURATED_HUB_MODELS, MAX_CHOICE_CHARS, parse_model_choice
from core.models.result import AttentionResult
from core.models.smollm2 import SMOLLM2_KEY
from core.text import clean_input
from dashboard.content.explore import DEFAULT_EXAMPLE, DEFAULT_LETTER_EXAMPLE, EXAMPLES, MEASURES, VIEWS
from dashboard.content.focus import FOCUS_PARTS
from dashboard.content.translator import DEFAULT_TEXT as TRANSLATOR_TEXT
from dashboard.content.translator import KINDS as TRANSLATOR_KINDS
from dashboard.engines import allowed_engines, allowed_models, default_engine, explore_models
from dashboard.hosted import Limits
from dashboard.state import (
    PageLinks,
    Parsed,
    UrlParam,
    choice_param,
    clamped_int_param,
    flag_param,
    position_note,
    position_param,
    text_param,
)
from dashboard.trained_models import is_trained_folder, is_translator_here, reads_letters
from dashboard.views.explore import generate, induction
from dashboard.views.explore.decoder import DECODER_VIEWS
from dashboard.views.explore.pairs import parse_pair
from dashboard.views.explore.results import link_ranking
from dashboard.views.explore.widgets import PAIR_KEY, max_chars, reset_widgets
from dashboard.widgets import md

OTHER_MODEL = "__other__"  # the picker's entry for a Hub id or folder typed by the user
LINK_POSITIONS = ("layer", "head", "focus", "target")  # URL values checked against the model and text
MAX_REF_CHARS = 100  # a word reference in a link: longer ones are cut
LEARN_TEXT_CHARS = 2000  # the learn page keeps at most this many characters of a sentence

# Widgets drawn on every run, whose keys hold the page state: Streamlit drops a widget's key when a
# run does not draw it (another page, or a run that stopped early), so PageLinks keeps a copy.
KEEP = (
    "explore_text",
    PAIR_KEY,
    "explore_example",
    "explore_view",
    "explore_merge",
    "explore_hide",
    "explore_model_choice",
    "explore_model_custom",
    "explore_engine",
    "explore_measure",  # the head view's weights / norms switch (dashboard/views/explore/flow.py)
    "explore_rescale",
    "explore_focus_part",  # the focus view's part on a projector (dashboard/views/explore/focus.py)
    "explore_ablate",  # the ablation view's chosen heads (dashboard/views/explore/ablation.py)
    generate.TOKENS_KEY,  # the decoder views' options (generate.py, induction.py)
    generate.TEMPERATURE_KEY,
    generate.SEED_KEY,
    generate.STEP_KEY,
    induction.LENGTH_KEY,
    induction.TOP_KEY,
)


def learn_url(
    text: str,
    layer: int | None = None,
    head: int | None = None,
    step: int | None = None,
    decoder: str | None = None,
) -> str:
    """The learn page's real-BERT mode on this sentence (user text only ever URL-encoded), or its
    decoder mode on `decoder` (a model key), opened at a layer, head (0-indexed, as in every link)
    and step when given."""
    mode = "bert" if decoder is None else f"decoder&model={quote(decoder, safe='')}"
    url = f"learn?example={mode}&text={quote(text[:LEARN_TEXT_CHARS], safe='')}"
    extra = (("layer", layer), ("head", head), ("step", step))
    return url + "".join(f"&{name}={int(value)}" for name, value in extra if value is not None)


def _parse_example(raw: str) -> Parsed:
    if raw == "" or raw in EXAMPLES:
        return raw or None, None
    return None, "The link names an unknown example; showing the text instead."


def _parse_model(raw: str) -> Parsed:
    return clean_input(raw or BUNDLED_KEY, MAX_CHOICE_CHARS + 1)[0].strip(), None


def _parse_ref(raw: str) -> Parsed:
    return clean_input(raw, MAX_REF_CHARS)[0].strip() or None, None


MAX_ABLATE_PAIRS = 1024  # far more heads than any model the page loads; a longer list is a tampered link


def parse_heads(raw: str) -> tuple[tuple[tuple[int, int], ...], str | None]:
    """A link's `ablate` ("2.3,5.11") -> sorted unique (layer, head) pairs and a note for what was
    not a pair of whole numbers. Whether the model has those heads is checked once it is loaded."""
    pairs, bad = set(), 0
    for part in clean_input(raw, 16 * MAX_ABLATE_PAIRS)[0].split(",")[:MAX_ABLATE_PAIRS]:
        layer, dot, head = part.strip().partition(".")
        if dot and all(v.isascii() and v.isdigit() and len(v) < 4 for v in (layer, head)):
            pairs.add((int(layer), int(head)))
        elif part.strip():
            bad += 1
    note = (
        "Some heads in the link's `ablate` list are not layer.head pairs; they are left out." if bad else None
    )
    return tuple(sorted(pairs)), note


def parse_temperature(raw: str) -> Parsed:
    """A link's sampling temperature: a number in the slider's range (outside it, the nearest valid
    value, with a note), on its 0.1 steps; empty: greedy (None)."""
    if raw == "":
        return None, None
    lo, hi = generate.TEMPERATURES
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        return None, "The link's `temperature` is not a number; generating greedily instead."
    nearest = round(min(max(value, lo), hi), 1)
    if nearest != round(value, 1):
        side = "0 or below" if value <= 0 else f"below {lo}" if value < lo else f"above {hi}"
        return nearest, f"The link's `temperature` is {side}; using {nearest:g}, the nearest valid value."
    return nearest, None


def show_heads(pairs) -> str:
    return ",".join(f"{layer}.{head}" for layer, head in pairs)


def page_links(limits: Limits) -> PageLinks:
    """The page's URL table; "explore_model" is the key of the model shown."""
    engines = allowed_engines(limits)
    return PageLinks(
        "explore",
        (
            text_param("text", "explore_text", "", max_chars(limits)),
            UrlParam("pair", PAIR_KEY, "", parse_pair),
            UrlParam("example", "explore_example", None, _parse_example),
            UrlParam("model", "explore_model", BUNDLED_KEY, _parse_model),
            choice_param("engine", "explore_engine", default_engine(engines), engines),
            choice_param("view", "explore_view", "head", list(VIEWS), keep_default=True),
            choice_param("kind", "explore_tr_kind", "cross", list(TRANSLATOR_KINDS)),  # the translator's
            position_param("layer", "explore_layer"),  # checked against the model: check_link_positions
            position_param("head", "explore_head"),
            UrlParam("focus", "explore_focus", None, _parse_ref),
            UrlParam("target", "explore_target", None, _parse_ref),
            flag_param("merge", "explore_merge"),
            flag_param("hide", "explore_hide"),
            choice_param("measure", "explore_measure", "weights", list(MEASURES)),
            choice_param("part", "explore_focus_part", "heads", list(FOCUS_PARTS)),  # focus, on a projector
            flag_param("rescale", "explore_rescale"),
            UrlParam("ablate", "explore_ablate", (), parse_heads, show=show_heads),
            clamped_int_param("tokens", generate.TOKENS_KEY, generate.DEFAULT_TOKENS, 1, generate.MAX_TOKENS),
            UrlParam(
                "temperature", generate.TEMPERATURE_KEY, None, parse_temperature, show=lambda v: f"{v:g}"
            ),
            *generate.sampling.LINK_PARAMS,  # top_k, top_p (views/explore/sampling.py)
            clamped_int_param("seed", generate.SEED_KEY, 0, 0, 2**31 - 1),
            clamped_int_param("step", generate.STEP_KEY, 1, 1, generate.MAX_TOKENS),
            # no length in the link: the one that suits the model shown (induction.suited_length)
            UrlParam("length", induction.LENGTH_KEY, None, induction.parse_length),
            clamped_int_param("top", induction.TOP_KEY, induction.DEFAULT_TOP, 1, induction.MAX_TOP),
        ),
        keep=KEEP,
    )


def listed_key(model: str, known: list[str]) -> str:
    """A link's model as the picker lists it: the shipped model's folder is "letters"."""
    if model in known:
        return model
    try:
        key = parse_model_choice(model).key
    except ModelError:
        return model  # loading says what is wrong with it
    return key if key in known else model


def init_state(limits: Limits) -> list[str]:
    """Seed the page state from the link once per session; return messages about bad URL values."""
    links = page_links(limits)
    if links.url_was_read():
        return []
    notes = links.read_url()
    ss, params = st.session_state, st.query_params
    known = explore_models(limits)  # a listed model is selected in the picker, not typed into "Other"
    model = listed_key(ss["explore_model"], known)
    example, text = ss["explore_example"], ss["explore_text"]
    if is_translator_here(model) and not text and "text" not in params:
        text, example = TRANSLATOR_TEXT, None  # a sentence its grammar can write
    elif not text and example is None and "text" not in params:
        # the letter GPT-2 and the models the train page makes read runs of letters, not English
        example = DEFAULT_LETTER_EXAMPLE if reads_letters(model) else DEFAULT_EXAMPLE
    if example is not None and text and text != EXAMPLES[example].text:
        example = None  # the link's own text wins
    if example is not None:
        text = EXAMPLES[example].text
    if "model" not in params and ss["explore_view"] in DECODER_VIEWS and SMOLLM2_KEY in known:
        model = SMOLLM2_KEY  # a decoder's view with no model named: the decoder that reads English
    allowed = allowed_models(limits)
    if allowed is not None and model not in known and not is_trained_folder(model):
        too_big = model in CURATED_HUB_MODELS  # curated, but measured past this demo's memory
        notes.append(
            f"The link's model `{model}` needs more memory than this public demo has; run the app on "
            "your own machine (`make run`) to load it. The bundled model is shown."
            if too_big
            else "This public demo loads only the models in the picker; the link's model is not one of "
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
            # a link naming focus and target but no head opens on the head linking them best
            "explore_pair_best_head": example is None
            and all(name in params for name in ("focus", "target"))
            and not any(name in params for name in ("layer", "head")),
            # a link to the generate view without a layer opens on the last layer (generate._layer_ui)
            generate.LAST_LAYER_KEY: ss["explore_view"] == "generate" and "layer" not in params,
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
    """Once per session, with the first result: the link's layer and head that this model does not
    have are reset, with a note (the URL alone cannot say they are wrong). Focus and target are
    checked by `resolve_pair`."""
    ss = st.session_state
    if not ss.pop("explore_check_link", False):
        return []
    notes = []
    # the similarity view reads hidden states: layer 0 is the embeddings, L the last layer's output
    similarity = ss.get("explore_view") == "similarity"
    layers = result.n_layers + similarity
    for name, size, what in (("layer", layers, "layers"), ("head", result.n_heads, "heads")):
        first_shown = 0 if similarity and name == "layer" else 1
        value, note = position_note(name, ss.get(f"explore_{name}", 0), size, what, first_shown)
        if note:
            notes.append(note)
            ss[f"explore_{name}"] = value
            reset_widgets(name)
    return notes


# ---- focus and target: words, not positions -----------------------------------------------------------


def _words(result: AttentionResult) -> TokenView:
    return token_view(result.tokens, result.word_ids, result.special_mask, merge_words=True)


def token_of(result: AttentionResult, ref: str | None) -> int | None:
    """The token the reference names in this result, or None. A whole number that is no word of the
    text is a token position (links written before words were used)."""
    if not ref:
        return None
    words = _words(result)
    found = find_word_ref(ref, words.labels, words.spans)
    if found is None and ref.isascii() and ref.isdigit() and int(ref) < result.n_tokens:
        return int(ref)
    return found


def ref_of(result: AttentionResult, token: int) -> str:
    """The word reference of token `token` in this result."""
    words = _words(result)
    return word_ref(words.labels, words.spans, token)


def resolve_pair(result: AttentionResult) -> tuple[tuple[int | None, int | None], list[str], str | None]:
    """The focus and target tokens for this result, what the page should say about them (notes), and
    one short line for the words a new text lost.

    When the text changed since they were last resolved, each follows its word if the new text has
    it, else falls back to the page's default (and the reference is cleared, so the head view marks
    no pair nobody chose). A link's word that is not in its own text gets a note; words a typed
    sentence lacks (an example's pair, mostly) get the one line, so the answer stays in view.
    """
    ss = st.session_state
    text = ss.get("explore_text", "")
    before = ss.get("explore_pair_text")
    changed = before is not None and before != text
    ss["explore_pair_text"] = text
    tokens: list[int | None] = []
    kept, lost = [], []
    for name, what in (("focus", "focus word"), ("target", "target word")):
        ref = ss.get(f"explore_{name}")
        token = token_of(result, ref)
        if ref and token is None:
            ss[f"explore_{name}"] = None
            lost.append((name, what, ref))
        elif ref and token is not None:
            canonical = ref_of(result, token)
            if canonical != ref:  # an old link's position, or another spelling: name the word
                ss[f"explore_{name}"] = canonical
            kept.append(canonical)
        tokens.append(token)
    pair = (tokens[0], tokens[1])
    if changed and lost:  # a typed sentence lacks the pair's words (an example's, mostly): one line
        words = " or ".join(f"“{md(ref)}”" for _, _, ref in lost)
        who, s = ("focus and target are", "s") if len(lost) > 1 else (f"the {lost[0][1]} is", "")
        return pair, [], f"The new text has no {words}: {who} back to the default{s}."
    if changed:
        shown = " → ".join(f"“{md(ref)}”" for ref in kept)
        return pair, [f"The new text still has {shown}: the choice follows the words."] if kept else [], None
    notes = [
        f"The {what} “{md(ref)}” is not a word of this text (the link's `{name}`), so the {what} is back "
        "to the page's default."
        for name, what, ref in lost
    ]
    return pair, notes, None


def apply_link_pair(result: AttentionResult, view: TokenView, tokens: tuple[int | None, int | None]) -> None:
    """Once, after a link that names focus and target but no layer or head (the link a teacher
    prepares for "which head?"): open on the head linking them most specifically, as an example
    does."""
    ss = st.session_state
    if not ss.pop("explore_pair_best_head", False):
        return
    a, b = (view.item_of_token(t) if t is not None else None for t in tokens)
    if a is None or b is None or a == b:
        return
    best = link_ranking(result, view, a, b)[0]
    ss["explore_layer"], ss["explore_head"] = best.layer, best.head
    reset_widgets("layer")
    reset_widgets("head")


def apply_pending(result: AttentionResult, view: TokenView) -> None:
    """After an example is chosen: select its two words, and the head linking them most specifically."""
    ss = st.session_state
    name = ss.get("explore_pending")
    if name not in EXAMPLES:
        return
    example = EXAMPLES[name]
    focus, target = token_of(result, example.focus), token_of(result, example.target)
    ss["explore_focus"] = ref_of(result, focus) if focus is not None else None
    ss["explore_target"] = ref_of(result, target) if target is not None else None
    ss["explore_pair_text"] = ss.get("explore_text", "")  # chosen for this text: nothing to follow
    reset_widgets("focus")
    reset_widgets("target")
    a = view.item_of_token(focus) if focus is not None else None
    b = view.item_of_token(target) if target is not None else None
    if ss.get("explore_pending_best_head") and a is not None and b is not None and a != b:
        best = link_ranking(result, view, a, b)[0]
        ss["explore_layer"], ss["explore_head"] = best.layer, best.head
        reset_widgets("layer")
        reset_widgets("head")
    ss["explore_pending"] = None
    ss["explore_pending_best_head"] = False
