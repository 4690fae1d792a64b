"""The explore page: a pretrained BERT's attention heads, offline by default.

Views (URL `view`): head (one head as a heatmap), lines (bertviz-style, one layer), model (all
layers × heads as thumbnails) and focus (one token in every head, plus "find the head").

How the page is put together:
- `ENGINES` maps an engine name to how to load it from a model directory. The page only ever calls
  `engine.run(text) -> AttentionResult`, so the NumPy engine (core/bert.py) plugs in as one more
  entry; `load_engine` (st.cache_resource) holds each (model, engine) once per process and
  `compute_attention` (st.cache_data, bounded) each result.
- Page state lives in st.session_state under "explore_*" keys and is mirrored into the URL's query
  parameters (text, model, view, layer, head, focus, target, example, merge, hide; layers, heads and
  token positions 0-indexed) at the end of every run, so a copied link reproduces the view.
  Widgets whose options depend on the model or the tokens (layer, head, focus token) get keys
  that include those options' signature and are seeded from the canonical state.
- User text never reaches markdown unescaped (`md`), and never reaches HTML; text boxes and URL
  values are cleaned (lone surrogates, length) before use (dashboard/state.py).
- Model problems show as st.error; the last model that loaded stays in use.
- Hosted mode (dashboard/hosted.py, read every run): only allowlisted models and torch-free
  engines, fewer tokens and characters, a line cap in the lines view, new texts per minute bounded.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.analysis import TokenView, head_stats, rank_heads, token_view
from core.models import (
    BUNDLED_KEY,
    CURATED_HUB_MODELS,
    MAX_CHOICE_CHARS,
    ModelError,
    ModelInputError,
    ModelSpec,
    parse_model_choice,
    prepare_model_files,
)
from core.result import AttentionResult
from dashboard.charts.explore import (
    focus_heatmap,
    head_heatmap,
    head_weight_grid,
    lines_figure,
    model_grid_figure,
    thumbnail_grid_png,
)
from dashboard.engines import (
    _LOADED,
    DEFAULT_ENGINE,
    ENGINES,
    AttentionEngine,
    allowed_engines,
    allowed_models,
    compute_attention,
    default_engine,
    load_engine,
    numpy_unsupported_reason,
)
from dashboard.hosted import Limits, current_limits
from dashboard.state import (
    clean_input,
    clean_widget_text,
    read_choice_param,
    read_int_param,
    read_text_param,
    write_params,
)

LOG = logging.getLogger(__name__)

MAX_TEXT_CHARS = 10_000
LINES_FULL_LIMIT = 64  # above this many tokens the lines view draws only each token's strongest lines
LINES_TOP_K = 3
VIEWS = {"head": "Head", "lines": "Lines", "model": "Model (all heads)", "focus": "Token focus"}
OTHER_MODEL = "__other__"


# --------------------------------------------------------------------------------------------------
# Examples gallery
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    title: str  # the gallery button
    text: str
    focus: str  # the word to look from (matched case-insensitively against whole words)
    target: str  # the word to look at, for "find the head"
    caption: str  # one line, shown under the gallery


EXAMPLES: dict[str, Example] = {
    "trophy-large": Example(
        "Trophy · too large",
        "The trophy wouldn't fit in the suitcase because it was too large.",
        "it",
        "trophy",
        "Only knowing about trophies and suitcases tells you that “it” is the trophy. "
        "Do any heads link the pronoun back to it?",
    ),
    "trophy-small": Example(
        "Trophy · too small",
        "The trophy wouldn't fit in the suitcase because it was too small.",
        "it",
        "suitcase",
        "One word changed and “it” now means the suitcase. "
        "Do the heads that found the trophy follow the switch?",
    ),
    "bank-loan": Example(
        "Bank · loan",
        "The bank approved the loan.",
        "bank",
        "loan",
        "“Bank” as a lender: see which words it draws on, then compare with the river sentence.",
    ),
    "bank-river": Example(
        "Bank · river",
        "We had a picnic on the bank of the river.",
        "bank",
        "river",
        "The same word at the water's edge: its context changes, and so do the heads that carry it.",
    ),
    "cat-mat": Example(
        "The cat sat on the mat",
        "The cat sat on the mat.",
        "sat",
        "cat",
        "A short plain sentence: a good place to spot heads that look at the previous or next word, "
        "or park their attention on [SEP].",
    ),
    "love-nlp": Example(
        "I love NLP",
        "I love NLP",
        "nlp",
        "love",
        "Three words, one of them cut into word pieces (nl + ##p): switch “merge word pieces” on and off.",
    ),
}
DEFAULT_EXAMPLE = "trophy-large"


@st.cache_data(max_entries=32, show_spinner=False)
def model_grid_data(
    model_key: str, engine: str, text: str, merge: bool, hide: bool, max_tokens: int = 512
) -> tuple[bytes, int, int, list[str]]:
    """The model view's PNG and hover texts (a few hundred kB at most), cached per view."""
    result = compute_attention(model_key, engine, text, max_tokens)
    view = _token_view(result, merge, hide)
    png, cell, gap = thumbnail_grid_png(view.matrix(result.attentions))
    stats = head_stats(result.attentions, result.special_mask)
    hover = [
        f"<b>layer {layer + 1}, head {head + 1}</b><br>"
        f"on [CLS]/[SEP]: {stats['to_special'][layer, head]:.0%}<br>"
        f"on the previous token: {stats['to_previous'][layer, head]:.0%}<br>"
        f"on itself: {stats['to_self'][layer, head]:.0%}<br>"
        f"on the next token: {stats['to_next'][layer, head]:.0%}<br>"
        f"spread (entropy): {stats['entropy'][layer, head]:.1f} bits<br><i>click to open</i>"
        for layer in range(result.n_layers)
        for head in range(result.n_heads)
    ]
    return png, cell, gap, hover


