"""How much information attention moves: attention as vector norms, and attention rollout.
Pure NumPy.

Norms: Kobayashi, Kuribayashi, Yokoi and Inui (2020), "Attention is Not Only a Weight: Analyzing
Transformers with Vector Norms" (EMNLP). A head's output for token i is a weighted sum of vectors,
    sum_j α_ij f_h(x_j),   f_h(x) = (x W_V^h + b_V^h) W_O^h,
where x_j is the layer's input for token j, W_V^h are head h's d_k columns of W_V and W_O^h the d_k
rows of W_O that take head h's context. The weight α_ij says how much of f_h(x_j) is taken; the
norm ‖α_ij f_h(x_j)‖ says how much actually arrives. A large weight on a vector that is nearly zero
(typically [SEP]'s) moves little. Summed over heads and keys, plus b_O, these vectors are exactly
the attention block's output before the residual connection (tests/core/test_flow.py checks it).

Rollout: Abnar and Zuidema (2020), "Quantifying Attention Flow in Transformers" (ACL). Each layer
is summarised by Ã(l) = ½·mean_h A(l) + ½·I (heads mix equally, the residual carries half), rows
renormalised, and the layers are chained: R(l) = Ã(l)·…·Ã(1). Row i of R(l) traces token i's
representation after layer l back to the input tokens, through attention alone (value vectors and
the feed-forward layers are ignored).

Letters: L layers, H heads, T tokens, D hidden size, d_k = D / H, W shown items.
Weights follow the x @ W convention: W_V is (D, H·d_k), W_O is (H·d_k, D).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "attention_norms",
    "attention_rollout",
    "renormalise_rows",
    "shown_norms",
    "value_output_vectors",
]


def value_output_vectors(x: np.ndarray, weights, n_heads: int) -> np.ndarray:
    """(T, D) layer input -> (H, T, D): f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h for every head and token.

    `weights` has w_v (D, H·d_k), b_v (H·d_k,), w_o (H·d_k, D) (an engine's layer_weights(layer)).
    """
    w_v, b_v, w_o = (np.asarray(a, dtype=np.float64) for a in (weights.w_v, weights.b_v, weights.w_o))
    if w_v.shape[1] % n_heads or w_o.shape[0] != w_v.shape[1]:
        raise ValueError(f"W_V {w_v.shape} and W_O {w_o.shape} do not split into {n_heads} heads")
    d_k = w_v.shape[1] // n_heads
    t = x.shape[0]
    # 1) values of every head at once, then split into heads: (T, H·d_k) -> (H, T, d_k)
    value = (np.asarray(x, dtype=np.float64) @ w_v + b_v).reshape(t, n_heads, d_k).transpose(1, 0, 2)
    # 2) each head's slice of W_O: rows h·d_k … (h+1)·d_k take head h's context -> (H, d_k, D)
    w_o_heads = w_o.reshape(n_heads, d_k, w_o.shape[1])
    return np.matmul(value, w_o_heads)  # (H, T, D)


def attention_norms(probs: np.ndarray, f: np.ndarray) -> np.ndarray:
    """(H, T, T) weights and (H, T, D) vectors -> (H, T, T): ‖α_ij f_h(x_j)‖.

    Weights are never negative, so ‖α_ij f_h(x_j)‖ = α_ij ‖f_h(x_j)‖: one norm per key, scaled.
    """
    lengths = np.linalg.norm(f, axis=-1)  # (H, T): ‖f_h(x_j)‖
    return np.asarray(probs, dtype=np.float64) * lengths[:, None, :]


def renormalise_rows(rows: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (a row summing to 0 stays 0): a row's shares of its total."""
    total = rows.sum(axis=-1, keepdims=True)
    return np.divide(rows, total, out=np.zeros_like(rows, dtype=np.float64), where=total > 0)


def shown_norms(
    probs: np.ndarray,
    f: np.ndarray,
    spans: Sequence[tuple[int, int]],
    keep: np.ndarray,
    *,
    merged: bool,
    rescale: bool,
) -> np.ndarray:
    """One head's norms as the page shows them: (T, T) weights and (T, D) vectors -> (W, W).

    Merged words (spans as core.measures.analysis.word_spans): the norm *to* a word is the norm of the summed
    vector ‖Σ_{j in word} α_ij f(x_j)‖, what the word's pieces move together (vectors add, norms do
    not: summing the pieces' norms would count opposite directions as extra information); *from* a
    word it is the mean of its pieces' rows, as for weights. Hidden tokens (keep False) lose their
    rows and columns and the rest is left as is; `rescale` then divides each row by its sum.
    """
    probs = np.asarray(probs, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    if merged:
        starts = np.array([s for s, _ in spans], dtype=np.intp)
        sizes = np.array([e - s for s, e in spans], dtype=np.float64)
        # a one-piece word's column is α_ij ‖f(x_j)‖; only words of several pieces need their sum
        to_items = probs[:, starts] * np.linalg.norm(f[starts], axis=-1)  # (T, items)
        for item in np.flatnonzero(sizes > 1):
            start, stop = spans[item]  # (T, pieces) @ (pieces, D): each query's summed vector
            to_items[:, item] = np.linalg.norm(probs[:, start:stop] @ f[start:stop], axis=-1)
        out = np.add.reduceat(to_items, starts, axis=0) / sizes[:, None]  # (items, items)
    else:
        out = attention_norms(probs[None], f[None])[0]
    idx = np.flatnonzero(keep)
    out = out[idx[:, None], idx[None, :]]
    return renormalise_rows(out) if rescale else out


def attention_rollout(attn: np.ndarray, residual: bool = True) -> np.ndarray:
    """(L, H, T, T) -> (L, T, T): output[l] = Ã(l)·…·Ã(1), the rollout up to layer l (0-indexed).

    Ã(l) = ½·mean_h A(l) + ½·I with each row renormalised (without `residual`: mean_h A(l)).
    Row i of output[l] says how much of token i's representation after layer l traces back to each
    input token; every row sums to 1.
    """
    mean = np.asarray(attn, dtype=np.float64).mean(axis=1)  # (L, T, T): heads mix equally
    eye = np.eye(mean.shape[-1])
    if residual:
        mean = renormalise_rows(0.5 * mean + 0.5 * eye)  # the skip connection carries half
    mean = mean.astype(np.float32)  # the chain in float32: half the time of float64 at 512 tokens
    out = np.empty(mean.shape, dtype=np.float32)
    acc = eye.astype(np.float32)
    for layer in range(mean.shape[0]):
        acc = mean[layer] @ acc  # the new layer mixes what the earlier ones produced
        out[layer] = acc
    return out
