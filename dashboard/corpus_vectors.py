"""The built-in corpus's token vectors for a model (core/measures/neighbours.py), shared by explore's
neighbour search and its query/key space.

Memory first (st.cache_resource: one copy per server process, shared by every session, the last two
models), then the disk cache beside the head atlas's, keyed as the atlas is (model key, fingerprint
of the model's files, corpus hash); else computed once, under a spinner. Always with the NumPy
engine: the query/key space needs the model's W^Q and W^K, and the two engines agree within 1e-5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.measures.atlas import corpus_hash
from core.measures.neighbours import CorpusVectors, load_or_compute_vectors
from core.measures.qk_space import QKSpace, head_queries_keys, qk_space
from dashboard.content.atlas import corpus
from dashboard.engines import engine_fingerprint, load_engine

ENGINE = "numpy"
SPINNER = "Reading the {n} corpus sentences with this model (once per model)…"


@st.cache_resource(max_entries=2, show_spinner=False)
def _vectors(model_key: str, fingerprint: str, digest: str) -> CorpusVectors:
    # digest is the corpus's hash: the key changes when the corpus file does
    engine = load_engine(model_key, ENGINE)
    return load_or_compute_vectors(model_key, corpus(), engine.run, fingerprint=fingerprint)[0]


def _key(model_key: str) -> tuple[str, str, str]:
    engine = load_engine(model_key, ENGINE)
    return model_key, engine_fingerprint(model_key, engine), corpus_hash(corpus())


def corpus_vectors(model_key: str) -> CorpusVectors:
    """The corpus vectors of `model_key`; the first time for a model, computed under a spinner.
    Raises what loading the NumPy engine raises (ModelError) for a model it cannot read."""
    with st.spinner(SPINNER.format(n=len(corpus()))):
        return _vectors(*_key(model_key))


@dataclass(frozen=True)
class CorpusQK:
    """One head's plane fitted on the corpus, and the corpus's points in it."""

    space: QKSpace
    queries: np.ndarray  # (N, 2)
    keys: np.ndarray  # (N, 2)


@st.cache_resource(max_entries=16, show_spinner=False)
def _corpus_qk(model_key: str, fingerprint: str, digest: str, layer: int, head: int) -> CorpusQK:
    found = _vectors(model_key, fingerprint, digest)
    weights = load_engine(model_key, ENGINE).layer_weights(layer)
    query, key = head_queries_keys(found.hidden[layer], weights, head)  # the state entering the layer
    space = qk_space(query, key)
    return CorpusQK(space, *space.place(query, key))


def corpus_qk(model_key: str, layer: int, head: int) -> CorpusQK:
    """Head `head` of layer `layer` (0-indexed): the plane of its corpus queries and keys."""
    with st.spinner(SPINNER.format(n=len(corpus()))):  # the vectors, the first time
        return _corpus_qk(*_key(model_key), layer, head)


def head_weights(model_key: str, layer: int):
    """Layer `layer`'s W^Q, W^K (and the rest) of the NumPy engine, as core.measures.qk_space needs them."""
    return load_engine(model_key, ENGINE).layer_weights(layer)
