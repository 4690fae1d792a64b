"""The learn page's decoder mode: one block of a decoder on the user's sentence, drawn by the same
renderer as a BERT layer (steps.py), with the decoder's differences where they happen. A GPT-2 adds
learned positions in step 1 and stops of its own (decoder_views.py): LayerNorm first (pre-LN), the
causal mask (the scores, the upper triangle set to −∞, the softmax's exact zeros) and the MLP with
GELU's tanh form. A Llama (SmolLM2) adds RMSNorm, RoPE, grouped-query attention, the causal mask and
the SwiGLU MLP (llama_views.py).

The page opens on SmolLM2, which reads English, where this copy holds it; else on the letter GPT-2
shipped with the product. The picker offers the curated Hub GPT-2s too, and where custom models are
allowed any Hub id or local folder, loaded by dashboard.engines on the NumPy engine like every model.
When one cannot be loaded (offline), one line says what to load when the network is there. The
model's name and its errors reach the page escaped (md, error_md), never as markdown.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import streamlit as st

from core.lesson.trace import LayerTrace
from core.models.errors import ModelError, ModelInputError
from core.models.gpt2 import GPT2Numpy
from core.models.llama import LlamaNumpy
from core.models.registry import CURATED_HUB_MODELS, MAX_CHOICE_CHARS, ModelSpec, parse_model_choice
from core.models.shipped import SHIPPED_KEY
from core.models.smollm2 import SMOLLM2_KEY
from dashboard.content import learn_llama
from dashboard.content.learn import BERT_LAYER_INPUT_FORMULA, BERT_NOTES, LETTER_SENTENCES, SENTENCES
from dashboard.content.learn_decoder import (
    BFLOAT16_NOTE,
    DECODER_ABOUT,
    DECODER_EMPTY,
    DECODER_PICKER,
    DECODER_TRUNCATED,
    DECODER_TYPED,
    DECODER_TYPED_HINT,
    DECODER_VIEWS,
    DECODERS,
    DEFAULT_DECODER,
    EMBEDDINGS_FORMULA,
    EMBEDDINGS_TEXT,
    FALLBACK_DECODER,
    HOSTED_NONE,
    HOSTED_ONLY,
    HUB_DECODER,
    LAYER_INPUT_TEXT,
    NOT_A_DECODER,
    OFFLINE,
    OTHER_DECODER,
    OTHER_LABEL,
    OUTPUT_FORMULA,
    OUTPUT_TEXT,
    OUTPUT_TITLE,
    PROJECTIONS_FORMULA,
    PROJECTIONS_TEXT,
    SCALED_NOTE,
    SHIPPED_ABOUT,
    SMOLLM2_ABOUT,
    SOFTMAX_NOTE,
    TOKENS_CAPTION,
)
from dashboard.content.learn_llama import LLAMA_ABOUT, LLAMA_VIEWS
from dashboard.engines import allowed_models, load_with_progress, offline_models
from dashboard.hosted import Limits, current_limits
from dashboard.model_pick import model_label
from dashboard.state import clean_widget_text
from dashboard.trained_models import letters_became, reads_letters
from dashboard.views.learn import compute
from dashboard.views.learn.decoder_views import ln_view, mask_view, mlp_view
from dashboard.views.learn.llama_views import gqa_view, rmsnorm_view, rope_view, swiglu_view
from dashboard.views.learn.sources import SHOWN_DIMS
from dashboard.views.learn.steps import StepSource, draw_steps
from dashboard.views.learn.widgets import (
    head_shown,
    head_ui,
    layer_ui,
    past_the_end,
    step_pager_ui,
    step_picker_ui,
)
from dashboard.widgets import error_md, md

LOG = logging.getLogger(__name__)


def decoder_mode(text: str, controls) -> None:
    """The decoder's controls (in `controls`), then its steps, or one line saying why there are none."""
    with controls:
        found = _controls(text)
    if found is None:
        return
    trace, layer, engine, head = found
    if isinstance(engine, LlamaNumpy):
        source = llama_source(trace, layer, engine, head)
    else:
        source = decoder_source(trace, layer, engine.n_layers, head, engine.max_tokens)
    # step 4 shows the scores as the model scaled them, every one; the mask stop hides the upper triangle
    draw_steps(replace(trace, mask=None), source, head)
    step_pager_ui(source.views)