class TooManyTexts(Exception):
    """This session sent more new texts in the last minute than hosted mode allows."""


def _clock() -> float:
    return time.monotonic()


def _count_new_text(limit: int | None) -> None:
    """Hosted mode: raise TooManyTexts past `limit` new texts in 60 s for this session, so one
    visitor cannot keep the shared CPU busy. Views of a text already shown are not counted."""
    if limit is None:
        return
    now = _clock()
    recent = [t for t in st.session_state.get("explore_text_times", []) if now - t < 60.0]
    if len(recent) >= limit:
        st.session_state["explore_text_times"] = recent
        raise TooManyTexts
    st.session_state["explore_text_times"] = [*recent, now]


def _result_for(model_key: str, engine: str, text: str, limits: Limits) -> AttentionResult:
    """The result for this session's current input. The session remembers only which input it shows
    (for the new-texts-per-minute limit); the shared cache holds the arrays."""
    ss = st.session_state
    key = (model_key, engine, text, limits.max_tokens)
    if ss.get("explore_counted_key") != key:
        _count_new_text(limits.max_texts_per_minute)
        ss["explore_counted_key"] = key
    result = compute_attention(model_key, engine, text, limits.max_tokens)
    ss["explore_result_key"] = key  # only once it ran: tests and the page read what is shown
    return result


def _token_view(result: AttentionResult, merge: bool, hide: bool) -> TokenView:
    return token_view(
        result.tokens, result.word_ids, result.special_mask, merge_words=merge, hide_special=hide
    )


# --------------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md(text: object) -> str:
    """Escape user-derived text for st.markdown / st.error / st.caption (shown literally)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def _model_label(key: str) -> str:
    if key == BUNDLED_KEY:
        return "all-MiniLM-L6-v2 · bundled"
    if key in CURATED_HUB_MODELS:
        return f"{key} (Hub)"
    if key == OTHER_MODEL:
        return "Other: a Hub id or a local folder…"
    return key


def _reset_widgets(name: str) -> None:
    """Forget a bound widget's own state so it is seeded again from the canonical value."""
    prefix = f"explore_w_{name}_"
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]


def _bound_key(name: str, signature: object, value: object) -> str:
    """The key of a widget showing canonical state `name` whose options depend on `signature`."""
    key = f"explore_w_{name}_{signature}"
    if key not in st.session_state:
        st.session_state[key] = value
    return key


def _signature(*parts: object) -> str:
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()[:10]


# --------------------------------------------------------------------------------------------------
# State: URL -> session on a session's first run; callbacks change it; session -> URL every run
# --------------------------------------------------------------------------------------------------
LINK_POSITIONS = ("layer", "head", "focus", "target")  # URL values checked against the model and text


