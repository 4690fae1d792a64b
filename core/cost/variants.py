"""Efficient attention variants, from scratch in NumPy, each computed from one head's real Q, K, V.

Every function takes query (T, d_k), key (T, d_k), value (T, d_v) and returns (output (T, d_v),
weights (T, T)): the head's output and its *effective* attention matrix, whose rows each sum to 1
(the variants that never form the matrix, linear attention and the Performer, compute their output
in the linear order and draw the matrix from the same features). Positions a sparse pattern leaves
out get weight 0 exactly (core.lesson.attention.mask_scores). The random variants take a seed, so a link
reproduces a picture.

Sparse patterns are non-causal here: BERT reads the whole sentence, so each pattern is the
bidirectional form of the paper's.

Letters: T tokens, d_k the head's width, d_v the values' width, M random features, K projected rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from core.lesson.attention import local_window_mask, scaled_dot_product_attention

__all__ = [
    "VARIANTS",
    "RowKeys",
    "Variant",
    "bigbird",
    "bigbird_mask",
    "full",
    "linear",
    "linformer",
    "linformer_projection",
    "longformer",
    "longformer_mask",
    "performer",
    "performer_features",
    "row_keys_attention",
    "strided",
    "strided_mask",
    "window",
]


def full(query: np.ndarray, key: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference: softmax(Q Kᵀ / √d_k) V (Vaswani et al. 2017, eq. 1). O(T² d) time, T² memory."""
    return scaled_dot_product_attention(query, key, value)