def _controls(text: str):
    """The decoder picker, layer and head: (trace, layer, the engine, head), or None (said on the
    page)."""
    model = decoder_ui(current_limits())
    if model is None:
        return None
    loaded = load_decoder(model, current_limits())
    if loaded is None:
        return None
    spec, engine = loaded
    if not text.strip():
        st.info(DECODER_EMPTY, icon=":material/edit_note:")
        return None
    llama = isinstance(engine, LlamaNumpy)
    past_the_end("learn_layer", engine.n_layers, "layer", "layers")
    layer = layer_ui(engine.n_layers)
    try:
        trace, total = (compute.llama_trace if llama else compute.decoder_trace)(spec.key, text, layer)
    except Exception as err:  # a text the tokenizer refuses: say so, keep the page
        LOG.warning("the decoder could not run: %s", err)
        st.error(f"The decoder could not run on this text: {type(err).__name__}: {error_md(str(err)[:300])}")
        return None
    if total > len(trace.key_tokens):
        st.warning(DECODER_TRUNCATED.format(total=total, kept=len(trace.key_tokens)))
    sizes = {
        "d_model": engine.width,
        "n_heads": engine.n_heads,
        "d_k": trace.d_k,
        "kv_heads": engine.kv_heads,
    }
    about = (LLAMA_ABOUT if llama else DECODER_ABOUT).format(
        model=md(spec.label), n_layers=engine.n_layers, layer=layer + 1, dims=SHOWN_DIMS, **sizes
    )
    st.info(about, icon=":material/model_training:")
    if reads_letters(spec.key) and (note := letters_became(engine.tokenizer, text)):
        st.info(note, icon=":material/abc:")
    st.caption(TOKENS_CAPTION.format(t=len(trace.key_tokens)))
    st.text(" · ".join(trace.key_tokens))
    views = LLAMA_VIEWS if llama else DECODER_VIEWS
    step_picker_ui(views)
    past_the_end("learn_bert_head", trace.n_heads, "head", "heads")
    ss = st.session_state
    head = head_ui(trace.n_heads, key="learn_bert_head") if head_shown() else ss["learn_bert_head"]
    return trace, layer, engine, head


# ---- which decoder ---------------------------------------------------------------------------------


def _label(key: str) -> str:
    if key == OTHER_DECODER:
        return OTHER_LABEL
    return model_label(key) if key in (SHIPPED_KEY, SMOLLM2_KEY) else f"{key} (Hub)"


def _chose() -> None:
    """A curated decoder picked: it is the one shown, and a failure of it is tried again."""
    ss = st.session_state
    choice = ss.get("learn_decoder_choice")
    if choice in DECODERS:
        ss["learn_decoder"] = choice
        ss.setdefault("learn_decoder_failures", {}).pop(choice, None)


def decoder_ui(limits: Limits) -> str | None:
    """The decoder picker: the curated GPT-2s, and where custom models are allowed a box for a Hub
    id or a local folder. Returns the model to load (session key `learn_decoder`, the link's `model`),
    or None when this server offers none (said on the page)."""
    ss = st.session_state
    options = _offered(limits)
    if limits.allow_custom_models:
        options.append(OTHER_DECODER)
    if not options:
        st.info(HOSTED_NONE, icon=":material/cloud_off:")
        return None
    current = _current(options)
    if current != (ss.get("learn_decoder") or DEFAULT_DECODER):  # the fallback: the link names it
        ss["learn_decoder"] = current
    if current not in options and not limits.allow_custom_models:
        st.warning(HOSTED_ONLY.format(model=md(options[0])), icon=":material/link:")
        current = ss["learn_decoder"] = options[0]
    if ss.get("learn_decoder_choice") not in options:  # first run, or dropped while another mode showed
        ss["learn_decoder_choice"] = current if current in DECODERS else OTHER_DECODER
    choice = st.selectbox(
        DECODER_PICKER, options, format_func=_label, key="learn_decoder_choice", on_change=_chose, width=420
    )
    if info := CURATED_HUB_MODELS.get(choice):
        st.caption(f"{info.summary}; {info.download} to download the first time.")
    elif choice == SHIPPED_KEY:
        st.caption(SHIPPED_ABOUT)
    elif choice == SMOLLM2_KEY:
        st.caption(f"{SMOLLM2_ABOUT} {BFLOAT16_NOTE}" if limits.hosted else SMOLLM2_ABOUT)
    elif choice == OTHER_DECODER:
        _typed_ui(current)
    return ss.get("learn_decoder", current)