def _init_state(limits: Limits) -> list[str]:
    """Seed the page state from the URL once per session; return messages about bad URL values."""
    ss = st.session_state
    if ss.get("explore_ready"):
        return []
    notes: list[str] = []
    example = st.query_params.get("example") or None
    if example is not None and example not in EXAMPLES:
        notes.append("The link names an unknown example; showing the text instead.")
        example = None
    text = read_text_param("text", "", _max_chars(limits))
    if not text and example is None and "text" not in st.query_params:
        example = DEFAULT_EXAMPLE
    if example is not None and text and text != EXAMPLES[example].text:
        example = None  # the link's own text wins
    if example is not None:
        text = EXAMPLES[example].text
    view, note = read_choice_param("view", list(VIEWS), "head")
    notes += [note] if note else []
    layer, note = read_int_param("layer", 0, 0, 999)
    notes += [note] if note else []
    head, note = read_int_param("head", 0, 0, 999)
    notes += [note] if note else []
    focus, note = read_int_param("focus", -1, 0, 99_999)
    notes += [note] if note else []
    target, note = read_int_param("target", -1, 0, 99_999)
    notes += [note] if note else []
    engines = allowed_engines(limits)
    engine, note = read_choice_param("engine", engines, default_engine(engines))
    notes += [note] if note else []
    model = clean_input(st.query_params.get("model") or BUNDLED_KEY, MAX_CHOICE_CHARS + 1)[0].strip()
    known = [BUNDLED_KEY, *CURATED_HUB_MODELS]
    if allowed_models(limits) is not None and model not in known:
        notes.append(
            "This public demo loads only the models in the picker; the link's model is not one of "
            "them, so the bundled model is shown."
        )
        model = BUNDLED_KEY
    ss.update(
        {
            "explore_text": text,
            "explore_example": example,
            "explore_view": view,
            "explore_layer": layer,
            "explore_head": head,
            "explore_focus": focus if focus >= 0 else None,
            "explore_target": target if target >= 0 else None,
            "explore_merge": st.query_params.get("merge") == "1",
            "explore_hide": st.query_params.get("hide") == "1",
            "explore_engine": engine,
            "explore_model_choice": model if model in known else OTHER_MODEL,
            "explore_model_custom": "" if model in known else model,
            "explore_model_submitted": "" if model in known else model,
            "explore_last_good": BUNDLED_KEY,
            "explore_failures": {},
            # an example picks its tokens and the head that links them best, once computed
            "explore_pending": example if example is not None and (focus < 0 or target < 0) else None,
            "explore_pending_best_head": example is not None and "layer" not in st.query_params,
            # the link's layer, head and tokens are checked against the model and text once computed
            "explore_check_link": any(name in st.query_params for name in LINK_POSITIONS),
            "explore_ready": True,
        }
    )
    return notes


def _check_link_positions(result: AttentionResult) -> list[str]:
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
            _reset_widgets(name)
    for name in ("focus", "target"):
        value = ss.get(f"explore_{name}")
        if value is not None and value >= result.n_tokens:
            notes.append(
                f"The link's `{name}` token {value} is past this text's {result.n_tokens} tokens; "
                "showing the first word instead."
            )
            ss[f"explore_{name}"] = None
    return notes


# Widgets drawn on every run, whose keys hold the page state. Streamlit drops a widget's key when
# a run does not draw it (another page, or a run that stopped early), so a copy is kept aside.
PERSISTENT_WIDGETS = (
    "explore_text",
    "explore_example",
    "explore_view",
    "explore_merge",
    "explore_hide",
    "explore_model_choice",
    "explore_model_custom",
    "explore_engine",
)


def _restore_widget_state() -> None:
    saved = st.session_state.get("explore_saved", {})
    for key, value in saved.items():
        if key not in st.session_state:
            st.session_state[key] = value


def _save_widget_state() -> None:
    st.session_state["explore_saved"] = {
        key: st.session_state[key] for key in PERSISTENT_WIDGETS if key in st.session_state
    }


def _on_example() -> None:
    ss = st.session_state
    name = ss.get("explore_example")
    if name in EXAMPLES:
        ss["explore_text"] = EXAMPLES[name].text
        ss["explore_pending"] = name
        ss["explore_pending_best_head"] = True


def _on_model_choice() -> None:
    """A deliberate choice retries a model that failed before (the network may be back)."""
    ss = st.session_state
    engine = ss.get("explore_engine", DEFAULT_ENGINE)
    ss["explore_failures"].pop(f"{engine}:{ss.get('explore_model_choice')}", None)


def _on_text_change() -> None:
    ss = st.session_state
    name = ss.get("explore_example")
    if name in EXAMPLES and ss.get("explore_text") != EXAMPLES[name].text:
        ss["explore_example"] = None


def _open_head(layer: int, head: int) -> None:
    """Callback: show (layer, head) in the head view."""
    ss = st.session_state
    ss["explore_layer"], ss["explore_head"], ss["explore_view"] = int(layer), int(head), "head"
    for name in ("layer", "head", "model_layer", "model_head"):
        _reset_widgets(name)


def _on_grid_select() -> None:
    """Callback: a click on a model-view thumbnail opens that head."""
    event = st.session_state.get("explore_model_grid")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for point in points:
        data = point.get("customdata")  # [layer, head]; a typed array may arrive as {"0": l, "1": h}
        if isinstance(data, dict):
            data = [data.get("0"), data.get("1")]
        if isinstance(data, list) and len(data) == 2 and all(isinstance(v, int | float) for v in data):
            _open_head(int(data[0]), int(data[1]))
            return


def _write_url(model_key: str) -> None:
    ss = st.session_state
    example = ss.get("explore_example")
    write_params(
        text=None if example else (ss.get("explore_text") or None),
        example=example or None,
        model=None if model_key == BUNDLED_KEY else model_key,
        engine=None if ss.get("explore_engine") == DEFAULT_ENGINE else ss.get("explore_engine"),
        view=ss.get("explore_view"),
        layer=ss.get("explore_layer"),
        head=ss.get("explore_head"),
        focus=ss.get("explore_focus"),
        target=ss.get("explore_target"),
        merge="1" if ss.get("explore_merge") else None,
        hide="1" if ss.get("explore_hide") else None,
    )