def window(query, key, value, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """Sliding window: i attends to j only when |i − j| ≤ radius; softmax over those keys alone
    (Beltagy et al. 2020, Longformer's local attention). O(T · radius · d)."""
    return scaled_dot_product_attention(query, key, value, local_window_mask(len(query), radius))


def strided_mask(t: int, stride: int) -> np.ndarray:
    """Child et al. 2019's fixed pattern, bidirectional: j is visible from i when both sit in the
    same block of `stride` positions, or j is the last position of its block (the blocks' summary
    positions, c = 1 in the paper)."""
    if stride < 1:
        raise ValueError(f"the stride must be 1 or more, got {stride}")
    i = np.arange(t)
    same_block = (i[:, None] // stride) == (i[None, :] // stride)
    summary = (i % stride) == stride - 1
    return same_block | summary[None, :]


def strided(query, key, value, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed sparse attention (Child et al. 2019, "Generating Long Sequences with Sparse
    Transformers", §4.2): softmax over strided_mask's keys. O(T · (stride + T/stride) · d)."""
    return scaled_dot_product_attention(query, key, value, strided_mask(len(query), stride))


def longformer_mask(t: int, radius: int, global_tokens: tuple[int, ...]) -> np.ndarray:
    """A window of `radius`, plus global tokens that see every position and are seen by all."""
    mask = local_window_mask(t, radius)
    index = [g for g in global_tokens if 0 <= g < t]
    mask[index, :] = True
    mask[:, index] = True
    return mask


def longformer(
    query, key, value, radius: int, global_tokens: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Longformer (Beltagy et al. 2020): sliding window of `radius` plus global attention on
    `global_tokens` (BERT's [CLS] and [SEP]). O(T · (radius + g) · d) for g global tokens."""
    return scaled_dot_product_attention(query, key, value, longformer_mask(len(query), radius, global_tokens))


def bigbird_mask(t: int, radius: int, n_random: int, global_tokens: tuple[int, ...], seed: int) -> np.ndarray:
    """Longformer's pattern plus `n_random` keys per row drawn (seeded) from those not yet visible."""
    mask = longformer_mask(t, radius, global_tokens)
    rng = np.random.default_rng(seed)
    for i in range(t):
        hidden = np.flatnonzero(~mask[i])
        if hidden.size:
            mask[i, rng.choice(hidden, size=min(n_random, hidden.size), replace=False)] = True
    return mask


def bigbird(query, key, value, radius: int, n_random: int, global_tokens: tuple[int, ...], seed: int = 0):
    """BigBird (Zaheer et al. 2020): window, global tokens and `n_random` random keys per row.
    O(T · (radius + g + r) · d)."""
    mask = bigbird_mask(len(query), radius, n_random, global_tokens, seed)
    return scaled_dot_product_attention(query, key, value, mask)


def _elu_plus_one(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _linear_output(q_features: np.ndarray, k_features: np.ndarray, value) -> np.ndarray:
    """φ(Q)(φ(K)ᵀ V) / φ(Q)(φ(K)ᵀ 1): the output without the T × T matrix. O(T M d)."""
    kv = k_features.T @ np.asarray(
        value, dtype=np.float64
    )  # (M, d_v): the keys' features times the values, once
    normaliser = q_features @ k_features.sum(axis=0)  # (T,)
    return (q_features @ kv) / normaliser[:, None]


def _linear_order(q_features: np.ndarray, k_features: np.ndarray, value: np.ndarray):
    """The output in the linear order, and the matrix from the same features (rows normalised), for
    drawing."""
    weights = q_features @ k_features.T
    return _linear_output(q_features, k_features, value), weights / weights.sum(axis=1, keepdims=True)


def linear(query, key, value) -> tuple[np.ndarray, np.ndarray]:
    """Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs", eq. 4-6): φ(x) = elu(x)
    + 1, A_ij = φ(q_i)·φ(k_j) / Σ_m φ(q_i)·φ(k_m), output computed as φ(Q)(φ(K)ᵀV). O(T d²)."""
    q = _elu_plus_one(np.asarray(query, dtype=np.float64))
    k = _elu_plus_one(np.asarray(key, dtype=np.float64))
    return _linear_order(q, k, np.asarray(value, dtype=np.float64))


def _performer_features(query, key, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FAVOR+'s positive features of the queries and keys, (T, M) each, for M Gaussian rows of w."""
    query, key = np.asarray(query, dtype=np.float64), np.asarray(key, dtype=np.float64)
    d_k = query.shape[-1]
    q, k = query / d_k**0.25, key / d_k**0.25
    q_logits = q @ w.T - (q * q).sum(axis=1, keepdims=True) / 2  # (T, M)
    k_logits = k @ w.T - (k * k).sum(axis=1, keepdims=True) / 2
    # shifts keep exp() finite and cancel in the row normalisation: one per query row (a row's
    # weights share it), one for all the keys
    scale = math.sqrt(len(w))
    q_features = np.exp(q_logits - q_logits.max(axis=1, keepdims=True)) / scale
    k_features = np.exp(k_logits - k_logits.max()) / scale
    return q_features, k_features


def performer_features(d_k: int, n_features: int, seed: int = 0) -> np.ndarray:
    """The Performer's M random directions (M, d_k), seeded: fixed once, like a model's weights."""
    return np.random.default_rng(seed).standard_normal((n_features, d_k))


def performer(query, key, value, n_features: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Performer's FAVOR+ (Choromanski et al. 2021, eq. 7 with positive features): with x scaled by
    d_k^(-1/4), φ(x) = exp(Wx − |x|²/2) / √M for M Gaussian rows of W (seeded), so that
    E[φ(q)·φ(k)] = exp(q·k / √d_k), softmax's kernel; output in the linear order. O(T M d).
    (Plain i.i.d. rows; the paper's orthogonal rows lower the variance further.)"""
    w = performer_features(np.shape(query)[-1], n_features, seed)
    return _linear_order(*_performer_features(query, key, w), np.asarray(value, dtype=np.float64))


def linformer_projection(t: int, n_rows: int, seed: int = 0) -> np.ndarray:
    """Linformer's E (K × T), seeded: each row a random mix of positions summing to 1."""
    e = np.random.default_rng(seed).random((n_rows, t))
    return e / e.sum(axis=1, keepdims=True)


def linformer(query, key, value, n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Linformer (Wang et al. 2020): keys and values projected along the sequence to `n_rows`
    rows by E (K × T): softmax(Q (E K)ᵀ / √d_k) (E V). In a trained Linformer E is learned; here it
    is random and seeded (linformer_projection), so the effective T × T matrix softmax(...) E is a
    true attention matrix (rows of non-negative weights summing to 1). O(T K d)."""
    e = linformer_projection(len(key), n_rows, seed)
    output, probs = scaled_dot_product_attention(query, e @ key, e @ value)  # probs (T, K)
    return output, probs @ e


# ---- a sparse pattern at its own cost --------------------------------------------------------------


@dataclass(frozen=True)
class RowKeys:
    """A sparse pattern as each row's visible keys: rows `rows` see key[index[r]] where valid[r]
    (padded to the widest row); the rows in `dense` (global tokens) see their mask's keys directly."""

    mask: np.ndarray  # (T, T) the pattern
    rows: np.ndarray  # (R,)
    index: np.ndarray  # (R, W)
    valid: np.ndarray  # (R, W)
    dense: np.ndarray  # (G,)

    @staticmethod
    def of(mask: np.ndarray, dense_rows: tuple[int, ...] = ()) -> RowKeys:
        t = len(mask)
        dense = np.array(sorted({g for g in dense_rows if 0 <= g < t}), dtype=int)
        rows = np.setdiff1d(np.arange(t), dense)
        counts = mask[rows].sum(axis=1)
        width = int(counts.max()) if rows.size else 0
        order = np.argsort(~mask[rows], axis=1, kind="stable")[:, :width]  # visible keys first
        valid = np.arange(width)[None, :] < counts[:, None]
        return RowKeys(mask, rows, order, valid, dense)


def row_keys_attention(query, key, value, pattern: RowKeys) -> np.ndarray:
    """The output of softmax(Q Kᵀ / √d_k) V over the pattern's keys, each row scoring only its own
    W keys: O(T · W · d) instead of O(T² d), as sparse kernels compute it (their block layouts do the
    same with contiguous blocks). Equals the masked dense computation's output."""
    output = np.zeros((len(query), np.shape(value)[-1]), dtype=np.result_type(query, value))
    q = query[pattern.rows]  # (R, d_k)
    scores = np.einsum("rd,rwd->rw", q, key[pattern.index]) / math.sqrt(query.shape[-1])  # (R, W)
    scores = np.where(pattern.valid, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    output[pattern.rows] = np.einsum("rw,rwd->rd", weights, value[pattern.index])
    if pattern.dense.size:  # global rows see (almost) every key: one dense product for them
        output[pattern.dense] = scaled_dot_product_attention(
            query[pattern.dense], key, value, pattern.mask[pattern.dense]
        )[0]
    return output


# ---- one variant, as the engine's `run(..., variant=...)` takes it ---------------------------------

VARIANTS = ("full", "window", "strided", "longformer", "bigbird", "linear", "performer", "linformer")


@dataclass(frozen=True)
class Variant:
    """Which variant every head of the model uses, with its parameters: w (window radius), s
    (stride), r (random keys per row), m (random features), k (projected rows), seed. The global
    tokens (Longformer, BigBird) are the sentence's [CLS] and [SEP]: the engine binds them
    (with_globals) once it has tokenized the text."""

    name: str = "full"
    w: int = 2
    s: int = 4
    r: int = 2
    m: int = 64
    k: int = 8
    seed: int = 0
    global_tokens: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.name not in VARIANTS:
            raise ValueError(f"unknown variant {self.name!r}; choose one of {', '.join(VARIANTS)}")
        for field, low in (("w", 0), ("s", 1), ("r", 0), ("m", 1), ("k", 1)):
            if getattr(self, field) < low:
                raise ValueError(f"the variant's {field} must be {low} or more, got {getattr(self, field)}")

    def with_globals(self, special_mask) -> Variant:
        return replace(self, global_tokens=tuple(int(i) for i in np.flatnonzero(special_mask)))

    def __call__(self, query, key, value) -> tuple[np.ndarray, np.ndarray]:
        """One head: (T, d_k) query and key, (T, d_v) value -> (output (T, d_v), weights (T, T))."""
        if self.name == "full":
            return full(query, key, value)
        if self.name == "window":
            return window(query, key, value, self.w)
        if self.name == "strided":
            return strided(query, key, value, self.s)
        if self.name == "longformer":
            return longformer(query, key, value, self.w, self.global_tokens)
        if self.name == "bigbird":
            return bigbird(query, key, value, self.w, self.r, self.global_tokens, self.seed)
        if self.name == "linear":
            return linear(query, key, value)
        if self.name == "performer":
            return performer(query, key, value, self.m, self.seed)
        return linformer(query, key, value, min(self.k, len(key)), self.seed)

    # The output alone, at the variant's own cost (the cost page times this): what a trained model
    # holds fixed (a sparse pattern, random features, Linformer's E) is prepared once per length.

    def mask(self, t: int) -> np.ndarray | None:
        """The sparse pattern (T, T) of window, strided, longformer and bigbird; None otherwise."""
        if self.name == "window":
            return local_window_mask(t, self.w)
        if self.name == "strided":
            return strided_mask(t, self.s)
        if self.name == "longformer":
            return longformer_mask(t, self.w, self.global_tokens)
        if self.name == "bigbird":
            return bigbird_mask(t, self.w, self.r, self.global_tokens, self.seed)
        return None

    def prepare(self, t: int, d_k: int) -> object:
        """The fixed parts for length t: a RowKeys pattern, the Performer's W, or Linformer's E."""
        if (mask := self.mask(t)) is not None:
            return RowKeys.of(mask, self.global_tokens)
        if self.name == "performer":
            return performer_features(d_k, self.m, self.seed)
        if self.name == "linformer":
            return linformer_projection(t, min(self.k, t), self.seed)
        return None

    def output(self, query, key, value, prepared: object) -> np.ndarray:
        """The head's output from prepare(T, d_k)'s parts, without forming the T × T matrix (full
        attention and Linformer aside, whose outputs need their own matrices); equals self(...)[0]."""
        if isinstance(prepared, RowKeys):
            return row_keys_attention(query, key, value, prepared)
        if self.name == "performer":
            q_features, k_features = _performer_features(query, key, prepared)
            return _linear_output(q_features, k_features, value)
        if self.name == "linear":
            q = _elu_plus_one(np.asarray(query, dtype=np.float64))
            return _linear_output(q, _elu_plus_one(np.asarray(key, dtype=np.float64)), value)
        if self.name == "linformer":
            return scaled_dot_product_attention(query, prepared @ key, prepared @ value)[0]
        return scaled_dot_product_attention(query, key, value)[0]
