"""Nearest neighbours in a corpus: which words of the built-in sentences does the model represent
most like a given word, after a given layer? (exBERT's search, Hoover et al. 2020.)

Every word of every corpus sentence (a word in pieces is the mean of its pieces; [CLS] and [SEP]
left out) keeps its vector after each layer, stored as float16 (half the disk and memory; cosines
move by less than 1e-3). A query is one vector; the answer is the k corpus words with the largest
cosine at that layer. At the embeddings (layer 0) a word is found by its own identity and position;
at the top layers by what context made of it, so "bank" the lender finds other lenders.

The disk cache sits beside the head atlas's (core/atlas.py) and is keyed the same way: model key,
model fingerprint, corpus hash and VECTORS_VERSION. A file that cannot be read is ignored and
recomputed; a folder that cannot be written leaves the vectors in memory only (logged).

Letters: L layers, N corpus words, D hidden size, K neighbours.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.analysis import piece_text, word_spans
from core.atlas import cache_dir, corpus_hash, write_npz_atomically
from core.similarity import item_vectors

LOG = logging.getLogger(__name__)

__all__ = ["VECTORS_VERSION", "CorpusVectors", "collect", "load_or_compute_vectors", "nearest"]

VECTORS_VERSION = 1  # bump when what is stored changes: old files then match no key


@dataclass(frozen=True)
class CorpusVectors:
    """Every corpus word's vector after each layer, and where it came from."""

    vectors: np.ndarray  # (L + 1, N, D) float16
    sentence: np.ndarray  # (N,) int32: the word's sentence, an index into the corpus
    start: np.ndarray  # (N,) int32: its first token in that sentence
    stop: np.ndarray  # (N,) int32: one past its last token
    words: tuple[str, ...]  # (N,) the word as written by the tokenizer (pieces joined)
    model: str
    corpus_hash: str


def collect(results: Iterable, *, model: str, corpus: str) -> CorpusVectors:
    """The words of a corpus's results (one AttentionResult per sentence, in order)."""
    vectors, sentence, start, stop, words = [], [], [], [], []
    for n, result in enumerate(results):
        spans = [s for s in word_spans(result.word_ids, result.special_mask) if not result.special_mask[s[0]]]
        vectors.append(item_vectors(result.hidden_states, spans).astype(np.float16))  # (L + 1, W, D)
        for a, b in spans:
            sentence.append(n)
            start.append(a)
            stop.append(b)
            words.append("".join(piece_text(t) for t in result.tokens[a:b]))
    return CorpusVectors(
        vectors=np.concatenate(vectors, axis=1),
        sentence=np.asarray(sentence, dtype=np.int32),
        start=np.asarray(start, dtype=np.int32),
        stop=np.asarray(stop, dtype=np.int32),
        words=tuple(words),
        model=model,
        corpus_hash=corpus,
    )


def nearest(corpus: CorpusVectors, query: np.ndarray, layer: int, k: int = 10) -> list[tuple[int, float]]:
    """The k corpus words closest to `query` (D,) after `layer`, as (word index, cosine), closest
    first (ties: corpus order)."""
    x = corpus.vectors[layer].astype(np.float32)  # (N, D)
    q = np.asarray(query, dtype=np.float32)
    cosine = (x @ q) / np.maximum(np.linalg.norm(x, axis=1) * np.linalg.norm(q), np.finfo(np.float32).tiny)
    order = np.argsort(-cosine, kind="stable")[:k]
    return [(int(i), float(cosine[i])) for i in order]


# ---- the disk cache ------------------------------------------------------------------------------


def vectors_path(model: str, corpus: str, *, fingerprint: str, directory: Path | None = None) -> Path:
    key = f"vectors v{VECTORS_VERSION}\n{model}\n{fingerprint}\n{corpus}".encode("utf-8", "surrogatepass")
    return (directory or cache_dir()) / f"vectors-{hashlib.sha256(key).hexdigest()[:32]}.npz"


def save_vectors(found: CorpusVectors, path: Path) -> bool:
    """Write atomically; False, logged, when the folder cannot be written."""
    return write_npz_atomically(
        path,
        {
            "version": np.asarray(VECTORS_VERSION),
            "vectors": found.vectors,
            "sentence": found.sentence,
            "start": found.start,
            "stop": found.stop,
            "words": np.asarray(found.words, dtype=str),
            "model": np.asarray(found.model),
            "corpus_hash": np.asarray(found.corpus_hash),
        },
    )


def load_vectors(path: Path, *, model: str, corpus: str) -> CorpusVectors | None:
    """The cached vectors if readable, whole, and of this model, corpus and version; else None."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != VECTORS_VERSION:
                raise ValueError(f"version {int(data['version'])}")
            found = CorpusVectors(
                vectors=np.array(data["vectors"], dtype=np.float16),
                sentence=np.array(data["sentence"], dtype=np.int32),
                start=np.array(data["start"], dtype=np.int32),
                stop=np.array(data["stop"], dtype=np.int32),
                words=tuple(str(w) for w in data["words"]),
                model=str(data["model"].item()),
                corpus_hash=str(data["corpus_hash"].item()),
            )
        n = len(found.words)
        if found.model != model or found.corpus_hash != corpus:
            raise ValueError("another model or corpus")
        if found.vectors.ndim != 3 or found.vectors.shape[1] != n or not np.isfinite(found.vectors).all():
            raise ValueError("damaged arrays")
        if not (len(found.sentence) == len(found.start) == len(found.stop) == n):
            raise ValueError("damaged index")
        return found
    except Exception as err:  # a damaged file of any kind
        LOG.warning("ignoring the corpus vectors %s (%s: %s); recomputing", path, type(err).__name__, err)
        return None


def load_or_compute_vectors(
    model: str,
    sentences: Sequence[str],
    run: Callable[[str], object],
    *,
    fingerprint: str,
    directory: Path | None = None,
) -> tuple[CorpusVectors, str]:
    """The corpus vectors from the disk cache, or computed with `run` (an engine's run) and saved.
    Returns (vectors, where from): "disk", "computed" or "computed, not saved"."""
    corpus = corpus_hash(sentences)
    path = vectors_path(model, corpus, fingerprint=fingerprint, directory=directory)
    cached = load_vectors(path, model=model, corpus=corpus)
    if cached is not None:
        return cached, "disk"
    found = collect((run(s) for s in sentences), model=model, corpus=corpus)
    return found, "computed" if save_vectors(found, path) else "computed, not saved"
