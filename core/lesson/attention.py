"""Scaled dot-product and multi-head attention, from scratch in NumPy.

References: Vaswani et al. 2017, "Attention Is All You Need" (eq. 1 and section 3.2.2);
The Annotated Transformer (``attention()`` returns the probabilities too, so a teacher can show them).

Letters used in shape comments:
    T_q, T_k  query and key sequence lengths      H    number of heads
    d_model   width of the token vectors          d_k  width of one head's queries and keys
    d_v       width of one head's values           ...  any leading batch axes
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "MASK_KINDS",
    "FullyMaskedRowError",
    "attention_steps",
    "build_mask",
    "causal_mask",
    "local_window_mask",
    "mask_scores",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "share_kv_heads",
    "softmax",
    "split_heads",
    "strided_mask",
]


class FullyMaskedRowError(ValueError):
    """A query may attend to no key at all: softmax over an empty set is undefined."""


def softmax(x: np.ndarray, axis: int = -1, *, out: np.ndarray | None = None) -> np.ndarray:
    """Numerically stable softmax: subtracting the row maximum leaves the result unchanged
    (the factor e^-max cancels) but keeps exp() from overflowing on large scores.

    out: a float array shaped like x to write the result into (a model's attentions, written once).
    Each step after the first works in place: on 12 heads of 512 tokens, every array the size of x
    is 12 MB of fresh memory that the system must hand over page by page."""
    x = np.asarray(x)
    row_max = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - row_max) if out is None else np.exp(np.subtract(x, row_max, out=out), out=out)
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def mask_scores(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """scores with -inf where mask is False, so softmax gives those keys exactly 0.

    mask: boolean, broadcastable to scores' (..., T_q, T_k); True = may attend; None = no mask."""
    if mask is None:
        return scores
    full = np.broadcast_to(np.asarray(mask, dtype=bool), scores.shape)
    if not full.any(axis=-1).all():
        raise FullyMaskedRowError(
            "the mask leaves at least one query with no key to attend to; "
            "every row of the mask needs at least one True"
        )
    return np.where(full, scores, -np.inf)


def attention_steps(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    scale: bool = True,
    probs_out: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """softmax(Q K^T / sqrt(d_k)) V, one line per step of the learn page, every intermediate kept.

    query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v).
    mask: boolean, broadcastable to (..., T_q, T_k); True = may attend.
    scale=False skips the division by sqrt(d_k) (the learn page shows why it exists).
    probs_out: an array (..., T_q, T_k) to write the probs into (a model's slice of its attentions).
    Returns scores (QK^T), scaled, masked (only when there is a mask), probs and context.
    """
    query, key, value = np.asarray(query), np.asarray(key), np.asarray(value)
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must have the same last dimension d_k, got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"key and value must have the same number of positions, got {key.shape[-2]} and {value.shape[-2]}"
        )
    d_k = query.shape[-1]
    steps = {}
    # 3) scores: every query against every key
    steps["scores"] = query @ np.swapaxes(key, -1, -2)  # (..., T_q, T_k)
    # 4) scale, so the scores' spread does not grow with d_k
    steps["scaled"] = steps["scores"] / math.sqrt(d_k) if scale else steps["scores"]
    # 5) mask (where there is one), then softmax: each row becomes weights that sum to 1
    if mask is not None:
        steps["masked"] = mask_scores(steps["scaled"], mask)
    steps["probs"] = softmax(steps.get("masked", steps["scaled"]), out=probs_out)  # masked: exp(-inf) = 0
    # 6) weighted sum of the values
    steps["context"] = steps["probs"] @ value  # (..., T_q, d_v)
    return steps


def scaled_dot_product_attention(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    scale: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """softmax(Q K^T / sqrt(d_k)) V: the steps of attention_steps, without the intermediates.

    query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v).
    mask: boolean, broadcastable to (..., T_q, T_k); True = may attend.
    Returns (context (..., T_q, d_v), probs (..., T_q, T_k)).
    """
    steps = attention_steps(query, key, value, mask, scale=scale)
    return steps["context"], steps["probs"]


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(..., T, H * d_head) -> (..., H, T, d_head)."""
    *lead, t, d = x.shape
    if d % n_heads:
        raise ValueError(f"width {d} must be divisible by the number of heads ({n_heads})")
    x = x.reshape(*lead, t, n_heads, d // n_heads)
    return np.swapaxes(x, -3, -2)


def share_kv_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """Grouped-query attention (Ainslie et al. 2023): (..., H_kv, T, d) -> (..., H, T, d), each of the
    H_kv key (or value) heads repeated for the H / H_kv query heads of its group. Query head h reads
    key/value head h // (H / H_kv): heads 0..g-1 share the first, g..2g-1 the second, and so on."""
    n_kv = x.shape[-3]
    if n_heads % n_kv:
        raise ValueError(f"the query heads ({n_heads}) must split evenly over the key/value heads ({n_kv})")
    return np.repeat(x, n_heads // n_kv, axis=-3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., H, T, d_head) -> (..., T, H * d_head): the concatenation of the heads."""
    x = np.swapaxes(x, -3, -2)  # (..., T, H, d_head)
    *lead, t, h, d = x.shape
    return x.reshape(*lead, t, h * d)


def multi_head_attention(
    x_query: np.ndarray,
    x_key: np.ndarray,
    x_value: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    n_heads: int,
    *,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
    mask: np.ndarray | None = None,
    scale: bool = True,
) -> dict[str, np.ndarray]:
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O, head_i = Attention(X W^Q_i, X W^K_i, X W^V_i).

    Weights follow the math: x @ W with W shaped (d_in, d_out). The per-head matrices W^Q_i are the
    column blocks of w_q (d_model, H * d_k), which is how every real implementation stores them.
    mask broadcasts to (..., H, T_q, T_k); a (T_q, T_k) mask applies to every head.
    Returns every intermediate by name, so the learn page can show each step.
    """

    def project(x, w, b):
        y = x @ w
        return y if b is None else y + b

    # The learn page's step numbers. 2) project: one matrix product for all heads, then split
    query = split_heads(project(x_query, w_q, b_q), n_heads)  # (..., H, T_q, d_k)
    key = split_heads(project(x_key, w_k, b_k), n_heads)  # (..., H, T_k, d_k)
    value = split_heads(project(x_value, w_v, b_v), n_heads)  # (..., H, T_k, d_v)
    # 3) to 6) scores, scale, mask + softmax, weighted sum: every head at once
    steps = attention_steps(query, key, value, mask, scale=scale)
    # 7) merge heads + output projection
    concat = merge_heads(steps["context"])  # (..., T_q, H * d_v)
    output = project(concat, w_o, b_o)  # (..., T_q, d_model)
    return {"query": query, "key": key, "value": value, **steps, "concat": concat, "output": output}


# ---- masks: boolean (T_q, T_k), True = may attend ------------------------------------------


def padding_mask(valid: np.ndarray) -> np.ndarray:
    """valid (..., T_k) booleans (False = padding) -> (..., 1, T_k): no query attends to padding."""
    return np.asarray(valid, dtype=bool)[..., None, :]


def causal_mask(t: int, past: int = 0) -> np.ndarray:
    """Each position sees itself and earlier positions (decoders such as GPT): (t, past + t), for t
    new positions after `past` earlier ones whose keys are cached (new position i is position
    past + i, and sees keys 0 .. past + i)."""
    return np.tri(t, past + t, k=past, dtype=bool)


def after_cached(cached: np.ndarray, new: np.ndarray) -> np.ndarray:
    """A KV cache's keys or values (H, P, d) put in front of the new positions' (H, T, d): (H, P + T,
    d). New positions of B runs at once, (B, H, T, d), all read the same cached ones (a patching
    sweep's runs share the positions before the first word they change)."""
    return np.concatenate([np.broadcast_to(cached, (*new.shape[:-2], *cached.shape[-2:])), new], axis=-2)


def local_window_mask(t: int, width: int) -> np.ndarray:
    """Each position sees the positions within `width` of it on either side (sliding window,
    as in Longformer's local attention). width=0 means a token sees only itself."""
    if width < 0:
        raise ValueError(f"window width must be 0 or more, got {width}")
    i = np.arange(t)
    return np.abs(i[:, None] - i[None, :]) <= width


def strided_mask(t: int, stride: int) -> np.ndarray:
    """Strided sparse attention (Child et al. 2019): a query sees the previous `stride`
    positions and every earlier position whose distance is a multiple of `stride`. Causal."""
    if stride < 1:
        raise ValueError(f"stride must be 1 or more, got {stride}")
    i = np.arange(t)
    dist = i[:, None] - i[None, :]
    return (dist >= 0) & ((dist < stride) | (dist % stride == 0))


MASK_KINDS = ("none", "causal", "local", "strided")


def build_mask(kind: str, t: int, width: int = 2) -> np.ndarray | None:
    """The mask of a given kind for t tokens; `width` is the window (local) or stride (strided)."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(t)
    if kind == "local":
        return local_window_mask(t, width)
    if kind == "strided":
        return strided_mask(t, width)
    raise ValueError(f"unknown mask kind {kind!r}; choose one of {', '.join(MASK_KINDS)}")
