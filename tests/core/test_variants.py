"""The efficient attention variants against independent loop-based computations (one query at a
time, math.exp, the patterns written as predicates), the sparse ones against PyTorch's masked
attention too, linear attention's two orders against each other, and the properties every variant
keeps: rows of non-negative weights summing to 1, exactly 0 where a pattern hides a key."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.cost.variants import (
    VARIANTS,
    RowKeys,
    Variant,
    bigbird,
    bigbird_mask,
    full,
    linear,
    linformer,
    longformer,
    longformer_mask,
    performer,
    strided,
    strided_mask,
    window,
)

torch = pytest.importorskip("torch")

T, D = 13, 8
GLOBAL = (0, T - 1)  # [CLS] and [SEP]


def qkv(seed: int = 0, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((T, D)) * scale for _ in range(3))


def loop_softmax_attention(q, k, v, visible) -> tuple[np.ndarray, np.ndarray]:
    """One query at a time: exp of the scaled scores over the keys `visible(i, j)` allows."""
    n, d = len(q), q.shape[1]
    weights = np.zeros((n, len(k)))
    for i in range(n):
        scores = {
            j: sum(q[i, c] * k[j, c] for c in range(d)) / math.sqrt(d) for j in range(len(k)) if visible(i, j)
        }
        top = max(scores.values())
        total = sum(math.exp(s - top) for s in scores.values())
        for j, s in scores.items():
            weights[i, j] = math.exp(s - top) / total
    return weights @ v, weights


def loop_kernel_attention(q_features, k_features, v) -> tuple[np.ndarray, np.ndarray]:
    """A_ij = φ(q_i)·φ(k_j) / Σ_m φ(q_i)·φ(k_m), one pair at a time; output Σ_j A_ij v_j."""
    n = len(q_features)
    weights = np.zeros((n, len(k_features)))
    for i in range(n):
        row = [float(np.dot(q_features[i], k_features[j])) for j in range(len(k_features))]
        weights[i] = np.array(row) / sum(row)
    return weights @ v, weights


def assert_attention_matrix(weights, hidden=None) -> None:
    assert (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    if hidden is not None:
        assert (weights[hidden] == 0).all()  # exactly, not nearly


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_full_matches_torch_and_the_loop(seed):
    q, k, v = qkv(seed)
    output, weights = full(q, k, v)
    theirs = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)))
    np.testing.assert_allclose(output, theirs.numpy(), atol=1e-12)
    loop_out, loop_w = loop_softmax_attention(q, k, v, lambda i, j: True)
    np.testing.assert_allclose(weights, loop_w, atol=1e-12)
    np.testing.assert_allclose(output, loop_out, atol=1e-12)


SPARSE = {
    "window": (lambda q, k, v: window(q, k, v, 2), lambda i, j: abs(i - j) <= 2),
    "strided": (lambda q, k, v: strided(q, k, v, 4), lambda i, j: i // 4 == j // 4 or j % 4 == 3),
    "longformer": (
        lambda q, k, v: longformer(q, k, v, 1, GLOBAL),
        lambda i, j: abs(i - j) <= 1 or i in GLOBAL or j in GLOBAL,
    ),
}


@pytest.mark.parametrize("name", list(SPARSE))
@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_variants_match_the_loop_and_torch(name, seed):
    variant, visible = SPARSE[name]
    q, k, v = qkv(seed)
    output, weights = variant(q, k, v)
    loop_out, loop_w = loop_softmax_attention(q, k, v, visible)
    np.testing.assert_allclose(weights, loop_w, atol=1e-12)
    np.testing.assert_allclose(output, loop_out, atol=1e-12)
    mask = np.array([[visible(i, j) for j in range(T)] for i in range(T)])
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(mask)
    )
    np.testing.assert_allclose(output, theirs.numpy(), atol=1e-12)
    assert_attention_matrix(weights, ~mask)


def test_patterns():
    assert (strided_mask(T, 1) == np.ones((T, T), bool)).all()  # every position its block's summary
    assert longformer_mask(T, 0, ())[np.arange(T), np.arange(T)].all()
    assert (longformer_mask(T, 0, ()) == np.eye(T, dtype=bool)).all()
    q, k, v = qkv(5)
    np.testing.assert_allclose(window(q, k, v, T - 1)[0], full(q, k, v)[0], atol=1e-12)  # the whole row
    with pytest.raises(ValueError, match="stride"):
        strided_mask(T, 0)


def test_bigbird_adds_seeded_random_keys():
    base = longformer_mask(T, 1, GLOBAL)
    mask = bigbird_mask(T, 1, 2, GLOBAL, seed=7)
    assert (mask >= base).all()
    extra = (mask & ~base).sum(axis=1)
    hidden = (~base).sum(axis=1)
    np.testing.assert_array_equal(extra, np.minimum(2, hidden))  # two more keys per row where possible
    assert (bigbird_mask(T, 1, 2, GLOBAL, seed=7) == mask).all()
    assert (bigbird_mask(T, 1, 2, GLOBAL, seed=8) != mask).any()
    q, k, v = qkv(3)
    output, weights = bigbird(q, k, v, 1, 2, GLOBAL, seed=7)
    loop_out, loop_w = loop_softmax_attention(q, k, v, lambda i, j: mask[i, j])
    np.testing.assert_allclose(weights, loop_w, atol=1e-12)
    np.testing.assert_allclose(output, loop_out, atol=1e-12)
    assert_attention_matrix(weights, ~mask)


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_attention_two_orders_agree(seed):
    q, k, v = qkv(seed)
    output, weights = linear(q, k, v)

    def phi(x):
        return np.array([[c + 1 if c > 0 else math.exp(c) for c in row] for row in x])

    loop_out, loop_w = loop_kernel_attention(phi(q), phi(k), v)  # the quadratic order, pair by pair
    np.testing.assert_allclose(weights, loop_w, atol=1e-12)
    np.testing.assert_allclose(output, loop_out, atol=1e-12)  # φ(Q)(φ(K)ᵀV) = (φ(Q)φ(K)ᵀ)V, normalised
    assert_attention_matrix(weights)


def test_performer_matches_its_formula_and_nears_softmax_with_more_features():
    q, k, v = qkv(4, scale=0.5)
    output, weights = performer(q, k, v, 64, seed=3)
    w = np.random.default_rng(3).standard_normal((64, D))

    def phi(x):
        x = x / D**0.25
        return np.exp(x @ w.T - (x * x).sum(axis=1, keepdims=True) / 2) / math.sqrt(64)

    loop_out, loop_w = loop_kernel_attention(phi(q), phi(k), v)
    np.testing.assert_allclose(weights, loop_w, atol=1e-12)
    np.testing.assert_allclose(output, loop_out, atol=1e-12)
    assert_attention_matrix(weights)
    reference = full(q, k, v)[1]

    def row_tv(m: int) -> float:  # mean over 5 seeds of the mean row total variation
        return np.mean(
            [0.5 * np.abs(performer(q, k, v, m, s)[1] - reference).sum(axis=1).mean() for s in range(5)]
        )

    assert row_tv(4096) < row_tv(16) / 4 and row_tv(4096) < 0.05


def test_linformer_matches_its_formula():
    q, k, v = qkv(6)
    output, weights = linformer(q, k, v, 4, seed=2)
    e = np.random.default_rng(2).random((4, T))
    e /= e.sum(axis=1, keepdims=True)
    loop_out, probs = loop_softmax_attention(q, e @ k, e @ v, lambda i, j: True)
    np.testing.assert_allclose(output, loop_out, atol=1e-12)
    np.testing.assert_allclose(weights, probs @ e, atol=1e-12)
    np.testing.assert_allclose(weights @ v, output, atol=1e-12)  # the drawn matrix gives the output
    assert_attention_matrix(weights)


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("seed", [0, 1])
def test_output_alone_equals_the_drawn_variant(name, seed):
    """Variant.output (what the cost page times: a sparse pattern's own keys only, the linear
    order without the matrix) gives the same head output as the variant that draws its matrix."""
    rng = np.random.default_rng(seed)
    t = 37
    q, k, v = (rng.standard_normal((t, D)).astype(np.float32) for _ in range(3))
    variant = Variant(name, w=3, s=5, r=2, m=16, k=6, seed=seed, global_tokens=(0, t - 1))
    prepared = variant.prepare(t, D)
    np.testing.assert_allclose(variant.output(q, k, v, prepared), variant(q, k, v)[0], atol=2e-5)


def test_row_keys_hold_each_rows_visible_keys():
    mask = bigbird_mask(11, 1, 2, (0, 10), seed=4)
    pattern = RowKeys.of(mask, (0, 10))
    assert list(pattern.dense) == [0, 10] and list(pattern.rows) == list(range(1, 10))
    for row, index, valid in zip(pattern.rows, pattern.index, pattern.valid, strict=True):
        assert sorted(index[valid]) == list(np.flatnonzero(mask[row]))
    # a window of radius 2 without global rows: five keys a row, fewer at the edges
    pattern = RowKeys.of(window_mask := np.abs(np.subtract.outer(np.arange(8), np.arange(8))) <= 2)
    assert pattern.index.shape == (8, 5) and pattern.valid.sum() == window_mask.sum()
