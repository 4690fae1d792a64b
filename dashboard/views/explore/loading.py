"""Which model and engine the explore page shows: the sidebar's model picker and engine switch, loading
with a fallback to the last model that worked, and the parity badge between the two engines.

Model problems show as st.error; the last model that loaded stays in use, and the picker moves back
to it, so it never names a model the page does not show. A failure is remembered for the session
(not cached: st.cache_resource keeps no exceptions) until the user asks again.

Error messages are our own text with `code` spans (a command, a Hub id); they may embed user text
(a path): `error_md` keeps the code spans and escapes everything else.
"""

from __future__ import annotations

import logging

import streamlit as st

from core.models.errors import ModelError, ModelInputError
from core.models.registry import BUNDLED_KEY, CURATED_HUB_MODELS, ModelSpec, parse_model_choice
from core.models.result import AttentionResult, compare_results
from dashboard.content.explore import MODEL_HELP, OTHER_MODEL_HINT, PARITY_CAPTION, PARITY_HELP
from dashboard.engines import (
    DEFAULT_ENGINE,
    ENGINES,
    AttentionEngine,
    allowed_engines,
    allowed_models,
    compute_attention,
    default_engine,
    explore_models,
    is_loaded,
    load_with_progress,
    mark_loaded,
    numpy_unsupported_reason,
    torch_hint,
)
from dashboard.hosted import Limits
from dashboard.model_pick import model_label as shared_model_label
from dashboard.trained_models import is_trained_folder
from dashboard.views.explore.links import OTHER_MODEL
from dashboard.widgets import error_md, md

LOG = logging.getLogger(__name__)


def model_label(key: str) -> str:
    return "Other: a Hub id or a local folder…" if key == OTHER_MODEL else shared_model_label(key)


def _forget_failure(model: str) -> None:
    """A deliberate choice retries a model that failed before (the network may be back)."""
    ss = st.session_state
    ss["explore_failures"].pop(f"{ss.get('explore_engine', DEFAULT_ENGINE)}:{model}", None)


def _on_model_choice() -> None:
    _forget_failure(st.session_state.get("explore_model_choice"))


def _other_model_ui() -> str:
    """The free-text model box and its Load button; returns the model to load."""
    ss = st.session_state
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
            _forget_failure(typed)
    requested = ss.get("explore_model_submitted", "")
    if not requested:
        st.caption(OTHER_MODEL_HINT)
        requested = ss.get("explore_last_good", BUNDLED_KEY)
    return requested


def model_ui(limits: Limits) -> tuple[str, str]:
    """Sidebar: the model picker (and the engine switch when there are several). Returns what the
    user asks for: (model text as typed or chosen, engine name). In hosted mode the picker has no
    free-text entry and the engine switch only engines that run without PyTorch; where PyTorch is
    not installed, one line says how to add it."""
    ss = st.session_state
    with st.sidebar:
        st.subheader("Model")
        options = explore_models(limits)
        if limits.allow_custom_models or is_trained_folder(ss.get("explore_model_submitted")):
            options.append(OTHER_MODEL)  # hosted: only for a model the train page saved
        if (shown := ss.pop("explore_model_choice_next", None)) in options:
            ss["explore_model_choice"] = shown  # the model asked for failed: name the one shown
        if ss.get("explore_model_choice") not in options:
            ss["explore_model_choice"] = BUNDLED_KEY
        choice = st.selectbox(
            "Model",
            options,
            format_func=model_label,
            key="explore_model_choice",
            on_change=_on_model_choice,
            label_visibility="collapsed",
            help=MODEL_HELP,
        )
        if choice in CURATED_HUB_MODELS:
            info = CURATED_HUB_MODELS[choice]
            st.caption(f"{info.summary}; {info.download} to download the first time.")
        requested = _other_model_ui() if choice == OTHER_MODEL else choice
        engines = allowed_engines(limits)
        if ss.get("explore_engine") not in engines:
            ss["explore_engine"] = default_engine(engines)
        engine = ss["explore_engine"]
        if len(engines) > 1:
            engine = st.radio("Engine", engines, format_func=lambda e: ENGINES[e].label, key="explore_engine")
        if hint := torch_hint(limits):
            st.caption(hint)
    return requested, engine