# --------------------------------------------------------------------------------------------------
# Model picker and loading
# --------------------------------------------------------------------------------------------------
def model_ui(limits: Limits) -> tuple[str, str]:
    """Sidebar: the model picker (and the engine switch when there are several). Returns what the
    user asks for: (model text as typed or chosen, engine name). In hosted mode the picker has no
    free-text entry and the engine switch only engines that run without PyTorch."""
    ss = st.session_state
    with st.sidebar:
        st.subheader("Model")
        options = [BUNDLED_KEY, *CURATED_HUB_MODELS]
        if limits.allow_custom_models:
            options.append(OTHER_MODEL)
        if ss.get("explore_model_choice") not in options:
            ss["explore_model_choice"] = BUNDLED_KEY
        choice = st.selectbox(
            "Model",
            options,
            format_func=_model_label,
            key="explore_model_choice",
            on_change=_on_model_choice,
            label_visibility="collapsed",
            help="The bundled model works offline. Hub models are downloaded once (safetensors only).",
        )
        if choice in CURATED_HUB_MODELS:
            info = CURATED_HUB_MODELS[choice]
            st.caption(f"{info.summary}; {info.download} to download the first time.")
        requested = choice
        if choice == OTHER_MODEL:
            with st.form("explore_model_form", border=False):
                st.text_input(
                    "Hub id or local folder",
                    key="explore_model_custom",
                    placeholder="owner/name, or /path/to/folder",
                    max_chars=300,
                )
                if st.form_submit_button("Load"):
                    typed = ss.get("explore_model_custom", "").strip()
                    ss["explore_model_submitted"] = typed
                    ss["explore_failures"].pop(f"{ss.get('explore_engine', DEFAULT_ENGINE)}:{typed}", None)
            requested = ss.get("explore_model_submitted", "")
            if not requested:
                st.caption("Type an encoder model's Hub id (e.g. `bert-base-cased`) or a folder, then Load.")
                requested = ss.get("explore_last_good", BUNDLED_KEY)
        engines = allowed_engines(limits)
        if ss.get("explore_engine") not in engines:
            ss["explore_engine"] = default_engine(engines)
        engine = ss["explore_engine"]
        if len(engines) > 1:
            engine = st.radio("Engine", engines, format_func=lambda e: ENGINES[e].label, key="explore_engine")
    return requested, engine


def _load_with_progress(spec: ModelSpec, engine: str) -> AttentionEngine:
    if (spec.key, engine) in _LOADED:
        return load_engine(spec.key, engine)
    with st.status(f"Loading {md(spec.label)}…", expanded=True) as status:
        try:
            # Fetch (download) outside the cached loader so its stages can be shown here; the
            # cached loader then finds the files in place.
            prepare_model_files(
                spec, check_config=ENGINES[engine].check_config, progress=lambda m: status.write(md(m))
            )
            status.write("Building the model…")
            engine_obj = load_engine(spec.key, engine)
        except Exception:
            status.update(label=f"Could not load {md(spec.label)}", state="error", expanded=False)
            raise
        status.update(label=f"Loaded {md(spec.label)}", state="complete", expanded=False)
    _LOADED.add((spec.key, engine))
    return engine_obj


def _try_load(requested: str, engine: str, limits: Limits) -> tuple[ModelSpec, AttentionEngine] | str:
    """The engine for `requested`, or the message saying why not (remembered for the session)."""
    failures: dict[str, str] = st.session_state["explore_failures"]
    memo = f"{engine}:{requested}"
    if memo in failures:
        return failures[memo]
    try:
        spec = parse_model_choice(requested, allow_local=limits.allow_custom_models)
        allowed = allowed_models(limits)
        if allowed is not None and spec.key not in allowed:
            raise ModelInputError("this public demo loads only the models in its picker")
        return spec, _load_with_progress(spec, engine)
    except ModelError as err:
        message = str(err)
    except Exception as err:  # never a traceback in the page; the log keeps the details
        LOG.exception("loading model %r failed", requested)
        message = f"loading failed unexpectedly ({type(err).__name__}: {str(err)[:200]})"
    failures[memo] = message
    return message


