"""The built-in corpus's token vectors for a model (core/measures/neighbours.py), shared by explore's
neighbour search and its query/key space.

Memory first (one store per server process, shared by every session, the last two models; a lock
per key, so two sessions opening the same model compute it once), then the disk cache beside the
head atlas's, keyed as the atlas is (model key, fingerprint of the model's files, corpus hash), which
`python -m core prepare` fills ahead of time (core/prepare.py); else computed once, with a progress
callback or under a spinner. The vectors read from disk are a memory map: a process holds only the
layers it reads (SmolLM2's 31 layers are 137 MB on disk). Always with the NumPy engine: the
query/key space needs the model's W^Q and W^K, and the two engines agree within 1e-5.

For a view that asks before long work: vectors_ready(model_key) says whether corpus_vectors would
return without computing, loading no model and reading no file.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from core.measures.atlas import corpus_hash
from core.measures.neighbours import CorpusVectors, hidden_path, load_or_compute_vectors, vectors_path
from core.measures.qk_space import QKSpace, head_queries_keys, qk_space
from core.models.errors import ModelError
from dashboard.content.atlas import corpus
from dashboard.engines import engine_fingerprint, files_fingerprint, load_engine

ENGINE = "numpy"
SPINNER = "Reading the {n} corpus sentences with this model (once per model)…"
MEMORY_ENTRIES = 2  # models whose vectors stay open (mapped from disk: a few MB each once read)
Progress = Callable[[int, int], None]  # (sentences done, sentences in all): 0 first, then each sentence


@dataclass
class Store:
    vectors: OrderedDict = field(default_factory=OrderedDict)  # key -> CorpusVectors
    locks: dict = field(default_factory=dict)  # key -> threading.RLock, held while reading or computing
    guard: threading.Lock = field(default_factory=threading.Lock)

    def lock_for(self, key: tuple) -> threading.RLock:
        with self.guard:
            return self.locks.setdefault(key, threading.RLock())

    def get(self, key: tuple) -> CorpusVectors | None:
        with self.guard:
            return self.vectors.get(key)

    def put(self, key: tuple, found: CorpusVectors) -> None:
        with self.guard:
            self.vectors[key] = found
            self.vectors.move_to_end(key)
            while len(self.vectors) > MEMORY_ENTRIES:
                self.vectors.popitem(last=False)


@st.cache_resource(show_spinner=False)
def memory_store() -> Store:
    return Store()


def _key(model_key: str) -> tuple[str, str, str]:
    engine = load_engine(model_key, ENGINE)
    return model_key, engine_fingerprint(model_key, engine), corpus_hash(corpus())


def vectors_ready(model_key: str) -> bool:
    """Whether corpus_vectors(model_key) has nothing to compute: the vectors are open in this process
    or their files are on disk. Loads no model and reads no file (it asks whether they exist), keyed
    by the fingerprint of the model's files now. False for a model whose files cannot be found."""
    try:
        key = (model_key, files_fingerprint(model_key), corpus_hash(corpus()))
    except (ModelError, OSError):
        return False
    if memory_store().get(key) is not None:
        return True
    path = vectors_path(key[0], key[2], fingerprint=key[1])
    return path.is_file() and hidden_path(path).is_file()


def computing(model_key: str) -> threading.RLock:
    """The lock corpus_vectors(model_key) holds while it reads or computes (re-entrant: a caller may
    take it first, to wait for another session's computation before anything else)."""
    return memory_store().lock_for(_key(model_key))


def corpus_vectors(model_key: str, progress: Progress | None = None) -> CorpusVectors:
    """The corpus vectors of `model_key`: from memory, from disk, or (the first time on this machine)
    computed, calling progress(done, total) with the sentences done (0 first, then after each), or
    under a spinner when no `progress` is given. Raises what loading the NumPy engine raises
    (ModelError) for a model it cannot read."""
    key = _key(model_key)
    store = memory_store()
    with store.lock_for(key):  # a second session waits here, then finds them in memory
        found = store.get(key)
        if found is None:
            found = _read_or_compute(key, progress)
            store.put(key, found)
    return found


def _read_or_compute(key: tuple[str, str, str], progress: Progress | None) -> CorpusVectors:
    model_key, fingerprint, _ = key
    run = load_engine(model_key, ENGINE).run
    if progress is not None:
        return load_or_compute_vectors(model_key, corpus(), run, fingerprint=fingerprint, progress=progress)[
            0
        ]
    with st.spinner(SPINNER.format(n=len(corpus()))):
        return load_or_compute_vectors(model_key, corpus(), run, fingerprint=fingerprint)[0]


@dataclass(frozen=True)
class CorpusQK:
    """One head's plane fitted on the corpus, and the corpus's points in it."""

    space: QKSpace
    queries: np.ndarray  # (N, 2)
    keys: np.ndarray  # (N, 2)


@st.cache_resource(max_entries=16, show_spinner=False)
def _corpus_qk(
    model_key: str, fingerprint: str, digest: str, layer: int, head: int, _found: CorpusVectors
) -> CorpusQK:
    weights = load_engine(model_key, ENGINE).layer_weights(layer)
    query, key = head_queries_keys(_found.hidden[layer], weights, head)  # the state entering the layer
    space = qk_space(query, key)
    return CorpusQK(space, *space.place(query, key))


def corpus_qk(model_key: str, layer: int, head: int, progress: Progress | None = None) -> CorpusQK:
    """Head `head` of layer `layer` (0-indexed): the plane of its corpus queries and keys (the
    vectors computed first when they are not ready: corpus_vectors, with `progress`)."""
    found = corpus_vectors(model_key, progress)
    return _corpus_qk(*_key(model_key), layer, head, found)


def head_weights(model_key: str, layer: int):
    """Layer `layer`'s W^Q, W^K (and the rest) of the NumPy engine, as core.measures.qk_space needs them."""
    return load_engine(model_key, ENGINE).layer_weights(layer)
