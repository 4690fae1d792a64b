"""The model picker of the pages that read a model but are not about choosing one (compare, atlas, cost).

Explore owns the full picker (a typed Hub id or folder, fallbacks that move the picker back). These
pages offer the bundled model, the curated Hub models, and whatever model the explore page shows,
so going from explore to compare or atlas keeps the model. A model that cannot load is said in
the page, and the bundled model is shown instead.

`model_pick_ui` draws the picker and loads the choice in one call; a page that draws some models
itself (the atlas draws the translator's) calls its two halves, `model_choice_ui` and `load_choice`.

URL parameters (through the page's own PageLinks table): `model`, `engine`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import streamlit as st

from core.models.errors import ModelError, ModelInputError
from core.models.registry import (
    BUNDLED_KEY,
    CURATED_HUB_MODELS,
    MAX_CHOICE_CHARS,
    ModelSpec,
    parse_model_choice,
)
from core.models.shipped import SHIPPED_KEY
from core.models.smollm2 import SMOLLM2_KEY
from core.text import clean_input
from core.translate.engine import TRANSLATOR_KEY
from dashboard.content.learn_decoder import BFLOAT16_NOTE
from dashboard.engines import (
    ENGINES,
    allowed_engines,
    allowed_models,
    default_engine,
    load_engine,
    load_with_progress,
    numpy_unsupported_reason,
    offered_models,
    torch_hint,
)
from dashboard.hosted import Limits, room_note
from dashboard.state import Parsed, UrlParam, choice_param
from dashboard.widgets import error_md, md

LOG = logging.getLogger(__name__)


def model_label(key: str) -> str:
    if key == BUNDLED_KEY:
        return "all-MiniLM-L6-v2 · bundled"
    if key == SHIPPED_KEY:
        return "letters GPT-2 · trained here"
    if key == SMOLLM2_KEY:
        return "SmolLM2-135M · small LLM"
    if key == TRANSLATOR_KEY:
        return "EN→FR translator · trained here"
    return f"{key} (Hub)" if key in CURATED_HUB_MODELS else key


def _parse_model(raw: str) -> Parsed:
    return clean_input(raw or BUNDLED_KEY, MAX_CHOICE_CHARS + 1)[0].strip() or BUNDLED_KEY, None


def model_url_params(page: str, limits: Limits) -> tuple[UrlParam, ...]:
    """`model` and `engine` for a page's PageLinks table (session keys `{page}_model`, `{page}_engine`)."""
    engines = allowed_engines(limits)
    return (
        UrlParam("model", f"{page}_model", BUNDLED_KEY, _parse_model),
        choice_param("engine", f"{page}_engine", default_engine(engines), engines),
    )


def _options(page: str, limits: Limits) -> list[str]:
    """The bundled and curated models, plus the model asked for or shown on explore when it is
    another one this server may load."""
    options = offered_models(limits)
    ss = st.session_state
    for extra in (ss.get(f"{page}_model"), ss.get("explore_model")):
        if extra and extra not in options and extra != TRANSLATOR_KEY and allowed_models(limits) is None:
            options.append(extra)  # the translator is offered only where a page draws it (`own`)
    return options


def _load(
    page: str, model: str, engine: str, limits: Limits, engines: list[str]
) -> tuple[ModelSpec, str] | str:
    """(spec, engine) once loaded, or the reason it could not be (remembered for the session, so a
    failing download is not retried on every rerun; choosing the model again retries it)."""
    failures: dict[str, str] = st.session_state.setdefault(f"{page}_failures", {})
    memo = f"{engine}:{model}"
    if memo in failures:
        return failures[memo]
    try:
        spec = parse_model_choice(model, allow_local=limits.allow_custom_models)
        allowed = allowed_models(limits)
        if allowed is not None and spec.key not in allowed:
            raise ModelInputError("this public demo loads only the models in its picker")
        if engine == "numpy" and "torch" in engines and numpy_unsupported_reason(spec.key):
            engine = "torch"  # the NumPy engine runs BERT encoders only
        load_with_progress(spec, engine)
        return spec, engine
    except ModelError as err:
        message = str(err)
    except Exception as err:  # never a traceback in the page; the log keeps the details
        LOG.exception("loading model %r failed", model)
        message = f"loading failed unexpectedly ({type(err).__name__})"
    failures[memo] = message
    return message