def resolve_model(requested: str, engine: str, limits: Limits) -> tuple[ModelSpec, AttentionEngine] | None:
    """Load what was asked for, or say why not and fall back to the last model that worked."""
    ss = st.session_state
    loaded = _try_load(requested, engine, limits)
    if isinstance(loaded, tuple):
        ss["explore_last_good"] = loaded[0].key
        return loaded
    last_good = ss.get("explore_last_good", BUNDLED_KEY)
    fallback = _try_load(last_good, engine, limits) if last_good != requested else loaded
    asked = md(_model_label(requested))
    if isinstance(fallback, tuple):
        reason = md(loaded.rstrip("."))
        st.error(f"Could not use the model “{asked}”: {reason}. Still showing {md(fallback[0].label)}.")
        return fallback
    st.error(f"Could not use the model “{asked}”: {md(loaded.rstrip('.'))}.")
    if last_good != BUNDLED_KEY and requested != BUNDLED_KEY:
        bundled = _try_load(BUNDLED_KEY, engine, limits)
        if isinstance(bundled, tuple):
            ss["explore_last_good"] = BUNDLED_KEY
            return bundled
    return None


def parity_ui(model_key: str, engine: str, text: str, limits: Limits, result: AttentionResult) -> None:
    """The parity badge: the largest difference between the two engines' attention weights on this
    sentence. Shown once the other engine is loaded; a toggle loads it (PyTorch costs seconds and
    memory, so the page does not load it unasked)."""
    other = "torch" if engine == "numpy" else "numpy"
    if other not in allowed_engines(limits) or (other == "numpy" and numpy_unsupported_reason(model_key)):
        return
    if (model_key, other) not in _LOADED and not st.toggle(
        f"Check against {'PyTorch' if other == 'torch' else 'NumPy'}",
        key="explore_parity",
        help="Run the same sentence through the other engine and show the largest difference.",
    ):
        return
    try:
        reference = compute_attention(model_key, other, text, limits.max_tokens)
    except Exception as err:  # the badge is extra: never let it break the page
        LOG.exception("parity check failed")
        st.caption(f"Parity check unavailable ({type(err).__name__}).")
        return
    _LOADED.add((model_key, other))
    from core.result import compare_results

    try:
        diff = compare_results(reference, result)["attentions"]
    except ValueError:
        st.caption("Parity: the engines tokenised this text differently; no comparison.")
        return
    ok = diff <= 1e-5
    st.badge(
        f"NumPy vs PyTorch: max |Δ| = {diff:.1e}",
        icon=":material/check:" if ok else ":material/warning:",
        color="green" if ok else "orange",
    )
    st.caption(
        f"Largest difference between the two engines' attention weights over all "
        f"{result.n_layers} × {result.n_heads} heads of this sentence (float32; the bridge promises ≤ 1e-5)."
    )


# --------------------------------------------------------------------------------------------------
# Token choices
# --------------------------------------------------------------------------------------------------
def _find_word(result: AttentionResult, word: str) -> int | None:
    """The first token index of the first whole word equal to `word` (case-insensitive)."""
    words = token_view(result.tokens, result.word_ids, result.special_mask, merge_words=True)
    for label, (start, _stop) in zip(words.labels, words.spans, strict=True):
        if label.lower() == word.lower() and not result.special_mask[start]:
            return start
    return None


def _apply_pending(result: AttentionResult, view: TokenView) -> None:
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
    _reset_widgets("focus")
    _reset_widgets("target")
    a = view.item_of_token(focus) if focus is not None else None
    b = view.item_of_token(target) if target is not None else None
    if ss.get("explore_pending_best_head") and a is not None and b is not None:
        best = rank_heads(view.row(result.attentions, a)[..., b], top=1)[0]
        ss["explore_layer"], ss["explore_head"] = best.layer, best.head
        _reset_widgets("layer")
        _reset_widgets("head")
    ss["explore_pending"] = None
    ss["explore_pending_best_head"] = False


def _default_item(view: TokenView, special: np.ndarray, skip: int | None = None) -> int:
    """The first shown item that is not a special token (and not `skip`)."""
    for item, (start, _stop) in enumerate(view.shown_spans):
        if not special[start] and item != skip:
            return item
    return 0


def _token_picker(
    name: str, label: str, view: TokenView, result: AttentionResult, sig: str, avoid: int | None = None
) -> int:
    """A selectbox over the shown tokens, bound to the canonical token index `explore_<name>`."""
    ss = st.session_state
    stored = ss.get(f"explore_{name}")
    item = view.item_of_token(stored) if stored is not None and stored < result.n_tokens else None
    if item is None:
        item = _default_item(view, result.special_mask, skip=avoid)
    labels = view.labels
    key = _bound_key(name, sig, item)
    chosen = st.selectbox(
        label, list(range(view.n_items)), format_func=lambda i: f"{labels[i]}  (#{i + 1})", key=key
    )
    ss[f"explore_{name}"] = view.shown_spans[chosen][0]
    return chosen


def _layer_head_ui(result: AttentionResult, *, with_head: bool = True) -> tuple[int, int]:
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
            key=_bound_key("layer", n_layers, layer),
        )
    if with_head:
        with cols[1]:
            head = st.select_slider(
                f"Head (1–{n_heads})",
                options=list(range(n_heads)),
                format_func=lambda i: str(i + 1),
                key=_bound_key("head", n_heads, head),
            )
    ss["explore_layer"], ss["explore_head"] = layer, head
    return layer, head


