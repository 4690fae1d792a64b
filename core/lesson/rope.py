"""Rotary position embeddings (RoPE; Su et al. 2021, "RoFormer"), as the Llama family applies them.

A GPT-2 adds a learned position vector to each token once, at the bottom. A Llama adds nothing: in
every layer it turns each query and key by an angle proportional to the token's position, in
d_head / 2 planes, each plane at its own frequency base^(-2i / d_head). A query at position m and a
key at position n then meet as q R(m)^T R(n) k = q R(n - m) k: their score depends on the two
vectors and on the distance n - m only, never on where the pair sits in the text.

The planes follow transformers' `rotate_half` convention: dimension i is paired with dimension
i + d_head / 2 (not with its neighbour i + 1, as llama.cpp and the paper's notation pair them;
transformers permutes a checkpoint's Q and K rows once when converting, so both compute the same
scores).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_score", "rope_tables", "rotate", "rotate_half"]


def rope_tables(positions: np.ndarray, d_head: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of every position's angle in every plane: two (T, d_head) float32 tables, each
    plane's angle written twice (dimension i and i + d_head / 2 turn together)."""
    if d_head % 2:
        raise ValueError(f"RoPE turns pairs of dimensions: the head size ({d_head}) must be even")
    frequencies = 1.0 / base ** (np.arange(0, d_head, 2, dtype=np.float32) / d_head)  # (d_head / 2,)
    angles = np.asarray(positions, dtype=np.float32)[:, None] * frequencies[None, :]  # (T, d_head / 2)
    angles = np.concatenate([angles, angles], axis=-1)  # (T, d_head)
    return np.cos(angles), np.sin(angles)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """(x_1, x_2) -> (-x_2, x_1) on the two halves of the last axis: a quarter turn in every plane."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x (..., T, d_head) turned by its positions' angles: x cos + rotate_half(x) sin, which is the
    2-D rotation (a cos - b sin, a sin + b cos) in each plane (a, b)."""
    return x * cos + rotate_half(x) * sin


def pair_score(q: np.ndarray, k: np.ndarray, query_position: int, key_position: int, base: float) -> float:
    """One query and one key (d_head,), turned to the given positions, met as attention meets them:
    their dot product / sqrt(d_head). It depends on key_position - query_position only (the module
    docstring), which the learn page's RoPE stop shows on a model's own vectors."""
    d_head = q.shape[-1]
    cos, sin = rope_tables(np.array([query_position, key_position]), d_head, base)
    turned_q = rotate(q[None], cos[:1], sin[:1])[0]
    turned_k = rotate(k[None], cos[1:], sin[1:])[0]
    return float(turned_q @ turned_k / np.sqrt(d_head))
