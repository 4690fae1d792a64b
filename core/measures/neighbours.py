"""Nearest neighbours in a corpus: which words of the built-in sentences does the model represent
most like a given word, after a given layer? (exBERT's search, Hoover et al. 2020.)

Every token of every corpus sentence keeps its vector after each layer, stored as float16 (half the
disk and memory; cosines move by less than 1e-3). A word is the mean of its pieces' vectors;
[CLS] and [SEP] are no words (they stay for the query/key space, core/measures/qk_space.py). A query is one
vector; the answer is the k corpus words with the largest cosine at that layer. At the embeddings
(layer 0) a word is found by its own identity and position; at the top layers by what context made
of it, so "bank" the lender can find other lenders.

The disk cache sits beside the head atlas's (core/measures/atlas.py) and is keyed the same way: model key,
model fingerprint, corpus hash and VECTORS_VERSION. Two files: a small .npz index (tokens, words, where
each sits) and an .npy of the vectors, which a reader maps (np.load(mmap_mode="r")) so that only the
layers it reads become resident. A file that cannot be read is ignored and recomputed; a folder that
cannot be written leaves the vectors in memory only (logged). `python -m core prepare` (core/prepare.py)
writes them ahead of time.

Letters: L layers, N corpus tokens, M corpus words, D hidden size.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.measures.analysis import piece_text, word_spans
from core.measures.cache_files import (
    cache_dir,
    corpus_hash,
    release_freed_memory,
    write_npy_atomically,
    write_npz_atomically,
)

LOG = logging.getLogger(__name__)

__all__ = ["VECTORS_VERSION", "CorpusVectors", "collect", "counted", "hidden_path", "load_or_compute_vectors"]
__all__ += ["load_vectors", "nearest", "save_vectors", "vectors_path"]

# Bump when what is stored changes: old files then match no key. 2: the vectors in an .npy of their own.
VECTORS_VERSION = 2
Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


@dataclass(frozen=True)
class CorpusVectors:
    """Every corpus token's vector after each layer ([CLS] and [SEP] too: the query/key space draws
    them), and the words they make up. Index letters: N tokens, M words."""

    hidden: np.ndarray  # (L + 1, N, D) float16: hidden_states of every sentence, one after another
    tokens: tuple[str, ...]  # (N,) the tokenizer's tokens
    token_sentence: np.ndarray  # (N,) int32: each token's sentence, an index into the corpus
    special: np.ndarray  # (N,) bool: [CLS], [SEP]
    word_start: np.ndarray  # (M,) int32: a word's first token, an index into `tokens`
    word_stop: np.ndarray  # (M,) int32: one past its last token
    words: tuple[str, ...]  # (M,) the word as written by the tokenizer (pieces joined)
    model: str
    corpus_hash: str

    @property
    def word_sentence(self) -> np.ndarray:
        """(M,) each word's sentence."""
        return self.token_sentence[self.word_start]

    def word_vectors(self, layer: int) -> np.ndarray:
        """(M, D) float32: each word's vector after `layer`, the mean of its pieces' vectors."""
        x = self.hidden[layer].astype(np.float32)
        # a word's pieces are a run of tokens: its sum is a difference of running sums
        cumulative = np.concatenate([np.zeros((1, x.shape[1]), np.float32), np.cumsum(x, axis=0)])
        sums = cumulative[self.word_stop] - cumulative[self.word_start]
        return sums / (self.word_stop - self.word_start)[:, None]


def collect(results: Iterable, *, model: str, corpus: str) -> CorpusVectors:
    """The tokens and words of a corpus's results (one AttentionResult per sentence, in order)."""
    hidden, tokens, token_sentence, special, word_start, word_stop, words = [], [], [], [], [], [], []
    for n, result in enumerate(results):
        offset = len(tokens)
        hidden.append(np.asarray(result.hidden_states, dtype=np.float16))  # (L + 1, T, D)
        tokens.extend(result.tokens)
        token_sentence.extend([n] * len(result.tokens))
        special.extend(bool(s) for s in result.special_mask)
        for a, b in word_spans(result.word_ids, result.special_mask):
            if not result.special_mask[a]:
                word_start.append(offset + a)
                word_stop.append(offset + b)
                words.append("".join(piece_text(t) for t in result.tokens[a:b]))
    return CorpusVectors(
        hidden=np.concatenate(hidden, axis=1),
        tokens=tuple(tokens),
        token_sentence=np.asarray(token_sentence, dtype=np.int32),
        special=np.asarray(special, dtype=bool),
        word_start=np.asarray(word_start, dtype=np.int32),
        word_stop=np.asarray(word_stop, dtype=np.int32),
        words=tuple(words),
        model=model,
        corpus_hash=corpus,
    )


def nearest(corpus: CorpusVectors, query: np.ndarray, layer: int, k: int = 10) -> list[tuple[int, float]]:
    """The k corpus words closest to `query` (D,) after `layer`, as (word index, cosine), closest
    first (ties: corpus order)."""
    x = corpus.word_vectors(layer)  # (M, D)
    q = np.asarray(query, dtype=np.float32)
    cosine = (x @ q) / np.maximum(np.linalg.norm(x, axis=1) * np.linalg.norm(q), np.finfo(np.float32).tiny)
    order = np.argsort(-cosine, kind="stable")[:k]
    return [(int(i), float(cosine[i])) for i in order]


# ---- the disk cache ------------------------------------------------------------------------------


