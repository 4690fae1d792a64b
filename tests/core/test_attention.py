"""core.lesson.attention against PyTorch in float64 (random shapes, every mask kind), hand-worked cases,
and properties that must hold for any input (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.lesson.attention import (
    FullyMaskedRowError,
    after_cached,
    attention_steps,
    build_mask,
    causal_mask,
    local_window_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
    split_heads,
    strided_mask,
)

TOL = 1e-10  # float64 parity


def t64(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


def random_case(rng, lead=(2, 3), t_q=5, t_k=7, d_k=4, d_v=6):
    q = rng.standard_normal((*lead, t_q, d_k))
    k = rng.standard_normal((*lead, t_k, d_k))
    v = rng.standard_normal((*lead, t_k, d_v))
    return q, k, v


# ---- softmax -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_softmax_matches_torch(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4, 9)) * 10
    for axis in (-1, 0, 1):
        np.testing.assert_allclose(softmax(x, axis=axis), F.softmax(t64(x), dim=axis).numpy(), atol=TOL)


def test_softmax_is_stable_on_huge_scores():
    p = softmax(np.array([1000.0, 1000.0, -1000.0]))
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p, [0.5, 0.5, 0.0], atol=1e-12)


def test_softmax_hand_worked():
    # softmax([2, 4, 6]) = e^{2,4,6} / (e^2 + e^4 + e^6)
    e = np.exp([2.0, 4.0, 6.0])
    np.testing.assert_allclose(softmax(np.array([2.0, 4.0, 6.0])), e / e.sum(), atol=1e-15)
    np.testing.assert_allclose(
        softmax(np.array([2.0, 4.0, 6.0])), [0.01587624, 0.11731043, 0.86681333], atol=1e-8
    )


# ---- scaled dot-product attention ----------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_sdpa_matches_torch_unmasked(seed):
    rng = np.random.default_rng(seed)
    t_q, t_k, d_k, d_v = rng.integers(1, 12, size=4)
    q, k, v = random_case(rng, lead=(int(rng.integers(1, 4)),), t_q=t_q, t_k=t_k, d_k=d_k, d_v=d_v)
    context, probs = scaled_dot_product_attention(q, k, v)
    expected = F.scaled_dot_product_attention(t64(q), t64(k), t64(v)).numpy()
    np.testing.assert_allclose(context, expected, atol=TOL)
    ref_probs = F.softmax(t64(q) @ t64(k).transpose(-1, -2) / np.sqrt(d_k), dim=-1).numpy()
    np.testing.assert_allclose(probs, ref_probs, atol=TOL)
    assert context.shape == (*q.shape[:-1], d_v) and probs.shape == (*q.shape[:-1], t_k)


def _mask_for(kind, t, rng):
    if kind == "padding":
        valid = np.ones(t, dtype=bool)
        valid[int(rng.integers(1, t + 1)) :] = False  # keep at least the first key
        return padding_mask(valid)
    return build_mask(kind, t, width=int(rng.integers(1, 4)))


@pytest.mark.parametrize("kind", ["padding", "causal", "local", "strided"])
@pytest.mark.parametrize("seed", range(4))
def test_sdpa_matches_torch_with_masks(kind, seed):
    rng = np.random.default_rng(100 + seed)
    t = int(rng.integers(2, 13))
    q, k, v = random_case(rng, lead=(2, 3), t_q=t, t_k=t, d_k=int(rng.integers(1, 9)), d_v=5)
    mask = _mask_for(kind, t, rng)
    context, probs = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(
        t64(q), t64(k), t64(v), attn_mask=torch.from_numpy(mask)
    ).numpy()
    np.testing.assert_allclose(context, expected, atol=TOL)
    assert np.all(probs[..., ~np.broadcast_to(mask, probs.shape[-2:])] == 0.0)


def test_causal_matches_torch_is_causal():
    rng = np.random.default_rng(7)
    q, k, v = random_case(rng, t_q=6, t_k=6)
    context, _ = scaled_dot_product_attention(q, k, v, causal_mask(6))
    expected = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), is_causal=True).numpy()
    np.testing.assert_allclose(context, expected, atol=TOL)


def test_unscaled_is_plain_dot_product():
    rng = np.random.default_rng(3)
    q, k, v = random_case(rng)
    _, probs = scaled_dot_product_attention(q, k, v, scale=False)
    np.testing.assert_allclose(probs, F.softmax(t64(q) @ t64(k).transpose(-1, -2), dim=-1).numpy(), atol=TOL)


def test_attention_steps_keep_every_step_and_the_masked_scores():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    plain = attention_steps(q, k, v)
    assert list(plain) == ["scores", "scaled", "probs", "context"]  # no "masked" without a mask
    steps = attention_steps(q, k, v, causal_mask(5))
    assert list(steps) == ["scores", "scaled", "masked", "probs", "context"]
    np.testing.assert_allclose(steps["scores"], q @ np.swapaxes(k, -1, -2), atol=TOL)
    np.testing.assert_allclose(steps["scaled"], steps["scores"] / 2, atol=TOL)  # sqrt(d_k) = 2
    upper = ~causal_mask(5)
    assert np.all(steps["masked"][:, upper] == -np.inf)
    np.testing.assert_array_equal(steps["masked"][:, ~upper], steps["scaled"][:, ~upper])
    assert np.all(steps["probs"][:, upper] == 0)
    context, probs = scaled_dot_product_attention(q, k, v, causal_mask(5))
    np.testing.assert_array_equal(steps["probs"], probs)
    np.testing.assert_array_equal(steps["context"], context)


def test_fully_masked_row_is_a_clear_error_not_nan():
    q = np.ones((2, 3))
    mask = np.array([[True, False], [False, False]])
    with pytest.raises(FullyMaskedRowError, match="no key to attend to"):
        scaled_dot_product_attention(q, q, q, mask)


def test_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="same last dimension"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="same number of positions"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 3)))


def test_sdpa_hand_worked_two_tokens():
    # One query [1, 0] against keys [1, 0] and [0, 1]; d_k = 2, so scores / sqrt 2 = [1/√2, 0].
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[10.0], [20.0]])
    context, probs = scaled_dot_product_attention(q, k, v)
    w = 1 / (1 + np.exp(-1 / np.sqrt(2)))  # softmax of two = sigmoid of the difference
    np.testing.assert_allclose(probs, [[w, 1 - w]], atol=1e-15)
    np.testing.assert_allclose(context, [[10 * w + 20 * (1 - w)]], atol=1e-12)


# ---- masks ---------------------------------------------------------------------------------


def test_mask_shapes_by_hand():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    # two new positions after three cached ones (a KV cache): positions 3 and 4 of 5
    np.testing.assert_array_equal(causal_mask(2, past=3), [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(
        local_window_mask(4, 1), [[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]]
    )
    # stride 2: the previous position and every even distance back
    np.testing.assert_array_equal(
        strided_mask(5, 2),
        [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [1, 0, 1, 1, 1]],
    )
    assert build_mask("none", 4) is None
    with pytest.raises(ValueError, match="unknown mask kind"):
        build_mask("banana", 3)


@pytest.mark.parametrize("kind", ["causal", "local", "strided"])
@given(t=st.integers(1, 40), width=st.integers(1, 6))
def test_every_mask_kind_leaves_each_query_a_key(kind, t, width):
    mask = build_mask(kind, t, width)
    assert mask.shape == (t, t) and mask.diagonal().all()


# ---- heads ---------------------------------------------------------------------------------


def test_split_and_merge_heads_round_trip():
    x = np.arange(2 * 5 * 12, dtype=float).reshape(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(heads[0, 1, 2], x[0, 2, 4:8])  # head 1 owns columns 4..7
    np.testing.assert_array_equal(merge_heads(heads), x)
    with pytest.raises(ValueError, match="divisible"):
        split_heads(x, 5)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("use_bias", [False, True])
def test_multi_head_matches_torch_multihead_attention(seed, use_bias):
    rng = np.random.default_rng(seed)
    n_heads = int(rng.integers(1, 5))
    d_model = n_heads * int(rng.integers(1, 6))
    t = int(rng.integers(1, 10))
    x = rng.standard_normal((t, d_model))
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=use_bias, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    # torch stores in_proj_weight as (3 d_model, d_model) in (d_out, d_in): transpose once to x @ W.
    w_q, w_k, w_v = (w.T for w in np.split(mha.in_proj_weight.detach().numpy(), 3))
    w_o = mha.out_proj.weight.detach().numpy().T
    biases = {}
    if use_bias:
        b_q, b_k, b_v = np.split(mha.in_proj_bias.detach().numpy(), 3)
        biases = {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": mha.out_proj.bias.detach().numpy()}
    for mask in (None, causal_mask(t)):
        ours = multi_head_attention(x, x, x, w_q, w_k, w_v, w_o, n_heads, mask=mask, **biases)
        torch_mask = None if mask is None else torch.from_numpy(~mask)  # torch: True = may NOT attend
        out, weights = mha(
            t64(x)[None], t64(x)[None], t64(x)[None], attn_mask=torch_mask, average_attn_weights=False
        )
        np.testing.assert_allclose(ours["output"], out[0].detach().numpy(), atol=TOL)
        np.testing.assert_allclose(ours["probs"], weights[0].detach().numpy(), atol=TOL)


# ---- properties ----------------------------------------------------------------------------

finite = st.floats(-50, 50, allow_nan=False, width=64)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    t=st.integers(1, 8),
    d_k=st.integers(1, 6),
    kind=st.sampled_from(["none", "causal", "local", "strided"]),
)
def test_rows_sum_to_one_and_masked_entries_are_zero(data, t, d_k, kind):
    q = data.draw(arrays(np.float64, (t, d_k), elements=finite))
    k = data.draw(arrays(np.float64, (t, d_k), elements=finite))
    v = data.draw(arrays(np.float64, (t, 3), elements=finite))
    mask = build_mask(kind, t, 2)
    context, probs = scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, atol=1e-12)
    assert np.all(probs >= 0)
    if mask is not None:
        assert np.all(probs[~mask] == 0.0)
    # each context row is a convex mix of value rows: it stays inside their range
    assert np.all(context <= v.max(axis=0) + 1e-9) and np.all(context >= v.min(axis=0) - 1e-9)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.integers(2, 8), n_heads=st.integers(1, 3), d_head=st.integers(1, 4))
def test_permuting_tokens_permutes_the_output(data, t, n_heads, d_head):
    """With no positional encoding, self-attention is permutation-equivariant."""
    d = n_heads * d_head
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((t, d))
    ws = [rng.standard_normal((d, d)) for _ in range(4)]
    perm = np.array(data.draw(st.permutations(range(t))))
    out = multi_head_attention(x, x, x, *ws, n_heads)
    out_p = multi_head_attention(x[perm], x[perm], x[perm], *ws, n_heads)
    np.testing.assert_allclose(out_p["output"], out["output"][perm], atol=1e-9)
    np.testing.assert_allclose(out_p["probs"], out["probs"][:, perm][:, :, perm], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.integers(1, 6), d_k=st.integers(1, 6), c=st.floats(-20, 20, allow_nan=False))
def test_scaling_invariants(data, t, d_k, c):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q, k, v = rng.standard_normal((t, d_k)), rng.standard_normal((t, d_k)), rng.standard_normal((t, 2))
    _, probs = scaled_dot_product_attention(q, k, v)
    # Scaling is the same as shrinking the queries by sqrt(d_k) and not scaling.
    _, unscaled = scaled_dot_product_attention(q / np.sqrt(d_k), k, v, scale=False)
    np.testing.assert_allclose(probs, unscaled, atol=1e-12)
    # Adding the same vector to every key shifts each row's scores by one constant: probs unchanged.
    shift = np.full(d_k, c)
    _, shifted = scaled_dot_product_attention(q, k + shift, v)
    np.testing.assert_allclose(shifted, probs, atol=1e-9)


def test_after_cached_puts_the_cache_in_front_of_every_run():
    cached, new = (
        np.arange(12.0).reshape(2, 3, 2),
        -np.arange(24.0).reshape(3, 2, 2, 2),
    )  # (H, P, d), (B, H, T, d)
    joined = after_cached(cached, new)
    assert joined.shape == (3, 2, 5, 2)
    for run in range(3):
        np.testing.assert_array_equal(joined[run], np.concatenate([cached, new[run]], axis=1))
    np.testing.assert_array_equal(after_cached(cached, new[0]), np.concatenate([cached, new[0]], axis=1))