def _current(options: list[str]) -> str:
    """The decoder to show: the one chosen or linked, else SmolLM2, else (not held here) the letter
    model, silently."""
    current = st.session_state.get("learn_decoder") or DEFAULT_DECODER
    if current == DEFAULT_DECODER and current not in options:
        return FALLBACK_DECODER if FALLBACK_DECODER in options else (options or [current])[0]
    return current


def ready_examples() -> dict[str, tuple[str, str]]:
    """The sentence box's ready examples for the decoder about to be shown: runs of letters for one
    that reads letters, English otherwise."""
    return LETTER_SENTENCES if reads_letters(_current(_offered(current_limits()))) else SENTENCES


def _offered(limits: Limits) -> list[str]:
    """The curated decoders this server loads; SmolLM2 only where its file is here or the host has
    added it (hosted, it is fetched at first use)."""
    allowed = allowed_models(limits)
    if allowed is None:
        return [key for key in DECODERS if key != SMOLLM2_KEY or key in offline_models()]
    return [key for key in DECODERS if key in allowed]


def _typed_ui(current: str) -> None:
    """The free-text box and its Load button: a Hub id or a local folder becomes the decoder shown."""
    ss = st.session_state
    if "learn_decoder_typed" not in ss:
        ss["learn_decoder_typed"] = "" if current in DECODERS else current
    if note := clean_widget_text("learn_decoder_typed", MAX_CHOICE_CHARS, "model name"):
        st.warning(note, icon=":material/content_cut:")
    with st.form("learn_decoder_form", border=False):
        st.text_input(
            DECODER_TYPED,
            key="learn_decoder_typed",
            max_chars=MAX_CHOICE_CHARS,
            placeholder="owner/name, or /path/to/folder",
            width=420,
        )
        if st.form_submit_button("Load", key="learn_decoder_load"):
            typed = ss.get("learn_decoder_typed", "").strip()
            if typed:
                ss["learn_decoder"] = typed
                ss.setdefault("learn_decoder_failures", {}).pop(typed, None)
    if current in DECODERS:
        st.caption(DECODER_TYPED_HINT)


def _offline(err: BaseException) -> bool:
    """Whether a Hub model failed because the Hub cannot be reached (and it is not in the cache)."""
    try:
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:  # no huggingface_hub: nothing could have been downloaded
        return False
    return isinstance(err.__cause__, LocalEntryNotFoundError)


def load_decoder(model: str, limits: Limits) -> tuple[ModelSpec, GPT2Numpy | LlamaNumpy] | None:
    """The decoder `model` on the NumPy engine, or None after saying why not in one line. A failure
    is remembered for the session (choosing the model again, or Load, retries it)."""
    failures: dict[str, tuple[str, str]] = st.session_state.setdefault("learn_decoder_failures", {})
    if model not in failures:
        loaded = _try_load(model, limits)
        if isinstance(loaded[0], ModelSpec):
            return loaded
        failures[model] = loaded
    kind, message = failures[model]
    if kind == "offline":
        info = CURATED_HUB_MODELS.get(HUB_DECODER)
        size = info.download if info else "a few hundred MB"
        st.info(OFFLINE.format(model=HUB_DECODER, size=size), icon=":material/cloud_off:")
    else:
        st.error(
            f"Could not load the decoder “{md(model[:MAX_CHOICE_CHARS])}”: {error_md(message.rstrip('.'))}."
        )
    return None


def _try_load(model: str, limits: Limits):
    """(spec, engine), or (kind, message) with kind "offline" or "error"."""
    slot = st.empty()  # the loading stages; on a failure, the page's one line says it instead
    try:
        spec = parse_model_choice(model, allow_local=limits.allow_custom_models)
        if spec.kind == "bundled":
            return "error", NOT_A_DECODER.format(model="the bundled all-MiniLM-L6-v2")
        allowed = allowed_models(limits)
        if allowed is not None and spec.key not in allowed:
            raise ModelInputError("this public demo loads only the models in its picker")
        with slot.container():
            engine = load_with_progress(spec, "numpy")
    except ModelError as err:
        slot.empty()
        return ("offline", str(err)) if _offline(err) else ("error", str(err))
    except Exception as err:  # never a traceback in the page; the log keeps the details
        slot.empty()
        LOG.exception("loading the decoder %r failed", model)
        return "error", f"loading failed unexpectedly ({type(err).__name__})"
    if not isinstance(engine, GPT2Numpy | LlamaNumpy):
        return "error", NOT_A_DECODER.format(model=spec.label)
    return spec, engine