def _forget_failures(page: str) -> None:
    st.session_state.pop(f"{page}_failures", None)


def showing_ui(label: str, engine_key: str, engine_obj: object) -> None:
    """The sidebar's line naming the model and the engine shown, and on the hosted demo how a
    compact engine (SmolLM2 there) holds its weights and, when the measured classroom did not fit
    the demo, that a whole class is too much for it (hosted.room_note)."""
    st.sidebar.caption(f"Showing **{md(label)}** · engine: {md(ENGINES[engine_key].label)}")
    if getattr(engine_obj, "compact", False):  # held compact on the hosted demo only
        st.sidebar.caption(BFLOAT16_NOTE)
        if note := room_note():
            st.sidebar.caption(note)


def _engines(limits: Limits, engines: list[str] | None) -> list[str]:
    """The engines this server offers, narrowed to `engines` where the page names some."""
    return [e for e in allowed_engines(limits) if engines is None or e in engines]


def model_choice_ui(
    page: str, limits: Limits, engines: list[str] | None = None, own: Sequence[str] = ()
) -> str:
    """The sidebar's model picker, and the engine switch where there are several engines (`engines`
    narrows the allowed ones: the cost page needs the NumPy engine). `own` are models the page draws
    itself (the atlas's translator): listed in the same picker, with no engine switch while one is
    chosen (they run on the NumPy engine only). Returns the chosen model's key; load_choice loads it."""
    ss = st.session_state
    model_key, engine_key = f"{page}_model", f"{page}_engine"
    if not ss.get(f"{page}_model_seeded"):  # once per session: a link's model, else explore's
        ss[f"{page}_model_seeded"] = True
        if "model" not in st.query_params and ss.get("explore_model"):
            ss[model_key] = ss["explore_model"]
    ss[model_key] = ss.get(model_key) or BUNDLED_KEY
    options = list(dict.fromkeys([*_options(page, limits), *own]))
    if ss[model_key] not in options:
        ss[model_key] = BUNDLED_KEY
    engines = _engines(limits, engines)
    if engines and ss.get(engine_key) not in engines:
        ss[engine_key] = default_engine(engines)
    with st.sidebar:
        st.subheader("Model")
        model = st.selectbox(
            "Model",
            options,
            format_func=model_label,
            key=model_key,
            on_change=_forget_failures,
            args=(page,),
            label_visibility="collapsed",
        )
        if model not in own:
            if len(engines) > 1:
                st.radio("Engine", engines, format_func=lambda e: ENGINES[e].label, key=engine_key)
            if hint := torch_hint(limits):
                st.caption(hint)
    return model


def load_choice(
    page: str, model: str, limits: Limits, engines: list[str] | None = None
) -> tuple[ModelSpec, str] | None:
    """The model model_choice_ui returned, loaded with progress on the engine chosen beside it; one
    that cannot load is said in the page and the bundled model shown instead. Returns (spec, engine
    name), or None after saying why in the page."""
    engines = _engines(limits, engines)
    if not engines:
        st.error("No engine can run here: hosted mode offers only engines that run without PyTorch.")
        return None
    engine = st.session_state[f"{page}_engine"]
    loaded = _load(page, model, engine, limits, engines)
    if isinstance(loaded, tuple):
        showing_ui(loaded[0].label, loaded[1], load_engine(loaded[0].key, loaded[1]))
        return loaded
    st.error(f"Could not use the model “{md(model_label(model))}”: {error_md(loaded.rstrip('.'))}.")
    if model == BUNDLED_KEY:
        return None
    fallback = _load(page, BUNDLED_KEY, engine, limits, engines)
    if isinstance(fallback, str):
        return None
    st.info(f"Showing {md(fallback[0].label)} instead.")
    return fallback


def model_pick_ui(
    page: str, limits: Limits, engines: list[str] | None = None
) -> tuple[ModelSpec, str] | None:
    """The sidebar's model picker (model_choice_ui) and the choice loaded (load_choice): (spec, engine
    name), or None after saying why in the page."""
    return load_choice(page, model_choice_ui(page, limits, engines), limits, engines)
