"""The atlas page's numbers: the corpus atlas (memory, then the disk cache, then computed with a
progress bar) and the atlas of the user's sentence.

Memory: one store per server process (st.cache_resource), shared by every session, holding the
last few atlases; a lock per key so two sessions opening the same model compute it once (the second
waits, then opens it from memory). Disk: core.measures.atlas.load_or_compute.

The key is (model key, fingerprint of the model's files, corpus hash); the engine is not in it (both
engines agree within 1e-5: the atlas is the model's, and the page says which engine computed it).
The fingerprint is taken once per loaded engine object, so it names the files the engine read: a
folder retrained while its engine stays loaded keeps the atlas of the weights the pages show, and
gets a new atlas when the engine is loaded again.

A computation interrupted by a rerun (any click while the bar runs: Streamlit raises its rerun
exception at the next bar update) leaves its partial sums in the store; the next run resumes there.

A decoder's atlas also holds each head's induction score (core.measures.atlas.measure_induction).
That test feeds token ids, not text, so it runs on the NumPy engine (loaded beside the torch one when
the torch engine is chosen; the two agree within 1e-5); its result is kept on disk beside the atlas,
for the atlas of a user's sentence.

`python -m core prepare` (core/prepare.py) writes the same files ahead of time. For a view that asks
before long work: atlas_ready says whether corpus_atlas would return without computing.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import streamlit as st

from core.measures.atlas import (
    AtlasAccumulator,
    HeadAtlas,
    Progress,
    cache_path,
    compute_atlas,
    corpus_hash,
    load_or_compute,
    measure_induction,
    measure_sentences,
)
from core.measures.induction import Induction
from core.models.architectures import is_decoder
from core.models.errors import ModelError
from core.models.result import AttentionResult
from dashboard.content import atlas as content
from dashboard.engines import compute_attention, engine_fingerprint, files_fingerprint, load_engine
from dashboard.hosted import count_new_text

MEMORY_ENTRIES = 4  # atlases (and partial sums) kept in memory (each is a few kB: 9 arrays of L x H)
PROGRESS_EVERY = 5  # sentences between progress-bar updates


class NoWords(ValueError):
    """The tokenizer kept no token of the text: only [CLS] and [SEP] would be measured."""


class TooShort(ValueError):
    """A decoder's sentence of one token: its only row sees only itself, so nothing is measured."""


def _bounded_put(entries: OrderedDict, key: tuple, value: object) -> None:
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > MEMORY_ENTRIES:
        entries.popitem(last=False)


@dataclass
class Store:
    atlases: OrderedDict = field(default_factory=OrderedDict)  # key -> HeadAtlas
    partials: OrderedDict = field(default_factory=OrderedDict)  # key -> AtlasAccumulator, unfinished
    locks: dict = field(default_factory=dict)  # key -> threading.RLock, held while computing
    guard: threading.Lock = field(default_factory=threading.Lock)

    def lock_for(self, key: tuple) -> threading.RLock:
        with self.guard:
            return self.locks.setdefault(key, threading.RLock())

    def get(self, key: tuple) -> HeadAtlas | None:
        with self.guard:
            if key in self.atlases:
                self.atlases.move_to_end(key)
            return self.atlases.get(key)

    def put(self, key: tuple, atlas: HeadAtlas) -> None:
        with self.guard:
            _bounded_put(self.atlases, key, atlas)
            self.partials.pop(key, None)

    def partial(self, key: tuple, decoder: bool) -> AtlasAccumulator:
        """The unfinished sums of `key` (new and empty the first time). Only the holder of
        lock_for(key) adds to them."""
        with self.guard:
            acc = self.partials.get(key) or AtlasAccumulator(decoder=decoder)
            _bounded_put(self.partials, key, acc)
            return acc


@st.cache_resource(show_spinner=False)
def memory_store() -> Store:
    return Store()


@dataclass(frozen=True)
class Measured:
    atlas: HeadAtlas
    source: str  # "memory", "disk", "computed", "computed, not saved" (content.atlas.CORPUS_SOURCE)
    seconds: float  # time to get it, this run
    resumed_at: int = 0  # sentences a previous, interrupted run had already measured


def atlas_ready(model_key: str, engine: str = "numpy", sentences: tuple[str, ...] | None = None) -> bool:
    """Whether corpus_atlas(model_key, engine) has nothing to compute: the atlas is in this process's
    memory or its file is on disk. Loads no model and reads no file (it asks whether it exists),
    keyed by the fingerprint of the model's files now. Either engine finds the same atlas (the key
    has no engine). False for a model whose files cannot be found."""
    sentences = content.corpus() if sentences is None else sentences
    try:
        fingerprint = files_fingerprint(model_key)
    except (ModelError, OSError):
        return False
    digest = corpus_hash(sentences)
    in_memory = memory_store().get((model_key, fingerprint, digest)) is not None
    return in_memory or cache_path(model_key, digest, fingerprint=fingerprint).is_file()