# ---- what the decoder adds to the steps --------------------------------------------------------------


def decoder_source(trace: LayerTrace, layer: int, n_layers: int, head: int, n_positions: int) -> StepSource:
    """One GPT-2 block (0-indexed): BERT's steps with the decoder's texts and formulas, and its own
    stops after step 1 (LayerNorm first), step 4 (the causal mask) and step 7 (the MLP)."""
    sizes = {"n_heads": trace.n_heads, "d_k": trace.d_k, "d_model": trace.d_model}
    if layer == 0:
        formula_1, text_1 = EMBEDDINGS_FORMULA, EMBEDDINGS_TEXT.format(n_positions=n_positions)
    else:
        formula_1 = BERT_LAYER_INPUT_FORMULA.format(previous=layer)
        text_1 = LAYER_INPUT_TEXT.format(layer=layer + 1, previous=layer)
    return StepSource(
        views=DECODER_VIEWS,
        titles={7: OUTPUT_TITLE},
        texts={1: text_1, 2: PROJECTIONS_TEXT.format(**sizes), 7: OUTPUT_TEXT.format(**sizes)},
        formulas={1: formula_1, 2: PROJECTIONS_FORMULA, 7: OUTPUT_FORMULA},
        notes={3: BERT_NOTES[3], 4: SCALED_NOTE, 5: SOFTMAX_NOTE},
        shown_dims=SHOWN_DIMS,
        after={
            1: lambda: ln_view(trace),
            4: lambda: mask_view(trace, head),
            7: lambda: mlp_view(trace, layer, n_layers),
        },
    )


def llama_source(trace: LayerTrace, layer: int, engine: LlamaNumpy, head: int) -> StepSource:
    """One Llama block (0-indexed): the decoder's steps with a Llama's texts and formulas, and its own
    stops: RMSNorm after step 1, RoPE and grouped-query attention after step 2, the causal mask after
    step 4 (GPT-2's) and the SwiGLU MLP after step 7."""
    t = learn_llama
    sizes = {"n_heads": trace.n_heads, "d_k": trace.d_k, "d_model": trace.d_model, "head": head + 1}
    sizes |= {"kv_heads": engine.kv_heads, "kv_width": engine.kv_heads * trace.d_k}
    if layer == 0:
        formula_1, text_1 = t.EMBEDDINGS_FORMULA, t.EMBEDDINGS_TEXT
    else:
        formula_1 = BERT_LAYER_INPUT_FORMULA.format(previous=layer)
        text_1 = LAYER_INPUT_TEXT.format(layer=layer + 1, previous=layer)
    return StepSource(
        views=LLAMA_VIEWS,
        titles={7: t.OUTPUT_TITLE},
        texts={1: text_1, 2: t.PROJECTIONS_TEXT.format(**sizes), 7: t.OUTPUT_TEXT.format(**sizes)},
        formulas={1: formula_1, 2: t.PROJECTIONS_FORMULA, 3: t.SCORES_FORMULA, 7: t.OUTPUT_FORMULA},
        notes={3: t.SCORES_NOTE, 4: SCALED_NOTE, 5: SOFTMAX_NOTE},
        shown_dims=SHOWN_DIMS,
        after={
            1: lambda: rmsnorm_view(trace),
            2: lambda: _rope_and_groups(trace, head, engine),
            4: lambda: mask_view(trace, head),
            7: lambda: swiglu_view(trace, layer, engine.n_layers),
        },
    )


def _rope_and_groups(trace: LayerTrace, head: int, engine: LlamaNumpy) -> None:
    """The two stops between the projections and the scores: RoPE turns Q and K, then the query heads
    meet their group's keys (the cache priced at the model's whole context)."""
    rope_view(trace, head, engine.config.rope_theta)
    gqa_view(trace, head, engine)