def engine_for(requested: str, engine: str, limits: Limits) -> str:
    """The engine that can compute `requested`: the NumPy engine runs BERT encoders only, so the
    PyTorch reference computes other architectures, with a note, where it is offered."""
    if engine == "numpy" and "torch" in allowed_engines(limits):
        reason = numpy_unsupported_reason(requested)
        if reason:
            st.info(
                "The NumPy engine runs BERT encoders, GPT-2 and Llama decoders only, so the PyTorch "
                f"reference computes this model: {md(reason)}"
            )
            return "torch"
    return engine


def try_load(requested: str, engine: str, limits: Limits) -> tuple[ModelSpec, AttentionEngine] | str:
    """The engine for `requested`, or the message saying why not (remembered for the session)."""
    failures: dict[str, str] = st.session_state["explore_failures"]
    memo = f"{engine}:{requested}"
    if memo in failures:
        return failures[memo]
    try:
        trained = is_trained_folder(requested)  # a model the train page saved: loads even when hosted
        spec = parse_model_choice(requested, allow_local=limits.allow_custom_models or trained)
        allowed = allowed_models(limits)
        if allowed is not None and spec.key not in allowed and not trained:
            raise ModelInputError("this public demo loads only the models in its picker")
        return spec, load_with_progress(spec, engine)
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
    if notice := ss.pop("explore_model_notice", None):  # said before the picker moved back
        st.error(notice)
    loaded = try_load(requested, engine, limits)
    if isinstance(loaded, tuple):
        ss["explore_last_good"] = loaded[0].key
        return loaded
    last_good = ss.get("explore_last_good", BUNDLED_KEY)
    fallback = try_load(last_good, engine, limits) if last_good != requested else loaded
    asked, reason = md(model_label(requested)), error_md(loaded.rstrip("."))
    if isinstance(fallback, tuple):
        _fell_back(
            requested,
            f"Could not use the model “{asked}”: {reason}. Still showing {md(fallback[0].label)}.",
            fallback[0],
        )
        return fallback
    if last_good != BUNDLED_KEY and requested != BUNDLED_KEY:
        bundled = try_load(BUNDLED_KEY, engine, limits)
        if isinstance(bundled, tuple):
            ss["explore_last_good"] = BUNDLED_KEY
            _fell_back(requested, f"Could not use the model “{asked}”: {reason}.", bundled[0])
            return bundled
    st.error(f"Could not use the model “{asked}”: {reason}.")
    return None


def _fell_back(requested: str, message: str, shown: ModelSpec) -> None:
    """Say why the model asked for is not shown. When the picker named it, move the picker back to
    the model shown (a widget's value can only change before it is drawn: run again)."""
    ss = st.session_state
    if ss.get("explore_model_choice") == requested and requested != shown.key:
        ss["explore_model_choice_next"] = shown.key
        ss["explore_model_notice"] = message
        st.rerun()
    st.error(message)


def parity_ui(model_key: str, engine: str, text: str, limits: Limits, result: AttentionResult) -> None:
    """The parity badge: the largest difference between the two engines' attention weights on this
    sentence. Shown once the other engine is loaded; a toggle loads it (PyTorch costs seconds and
    memory, so the page does not load it unasked)."""
    other = "torch" if engine == "numpy" else "numpy"
    if other not in allowed_engines(limits) or (other == "numpy" and numpy_unsupported_reason(model_key)):
        return
    if not is_loaded(model_key, other) and not st.toggle(
        f"Check against {'PyTorch' if other == 'torch' else 'NumPy'}", key="explore_parity", help=PARITY_HELP
    ):
        return
    try:
        reference = compute_attention(model_key, other, text, limits.max_tokens)
    except Exception as err:  # the badge is extra: never let it break the page
        LOG.exception("parity check failed")
        st.caption(f"Parity check unavailable ({type(err).__name__}).")
        return
    mark_loaded(model_key, other)
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
    st.caption(PARITY_CAPTION.format(layers=result.n_layers, heads=result.n_heads))
