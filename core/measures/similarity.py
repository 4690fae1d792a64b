"""What a word becomes: the cosine similarity of the model's token vectors, within one sentence at one
layer, and for one word across two sentences at every layer.

The hidden state after layer l is the vector a token carries out of that layer (l = 0: the
embeddings, before any attention). Within a sentence, cos(x_i, x_j) at layer l says how alike two
tokens have become; across two sentences, the same word's cosine per layer says how far context has
pulled its two readings apart ("bank" as a lender and at the river). A word cut into pieces is the
mean of its pieces' vectors, as on the rest of the product. References: Ethayarajh (2019), "How
Contextual are Contextualized Word Representations?"; exBERT (Hoover et al. 2020).

Letters: L layers, T tokens, W shown items (words or tokens), D hidden size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["cosine_matrix", "item_vectors", "word_across_layers"]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), np.finfo(np.float64).tiny)


def item_vectors(hidden: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """(..., T, D) hidden states -> (..., W, D) float64: each item the mean of its tokens' vectors."""
    hidden = np.asarray(hidden, dtype=np.float64)
    return np.stack([hidden[..., start:stop, :].mean(axis=-2) for start, stop in spans], axis=-2)


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """(W, D) -> (W, W) cosine of every pair; the diagonal is 1."""
    unit = _unit(np.asarray(vectors, dtype=np.float64))
    return unit @ unit.T


def word_across_layers(
    hidden1: np.ndarray, span1: tuple[int, int], hidden2: np.ndarray, span2: tuple[int, int]
) -> np.ndarray:
    """(L + 1,) cosine between one word's vector in sentence 1 and in sentence 2, at the embeddings
    and after each layer. hidden1, hidden2: (L + 1, T1, D), (L + 1, T2, D)."""
    one = _unit(item_vectors(hidden1, [span1])[:, 0])  # (L + 1, D)
    two = _unit(item_vectors(hidden2, [span2])[:, 0])
    return (one * two).sum(axis=-1)