def vectors_path(model: str, corpus: str, *, fingerprint: str, directory: Path | None = None) -> Path:
    """The index file (.npz) of (model key, model fingerprint, corpus hash, VECTORS_VERSION); the
    vectors themselves are beside it, in hidden_path(it)."""
    key = f"vectors v{VECTORS_VERSION}\n{model}\n{fingerprint}\n{corpus}".encode("utf-8", "surrogatepass")
    return (directory or cache_dir()) / f"vectors-{hashlib.sha256(key).hexdigest()[:32]}.npz"


def hidden_path(index: Path) -> Path:
    """The .npy of the (L + 1, N, D) vectors beside an index file: np.load maps it (mmap_mode="r"),
    so a reader holds only the layers it touches, not all of them (SmolLM2's: 137 MB)."""
    return index.with_suffix(".npy")


def save_vectors(found: CorpusVectors, path: Path) -> bool:
    """Write the vectors, then the index (so an index on disk means its vectors are whole), each
    atomically; False, logged, when the folder cannot be written."""
    return write_npy_atomically(hidden_path(path), np.asarray(found.hidden, dtype=np.float16)) and (
        write_npz_atomically(
            path,
            {
                "version": np.asarray(VECTORS_VERSION),
                "shape": np.asarray(found.hidden.shape),
                "tokens": np.asarray(found.tokens, dtype=str),
                "token_sentence": found.token_sentence,
                "special": found.special,
                "word_start": found.word_start,
                "word_stop": found.word_stop,
                "words": np.asarray(found.words, dtype=str),
                "model": np.asarray(found.model),
                "corpus_hash": np.asarray(found.corpus_hash),
            },
        )
    )


def load_vectors(path: Path, *, model: str, corpus: str) -> CorpusVectors | None:
    """The cached vectors if readable, whole, and of this model, corpus and version; else None. The
    vectors come as a read-only memory map of hidden_path(path)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != VECTORS_VERSION:
                raise ValueError(f"version {int(data['version'])}")
            shape = tuple(int(n) for n in data["shape"])
            found = CorpusVectors(
                hidden=np.load(hidden_path(path), mmap_mode="r", allow_pickle=False),
                tokens=tuple(str(t) for t in data["tokens"]),
                token_sentence=np.array(data["token_sentence"], dtype=np.int32),
                special=np.array(data["special"], dtype=bool),
                word_start=np.array(data["word_start"], dtype=np.int32),
                word_stop=np.array(data["word_stop"], dtype=np.int32),
                words=tuple(str(w) for w in data["words"]),
                model=str(data["model"].item()),
                corpus_hash=str(data["corpus_hash"].item()),
            )
        _check(found, shape, model=model, corpus=corpus)
        if not _all_finite(hidden_path(path), found.hidden):
            raise ValueError("not finite")
        return found
    except Exception as err:  # a damaged file of any kind
        LOG.warning("ignoring the corpus vectors %s (%s: %s); recomputing", path, type(err).__name__, err)
        return None


def _check(found: CorpusVectors, shape: tuple[int, ...], *, model: str, corpus: str) -> None:
    """Raise ValueError unless the index and the vectors agree with each other and the key."""
    n, m = len(found.tokens), len(found.words)
    if found.model != model or found.corpus_hash != corpus:
        raise ValueError("another model or corpus")
    hidden = found.hidden
    if hidden.dtype != np.float16 or hidden.shape != shape or hidden.ndim != 3 or hidden.shape[1] != n:
        raise ValueError("damaged arrays")
    if not (len(found.token_sentence) == len(found.special) == n and len(found.word_start) == m):
        raise ValueError("damaged index")
    inside = m == 0 or (found.word_start.min() >= 0 and found.word_stop.max() <= n)
    if len(found.word_stop) != m or not inside:
        raise ValueError("damaged word index")


def _all_finite(path: Path, hidden: np.memmap) -> bool:
    """Every vector finite, read layer by layer into one buffer: checking the map itself would make
    every layer resident in this process, which the map is there to avoid."""
    layer = np.empty(hidden.shape[1:], dtype=hidden.dtype)
    with open(path, "rb") as f:
        f.seek(hidden.offset)
        for _ in range(hidden.shape[0]):
            if f.readinto(layer) != layer.nbytes or not np.isfinite(layer).all():
                return False
    return True


def load_or_compute_vectors(
    model: str,
    sentences: Sequence[str],
    run: Callable[[str], object],
    *,
    fingerprint: str,
    directory: Path | None = None,
    progress: Progress | None = None,
) -> tuple[CorpusVectors, str]:
    """The corpus vectors from the disk cache, or computed with `run` (an engine's run) and saved,
    calling progress(sentences done, sentences in all) after each sentence. Returns (vectors, where
    from): "disk", "computed" or "computed, not saved". Saved vectors are returned mapped from the
    file, so the computed copy is let go."""
    corpus = corpus_hash(sentences)
    path = vectors_path(model, corpus, fingerprint=fingerprint, directory=directory)
    cached = load_vectors(path, model=model, corpus=corpus)
    if cached is not None:
        return cached, "disk"
    found = collect(counted(run, sentences, progress), model=model, corpus=corpus)
    if not save_vectors(found, path):
        return found, "computed, not saved"
    mapped = load_vectors(path, model=model, corpus=corpus)
    if mapped is None:
        return found, "computed"
    del found
    release_freed_memory()  # the pieces the vectors were computed in
    return mapped, "computed"


def counted(run: Callable[[str], object], sentences: Sequence[str], progress: Progress | None) -> Iterator:
    """run(s) for each sentence in turn, calling progress(0, total) first (the work begins) and
    progress(done, total) after each."""
    if progress is not None:
        progress(0, len(sentences))
    for done, sentence in enumerate(sentences, start=1):
        yield run(sentence)
        if progress is not None:
            progress(done, len(sentences))