def computing(model_key: str, engine: str, sentences: tuple[str, ...] | None = None) -> threading.RLock:
    """The lock corpus_atlas holds while it computes (re-entrant: a caller may take it first)."""
    sentences = content.corpus() if sentences is None else sentences
    fingerprint = engine_fingerprint(model_key, load_engine(model_key, engine))
    return memory_store().lock_for((model_key, fingerprint, corpus_hash(sentences)))


def corpus_atlas(
    model_key: str, engine: str, sentences: tuple[str, ...] | None = None, progress: Progress | None = None
) -> Measured:
    """The atlas of `model_key` on the built-in corpus (or `sentences`), from memory, the disk cache,
    or computed now (resuming an interrupted computation), calling progress(done, total) with the
    sentences done (where it starts first, then after each), or with a progress bar in the page
    when no `progress` is given."""
    sentences = content.corpus() if sentences is None else sentences  # looked up here: tests swap it
    start = time.perf_counter()
    store = memory_store()
    engine_obj = load_engine(model_key, engine)
    fingerprint = engine_fingerprint(model_key, engine_obj)
    key = (model_key, fingerprint, corpus_hash(sentences))
    with store.lock_for(key):
        atlas = store.get(key)
        if atlas is not None:
            return Measured(atlas, "memory", time.perf_counter() - start)
        decoder = is_decoder(engine_obj)
        acc = store.partial(key, decoder)
        resumed_at = acc.seen

        def compute() -> HeadAtlas:
            if progress is not None:  # the work begins (a decoder's induction test first)
                progress(acc.seen, len(sentences))
            test = induction_test(model_key, engine) if decoder else None
            return _compute(engine_obj.run, model_key, engine, sentences, acc, test, progress)

        atlas, source = load_or_compute(
            model_key, sentences, compute, fingerprint=fingerprint, decoder=decoder
        )
        store.put(key, atlas)
    return Measured(atlas, source, time.perf_counter() - start, resumed_at if source != "disk" else 0)


def _compute(
    run,
    model_key: str,
    engine: str,
    sentences: tuple[str, ...],
    acc: AtlasAccumulator,
    induction: Induction | None,
    progress: Progress | None,
) -> HeadAtlas:
    n = len(sentences)
    bar = None
    if progress is None:  # the page's own bar
        first = f"Measuring every head on {n} sentences (once per model)…"
        if acc.seen:
            first = f"Measuring every head: resuming at sentence {acc.seen + 1} of {n}…"
        bar = st.progress(acc.seen / n, text=first)

        def progress(done: int, total: int) -> None:
            if done == total or done % PROGRESS_EVERY == 0:
                bar.progress(done / total, text=f"Measuring every head: sentence {done} of {total}…")

    atlas = measure_sentences(
        run, sentences, model=model_key, engine=engine, progress=progress, partial=acc, induction=induction
    )
    if bar is not None:
        bar.empty()
    return atlas


def induction_test(model_key: str, engine: str) -> Induction:
    """The decoder's induction test, on its NumPy engine (the test feeds token ids: see above)."""
    engine_obj = load_engine(model_key, engine)
    if not hasattr(engine_obj, "forward"):  # the torch reference runs text only
        engine_obj = load_engine(model_key, "numpy")
    return _induction(model_key, engine_fingerprint(model_key, engine_obj), engine_obj)


@st.cache_resource(max_entries=4, show_spinner=False)
def _induction(model_key: str, fingerprint: str, _engine_obj) -> Induction:
    """Kept per model files (the fingerprint), so a folder retrained in place is measured again; on
    disk too (core.measures.induction.load_or_measure), so a new server process reads it."""
    return measure_induction(_engine_obj, model=model_key, fingerprint=fingerprint)


@st.cache_resource(max_entries=8, show_spinner=False)
def _sentence_atlas(model_key: str, engine: str, text: str, max_tokens: int) -> HeadAtlas:
    result = compute_attention(model_key, engine, text, max_tokens)
    decoder = is_decoder(load_engine(model_key, engine))
    test = induction_test(model_key, engine) if decoder else None
    hashed = corpus_hash([text])
    return compute_atlas([result], model=model_key, corpus_hash=hashed, engine=engine, induction=test)


def sentence_atlas(
    model_key: str, engine: str, text: str, max_tokens: int, per_minute: int | None = None
) -> tuple[HeadAtlas, AttentionResult]:
    """The atlas of one sentence, and the result it was measured on. Raises TooManyTexts past
    `per_minute` new sentences, NoWords when the tokenizer keeps no token of it (the torch engine
    returns [CLS] [SEP] alone where the NumPy one raises), TooShort for a decoder's single token, and
    what the engine raises (ModelError, TextError)."""
    count_new_text("atlas", (model_key, engine, text, max_tokens), per_minute)
    result = compute_attention(model_key, engine, text, max_tokens)
    if result.special_mask.all():
        raise NoWords("no words")
    if result.n_tokens < 2:
        raise TooShort("one token")
    return _sentence_atlas(model_key, engine, text, max_tokens), result
