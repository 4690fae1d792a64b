"""Where one attention weight comes from: the arithmetic of a single cell (query i, key j) of one
head, for a real model's layer (bertviz's neuron view, numbered as the learn page's steps).

    2) project   q_i = x_i W^Q_h + b^Q_h,  k_j = x_j W^K_h + b^K_h   (head h's d_k columns)
    3) score     s_ij = q_i · k_j = Σ_m q_im k_jm
    4) scale     s'_ij = s_ij / √d_k, for the whole row i (every key)
    5) softmax   a_ij = exp(s'_ij − max_m s'_im) / Σ_m exp(s'_im − max_m s'_im)

It calls the functions the NumPy engine's forward pass calls (core.lesson.layers.linear,
core.lesson.attention's split_heads and softmax), in the same order and on the same float32 arrays, so for
that engine the numbers are the engine's own, bit for bit; for the torch engine they agree to float32
rounding. Only one head's row is computed beyond the projections (which are one product for every head, as
in the forward pass: a product over a column slice may round differently).

References: Vig 2019, "A Multiscale Visualization of Attention in the Transformer Model" (bertviz's
neuron view); Vaswani et al. 2017, eq. 1. Letters: T tokens, D hidden width, H heads, d_k = D / H.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from core.lesson.attention import softmax, split_heads
from core.lesson.layers import linear

__all__ = ["CellArithmetic", "cell_arithmetic", "relative_positions", "top_products"]


@dataclass(frozen=True, eq=False)
class CellArithmetic:
    """Every number between a layer's input and one attention weight (see the module docstring)."""

    head: int  # 0-indexed
    i: int  # the query token (the row: the token that attends)
    j: int  # the key token (the column: the token attended to)
    d_k: int  # one head's width
    q: np.ndarray  # (d_k,) q_i: token i's query in this head
    k: np.ndarray  # (d_k,) k_j: token j's key in this head
    products: np.ndarray  # (d_k,) q_i ⊙ k_j, whose sum is the score
    top: np.ndarray  # indices of the largest |products|, largest first
    score: float  # s_ij = q_i · k_j (step 3)
    scaled: float  # s'_ij = s_ij / √d_k (step 4)
    scaled_row: np.ndarray  # (T,) s'_i·: the whole row of scaled scores for query i
    row_max: float  # max over the row, subtracted before exp (it cancels; it keeps exp finite)
    exp_row: np.ndarray  # (T,) exp(s'_im − max)
    exp_sum: float  # Σ_m exp(s'_im − max)
    probs_row: np.ndarray  # (T,) the softmax of the row: query i's attention over every key
    weight: float  # a_ij = probs_row[j] (step 5)

    @property
    def sqrt_d_k(self) -> float:
        return math.sqrt(self.d_k)


def top_products(products: np.ndarray, top: int) -> np.ndarray:
    """Indices of the `top` largest |products|, largest first (ties: the lower index first)."""
    order = np.argsort(-np.abs(np.asarray(products, dtype=np.float64)), kind="stable")
    return order[: max(0, min(top, len(order)))]


def relative_positions(config: object) -> str | None:
    """The position scheme a model config names when it is not absolute (BERT's configs say
    position_embedding_type "relative_key" or "relative_key_query", Huang et al. 2020): attention
    that adds relative-position scores to q·k, which the steps here leave out. None for absolute
    positions or a config that says nothing."""
    kind = getattr(config, "position_embedding_type", None)
    return kind if isinstance(kind, str) and kind and kind != "absolute" else None


def _check(x: np.ndarray, weights: SimpleNamespace, head: int, i: int, j: int) -> None:
    if x.ndim != 2:
        raise ValueError(f"x must be one layer's input (T, D), got shape {x.shape}")
    t, d = x.shape
    if weights.w_q.shape[0] != d:
        raise ValueError(f"x has width {d} but W^Q expects {weights.w_q.shape[0]}")
    if not 0 <= head < weights.n_heads:
        raise ValueError(f"head must be in 0..{weights.n_heads - 1} (0-indexed), got {head}")
    for name, value in (("i", i), ("j", j)):
        if not 0 <= value < t:
            raise ValueError(f"{name} must be a token position in 0..{t - 1}, got {value}")


def cell_arithmetic(
    x: np.ndarray, weights: SimpleNamespace, head: int, i: int, j: int, top: int = 5
) -> CellArithmetic:
    """The arithmetic of attention weight (i, j) in head `head` of one layer.

    x: (T, D) the layer's input (AttentionResult.hidden_states[layer]); weights: the engine's
    layer_weights(layer) (w_q, b_q, w_k, b_k as x @ W, n_heads, d_k); top: how many of the largest
    elementwise products |q_i ⊙ k_j| to single out.
    """
    x = np.asarray(x)
    _check(x, weights, head, i, j)
    heads = weights.n_heads
    # 2) project: one product for every head, as the forward pass does, then head h's columns
    query = split_heads(linear(x, weights.w_q, weights.b_q), heads)[head]  # (T, d_k)
    key = split_heads(linear(x, weights.w_k, weights.b_k), heads)[head]  # (T, d_k)
    d_k = query.shape[-1]
    # 3) scores, 4) scaled. The head's whole (T, T) product, as the forward pass: query i's row
    # alone (a vector-matrix product) sums in another order and can differ in the last bit
    scores_row = (query @ key.T)[i]  # (T,)
    scaled_row = scores_row / math.sqrt(d_k)  # (T,)
    # 5) softmax, written out as core.lesson.attention.softmax computes it, to show its two numbers
    row_max = np.max(scaled_row)
    exp_row = np.exp(scaled_row - row_max)  # (T,)
    exp_sum = np.sum(exp_row)
    probs_row = softmax(scaled_row)  # (T,): exp_row / exp_sum
    products = query[i] * key[j]  # (d_k,)
    return CellArithmetic(
        head=head,
        i=i,
        j=j,
        d_k=d_k,
        q=query[i].copy(),
        k=key[j].copy(),
        products=products,
        top=top_products(products, top),
        score=float(scores_row[j]),
        scaled=float(scaled_row[j]),
        scaled_row=scaled_row,
        row_max=float(row_max),
        exp_row=exp_row,
        exp_sum=float(exp_sum),
        probs_row=probs_row,
        weight=float(probs_row[j]),
    )
