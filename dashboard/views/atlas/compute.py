"""The atlas page's numbers: the corpus atlas (memory, then the disk cache, then computed with a
progress bar) and the atlas of the user's sentence.

Memory: one store per server process (st.cache_resource), shared by every session, holding the
last few atlases; a lock per (model, corpus) so two sessions opening the same model compute it once
(the second waits, then opens it from memory). Disk: core.atlas.load_or_compute.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import streamlit as st

from core.atlas import HeadAtlas, compute_atlas, corpus_hash, load_or_compute, measure_sentences
from core.result import AttentionResult
from dashboard.content import atlas as content
from dashboard.engines import compute_attention, load_engine
from dashboard.hosted import count_new_text

MEMORY_ENTRIES = 4  # atlases kept in memory (each is a few kB: 9 arrays of L x H)
PROGRESS_EVERY = 5  # sentences between progress-bar updates


@dataclass
class Store:
    atlases: OrderedDict = field(default_factory=OrderedDict)  # (model, corpus hash) -> HeadAtlas
    locks: dict = field(default_factory=dict)  # (model, corpus hash) -> threading.Lock
    guard: threading.Lock = field(default_factory=threading.Lock)

    def lock_for(self, key: tuple) -> threading.Lock:
        with self.guard:
            return self.locks.setdefault(key, threading.Lock())

    def get(self, key: tuple) -> HeadAtlas | None:
        with self.guard:
            if key in self.atlases:
                self.atlases.move_to_end(key)
            return self.atlases.get(key)

    def put(self, key: tuple, atlas: HeadAtlas) -> None:
        with self.guard:
            self.atlases[key] = atlas
            while len(self.atlases) > MEMORY_ENTRIES:
                self.atlases.popitem(last=False)


@st.cache_resource(show_spinner=False)
def memory_store() -> Store:
    return Store()


@dataclass(frozen=True)
class Measured:
    atlas: HeadAtlas
    source: str  # "memory", "disk", "computed", "computed, not saved" (content.atlas.CORPUS_SOURCE)
    seconds: float  # time to get it, this run


def corpus_atlas(model_key: str, engine: str, sentences: tuple[str, ...] | None = None) -> Measured:
    """The atlas of `model_key` on the built-in corpus (or `sentences`), from memory, the disk cache,
    or computed now with a progress bar in the page."""
    sentences = content.corpus() if sentences is None else sentences  # looked up here: tests swap it
    start = time.perf_counter()
    store = memory_store()
    key = (model_key, corpus_hash(sentences))
    with store.lock_for(key):
        atlas = store.get(key)
        if atlas is not None:
            return Measured(atlas, "memory", time.perf_counter() - start)
        atlas, source = load_or_compute(model_key, sentences, lambda: _compute(model_key, engine, sentences))
        store.put(key, atlas)
    return Measured(atlas, source, time.perf_counter() - start)


def _compute(model_key: str, engine: str, sentences: tuple[str, ...]) -> HeadAtlas:
    n = len(sentences)
    bar = st.progress(0.0, text=f"Measuring every head on {n} sentences (once per model)…")

    def progress(done: int, total: int) -> None:
        if done == total or done % PROGRESS_EVERY == 0:
            bar.progress(done / total, text=f"Measuring every head: sentence {done} of {total}…")

    engine_obj = load_engine(model_key, engine)
    atlas = measure_sentences(engine_obj.run, sentences, model=model_key, engine=engine, progress=progress)
    bar.empty()
    return atlas


@st.cache_resource(max_entries=8, show_spinner=False)
def _sentence_atlas(model_key: str, engine: str, text: str, max_tokens: int) -> HeadAtlas:
    result = compute_attention(model_key, engine, text, max_tokens)
    return compute_atlas([result], model=model_key, corpus_hash=corpus_hash([text]), engine=engine)


def sentence_atlas(
    model_key: str, engine: str, text: str, max_tokens: int, per_minute: int | None = None
) -> tuple[HeadAtlas, AttentionResult]:
    """The atlas of one sentence, and the result it was measured on. Raises TooManyTexts past
    `per_minute` new sentences, and what the engine raises (ModelError, TextError)."""
    count_new_text("atlas", (model_key, engine, text, max_tokens), per_minute)
    result = compute_attention(model_key, engine, text, max_tokens)
    return _sentence_atlas(model_key, engine, text, max_tokens), result