def _view_note(view: TokenView) -> str:
    notes = []
    if view.merged:
        notes.append("word pieces merged")
    if view.renormalised:
        notes.append("[CLS]/[SEP] hidden, rows renormalised")
    return " · ".join(notes)


def _chart(fig, key: str, **kw) -> None:
    st.plotly_chart(fig, key=key, config={"displaylogo": False}, **kw)


# --------------------------------------------------------------------------------------------------
# Views
# --------------------------------------------------------------------------------------------------
def head_view(result: AttentionResult, view: TokenView, pair: tuple[int | None, int | None]) -> None:
    layer, head = _layer_head_ui(result)
    matrix = view.matrix(result.attentions[layer, head])  # (W, W)
    highlight = pair if pair[0] is not None and pair[1] is not None else None
    note = _view_note(view)
    title = f"Layer {layer + 1}, head {head + 1}" + (f" · {note}" if note else "")
    _chart(head_heatmap(matrix, view.labels, title=title, highlight=highlight), "explore_head_chart")
    stats = head_stats(result.attentions[layer : layer + 1, head : head + 1], result.special_mask)
    st.caption(
        "Rows: the token that attends (query). Columns: the token it attends to (key). Each row sums "
        "to 1; hover a cell for the exact weight. "
        f"On average this head puts {stats['to_special'][0, 0]:.0%} of a token's attention on "
        f"\\[CLS\\]/\\[SEP\\], {stats['to_previous'][0, 0]:.0%} on the previous token, "
        f"{stats['to_self'][0, 0]:.0%} on the token itself and {stats['to_next'][0, 0]:.0%} on the next one "
        "(shares can overlap: the first word's previous token is \\[CLS\\]"
        + ("; counted before hiding \\[CLS\\]/\\[SEP\\])." if view.renormalised else ").")
        + (" The red box marks the focus → target pair." if highlight else "")
    )


def lines_view(result: AttentionResult, view: TokenView, sig: str, max_lines: int) -> None:
    layer, head = _layer_head_ui(result, with_head=False)
    long_input = view.n_items > LINES_FULL_LIMIT
    cols = st.columns([2, 2, 2, 1])
    with cols[0]:
        options = [-1, *range(view.n_items)]
        labels = view.labels
        token = st.selectbox(
            "Show the lines of",
            options,
            format_func=lambda i: "every token" if i < 0 else f"{labels[i]}  (#{i + 1})",
            key=f"explore_w_lines_token_{sig}",
        )
    with cols[1]:
        direction = st.radio(
            "Direction",
            ["from", "to"],
            format_func=lambda d: "its attention (from it)" if d == "from" else "attention to it",
            horizontal=True,
            key="explore_lines_direction",
            disabled=token < 0,
        )
    with cols[2]:
        min_weight = st.slider(
            "Hide lines lighter than",
            0.0,
            0.5,
            0.0 if long_input else 0.02,  # long inputs: the top-k rule below already thins the lines
            0.01,
            key=f"explore_lines_min_{'long' if long_input else 'short'}",
            help="Weights below this are not drawn. Opacity follows the weight.",
        )
    with cols[3]:
        all_heads = st.toggle(
            "All heads",
            key="explore_lines_all_heads",
            help=f"Off: only head {head + 1}, as in the head view.",
        )
    top_k = LINES_TOP_K if long_input and token < 0 else None
    # Every head's lines are in the figure (hidden heads too, for the legend): cap their number.
    per_token = top_k or view.n_items
    if token < 0 and result.n_heads * view.n_items * per_token > max_lines:
        top_k = max(1, max_lines // (result.n_heads * max(view.n_items, 1)))
    note = _view_note(view)
    fig = lines_figure(
        view.matrix(result.attentions[layer]),
        view.labels,
        shown_heads=None if all_heads else [head],
        token=None if token < 0 else token,
        direction=direction,
        min_weight=min_weight,
        top_k=top_k,
        title=f"Layer {layer + 1}, "
        + ("all heads" if all_heads else f"head {head + 1}")
        + (f" · {note}" if note else ""),
    )
    _chart(fig, "explore_lines_chart")
    st.caption(
        "Left: each token as a query; right: the same tokens as keys. A line's opacity follows its "
        "weight; colours are heads: click a head in the legend to show or hide it, double-click to "
        "show only that head."
        + (
            f" With {view.n_items} tokens, only each token's {top_k} strongest lines per head are drawn."
            if top_k
            else ""
        )
    )


def model_view(
    result: AttentionResult, view: TokenView, model_key: str, engine: str, text: str, max_tokens: int
) -> None:
    ss = st.session_state
    png, cell, gap, hover = model_grid_data(
        model_key, engine, text, view.merged, view.renormalised, max_tokens
    )
    st.caption(
        f"All {result.n_layers} layers × {result.n_heads} heads. Each thumbnail is one head's map "
        "(rows: from, columns: to), coloured by the square root of the weight so faint patterns show"
        + ("; each pixel is the largest weight in its block of tokens" if view.n_items > 96 else "")
        + ". Click a thumbnail, or pick it below, to open it in the head view."
    )
    chart_slot = st.container()  # the grid goes above the pickers but is drawn after them
    layer = min(int(ss.get("explore_layer", 0)), result.n_layers - 1)
    head = min(int(ss.get("explore_head", 0)), result.n_heads - 1)
    cols = st.columns([2, 2, 1], vertical_alignment="bottom")
    with cols[0]:
        layer = st.selectbox(
            "Layer",
            list(range(result.n_layers)),
            format_func=lambda i: f"layer {i + 1}",
            key=_bound_key("model_layer", result.n_layers, layer),
        )
    with cols[1]:
        head = st.selectbox(
            "Head",
            list(range(result.n_heads)),
            format_func=lambda i: f"head {i + 1}",
            key=_bound_key("model_head", result.n_heads, head),
        )
    with cols[2]:
        st.button(
            "Open in head view",
            key="explore_open_head",
            on_click=_open_head,
            args=(layer, head),
            type="primary",
            width="stretch",
        )
    if (layer, head) != (ss.get("explore_layer"), ss.get("explore_head")):
        ss["explore_layer"], ss["explore_head"] = layer, head
        _reset_widgets("layer")
        _reset_widgets("head")
    fig = model_grid_figure(
        png, result.n_layers, result.n_heads, cell, gap, hover=hover, selected=(layer, head)
    )
    with chart_slot:
        _chart(fig, "explore_model_grid", on_select=_on_grid_select, selection_mode="points")
    if note := _view_note(view):
        st.caption(note)


def focus_view(result: AttentionResult, view: TokenView, sig: str) -> None:
    cols = st.columns(2)
    with cols[0]:
        a = _token_picker("focus", "Focus token (from)", view, result, sig)
    with cols[1]:
        b = _token_picker("target", "Find the heads that link it to (to)", view, result, sig, avoid=a)
    rows = view.row(result.attentions, a)  # (L, H, W): where the focus token looks, in every head
    weights = rows[..., b]  # (L, H)
    ranked = rank_heads(weights, top=5)
    a_label, b_label = view.labels[a], view.labels[b]
    best = ranked[0]
    st.markdown(
        f"**Find the head:** the strongest link from “{md(a_label)}” to “{md(b_label)}” is in "
        f"layer {best.layer + 1}, head {best.head + 1}, where {best.weight:.0%} of "
        f"“{md(a_label)}”'s attention goes to “{md(b_label)}”."
    )
    left, right = st.columns([3, 1])
    with left:
        st.caption(f"Weight from “{md(a_label)}” to “{md(b_label)}” in every head (layers and heads from 1)")
        _chart(
            head_weight_grid(weights, a_label, b_label, selected=(best.layer, best.head)),
            "explore_focus_grid",
        )
    with right:
        st.caption("Top heads, one click away (opens the head view):")
        for rank, score in enumerate(ranked, start=1):
            st.button(
                f"{rank}. layer {score.layer + 1}, head {score.head + 1}: {score.weight:.2f}",
                key=f"explore_top_{rank}",
                on_click=_open_head,
                args=(score.layer, score.head),
                width="stretch",
            )
    st.caption(f"Where “{md(a_label)}” looks, in every layer and head (rows), over all tokens (columns)")
    _chart(focus_heatmap(rows, view.labels, a_label), "explore_focus_chart")
    if note := _view_note(view):
        st.caption(note)


# --------------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------------
def sentence_ui(limits: Limits) -> str:
    """Examples gallery and the sentence box; returns the text to analyse."""
    ss = st.session_state
    st.pills(
        "Examples",
        list(EXAMPLES),
        format_func=lambda name: EXAMPLES[name].title,
        key="explore_example",
        on_change=_on_example,
    )
    example = ss.get("explore_example")
    if example in EXAMPLES:
        st.caption(EXAMPLES[example].caption)
    st.text_area(
        f"Sentence (up to {limits.max_tokens} tokens are analysed; longer text is cut)",
        key="explore_text",
        height=80,
        max_chars=_max_chars(limits),
        on_change=_on_text_change,
    )
    return ss.get("explore_text", "")


def options_ui() -> tuple[str, bool, bool]:
    cols = st.columns([3, 2, 2])
    with cols[0]:
        view = st.segmented_control(
            "View", list(VIEWS), format_func=lambda v: VIEWS[v], key="explore_view", required=True
        )
    with cols[1]:
        merge = st.toggle(
            "Merge word pieces into words",
            key="explore_merge",
            help="Attention to a word is the sum over its pieces; "
            "from a word, the average of its pieces' rows.",
        )
    with cols[2]:
        hide = st.toggle(
            "Hide [CLS]/[SEP] (renormalised)",
            key="explore_hide",
            help="Drops the special tokens' rows and columns; each remaining row is rescaled to sum to 1.",
        )
    return view or "head", merge, hide


def render() -> None:
    st.title("Explore: a pretrained BERT's attention")
    try:
        _render()
    except Exception as err:  # the page never shows a traceback; the log keeps it
        LOG.exception("explore page failed")
        st.error(
            f"Something went wrong while drawing this view ({type(err).__name__}). Try another view or text."
        )
    finally:
        _save_widget_state()


def _max_chars(limits: Limits) -> int:
    return min(MAX_TEXT_CHARS, limits.max_text_chars)


def _render() -> None:
    ss = st.session_state
    limits = current_limits()  # read on every run: the setting can change without a restart
    for note in _init_state(limits):
        st.info(note)
    _restore_widget_state()
    # Text boxes hold user input: clean it before the widgets are drawn (see dashboard.state).
    for key, max_chars, what in (
        ("explore_text", _max_chars(limits), "sentence"),
        ("explore_model_custom", MAX_CHOICE_CHARS, "model name"),
    ):
        if note := clean_widget_text(key, max_chars, what):
            st.warning(note)
    if not allowed_engines(limits):
        st.error(
            "No engine can run here: hosted mode offers only engines that run without PyTorch, and "
            "none is installed."
        )
        return
    requested, engine = model_ui(limits)
    if engine == "numpy" and "torch" in allowed_engines(limits):
        reason = numpy_unsupported_reason(requested)
        if reason:  # another architecture: the PyTorch reference computes it instead
            st.info(
                "The NumPy engine runs BERT encoders only, so the PyTorch reference computes this "
                f"model: {md(reason)}"
            )
            engine = "torch"
    loaded = resolve_model(requested, engine, limits)
    text = sentence_ui(limits)
    view_name, merge, hide = options_ui()
    if loaded is None:
        st.info("No model is available; fix the problem above and reload the page.")
        return
    spec, _engine_obj = loaded
    with st.sidebar:
        st.caption(f"Showing **{md(spec.label)}** · engine: {md(ENGINES[engine].label)}")
    if not text.strip():
        st.info("Type a sentence above, or pick an example.")
        _write_url(spec.key)
        return
    try:
        result = _result_for(spec.key, engine, text, limits)
    except TooManyTexts:
        st.warning(
            f"This public demo analyses at most {limits.max_texts_per_minute} new texts a minute for "
            "each visitor, so that everyone gets a turn. Wait a few seconds, then try again."
        )
        return
    except (ModelError, ValueError) as err:  # ValueError: text an engine cannot read (TextError)
        st.error(f"Could not run the model on this text: {md(err)}")
        return
    except Exception as err:
        LOG.exception("computing attention failed")
        st.error(f"Could not run the model on this text ({type(err).__name__}).")
        return
    st.sidebar.caption(f"{result.n_layers} layers × {result.n_heads} heads · {result.n_tokens} tokens")
    with st.sidebar:
        parity_ui(spec.key, engine, text, limits, result)
    if result.truncated:
        total = result.meta.get("n_tokens_input")
        limit = result.meta.get("max_tokens", result.n_tokens)
        reader = "this public demo" if limits.hosted and limit == limits.max_tokens else "the model"
        st.warning(
            f"This text is {total or 'more than ' + str(limit)} tokens long; {reader} reads at most "
            f"{limit} (counting \\[CLS\\] and \\[SEP\\]), "
            f"so only the first {result.n_tokens} tokens are shown."
        )
    for note in _check_link_positions(result):
        st.info(note)
    if result.special_mask.all():
        st.info(
            "The model finds no words in this text: its tokenizer drops control characters and "
            "invisible marks. Type a sentence, or pick an example."
        )
        _write_url(spec.key)
        return
    view = _token_view(result, merge, hide)
    _apply_pending(result, view)
    sig = _signature(spec.key, engine, text, merge, hide)
    focus = ss.get("explore_focus")
    target = ss.get("explore_target")
    pair = (
        view.item_of_token(focus) if focus is not None and focus < result.n_tokens else None,
        view.item_of_token(target) if target is not None and target < result.n_tokens else None,
    )
    if view_name == "head":
        head_view(result, view, pair)
    elif view_name == "lines":
        lines_view(result, view, sig, limits.max_lines)
    elif view_name == "model":
        model_view(result, view, spec.key, engine, text, limits.max_tokens)
    else:
        focus_view(result, view, sig)
    _write_url(spec.key)


__all__ = [
    "ENGINES",
    "EXAMPLES",
    "AttentionEngine",
    "compute_attention",
    "load_engine",
    "render",
]
