"""The Llama family's steps from core/lesson/, each against PyTorch on random inputs and against a
case worked by hand: RMSNorm, SiLU and the SwiGLU feed-forward, RoPE (a rotation in each plane, and
a score that depends on the distance between two tokens only), and grouped-query attention's
sharing of key/value heads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb, repeat_kv

from core.lesson.attention import share_kv_heads
from core.lesson.layers import rms_norm, silu, swiglu_feed_forward
from core.lesson.rope import pair_score, rope_tables, rotate

RNG = np.random.default_rng(0)


def test_rms_norm_matches_transformers_and_a_hand_worked_case():
    x = RNG.normal(size=(5, 12)).astype(np.float32)
    gamma = RNG.uniform(0.5, 1.5, 12).astype(np.float32)
    norm = LlamaRMSNorm(12, eps=1e-6)
    with torch.no_grad():
        norm.weight.copy_(torch.from_numpy(gamma))
        expected = norm(torch.from_numpy(x)).numpy()
    assert np.abs(rms_norm(x, gamma, 1e-6) - expected).max() < 1e-6
    # (3, 4): mean square (9 + 16) / 2 = 12.5, root 3.5355; no mean is taken away
    assert np.allclose(rms_norm(np.array([3.0, 4.0]), eps=0.0), [3 / math.sqrt(12.5), 4 / math.sqrt(12.5)])


def test_silu_and_swiglu_match_torch():
    x = RNG.normal(size=(4, 8)).astype(np.float32) * 4
    assert np.abs(silu(x) - torch.nn.functional.silu(torch.from_numpy(x)).numpy()).max() < 1e-6
    assert silu(np.array([-1000.0, 0.0]))[1] == 0.0 and abs(silu(np.array([-1000.0]))[0]) < 1e-300
    gate, up, down = (RNG.normal(size=s).astype(np.float32) for s in ((8, 16), (8, 16), (16, 8)))
    t = [torch.from_numpy(a) for a in (x, gate, up, down)]
    expected = ((torch.nn.functional.silu(t[0] @ t[1]) * (t[0] @ t[2])) @ t[3]).numpy()
    assert np.allclose(swiglu_feed_forward(x, gate, up, down), expected, rtol=1e-5, atol=1e-4)  # values ~400


def test_rope_matches_transformers():
    d_head, base, positions = 16, 10000.0, np.arange(7, 18)
    q = RNG.normal(size=(3, len(positions), d_head)).astype(np.float32)
    k = RNG.normal(size=(3, len(positions), d_head)).astype(np.float32)
    cos, sin = rope_tables(positions, d_head, base)
    tq, tk = apply_rotary_pos_emb(
        torch.from_numpy(q)[None],
        torch.from_numpy(k)[None],
        torch.from_numpy(cos)[None],
        torch.from_numpy(sin)[None],
    )
    assert np.abs(rotate(q, cos, sin) - tq[0].numpy()).max() < 1e-5
    assert np.abs(rotate(k, cos, sin) - tk[0].numpy()).max() < 1e-5


def test_rope_turns_each_plane_by_position_times_frequency():
    # d_head 2: one plane at frequency 1; position 3 turns (1, 0) by 3 radians
    cos, sin = rope_tables(np.array([3]), 2, 10000.0)
    assert np.allclose(rotate(np.array([[1.0, 0.0]]), cos, sin), [[math.cos(3), math.sin(3)]], atol=1e-6)
    # d_head 4, base 100: plane (0, 2) turns at 1 radian a position, plane (1, 3) at 100^(-2/4) = 0.1
    # (dimension i pairs with i + 2); position 5 turns the second plane by 0.5
    cos, sin = rope_tables(np.array([5]), 4, 100.0)
    turned = rotate(np.array([[0.0, 1.0, 0.0, 0.0]]), cos, sin)[0]
    assert np.allclose(turned, [0.0, math.cos(0.5), 0.0, math.sin(0.5)], atol=1e-6)
    # a rotation keeps every vector's length
    x = RNG.normal(size=(9, 8))
    assert np.allclose(
        np.linalg.norm(rotate(x, *rope_tables(np.arange(9), 8, 1e4)), axis=-1), np.linalg.norm(x, axis=-1)
    )


@pytest.mark.parametrize("shift", [1, 17, 200])
def test_a_rotated_score_depends_on_the_distance_only(shift):
    q, k = RNG.normal(size=32).astype(np.float32), RNG.normal(size=32).astype(np.float32)
    assert pair_score(q, k, 9, 4, 1e4) == pytest.approx(pair_score(q, k, 9 + shift, 4 + shift, 1e4), abs=1e-5)
    assert pair_score(q, k, 9, 4, 1e4) != pytest.approx(pair_score(q, k, 9, 4 + shift, 1e4), abs=1e-3)
    # what the learn page's RoPE stop computes is transformers' rotation, then the scaled dot product
    cos, sin = rope_tables(np.array([9 + shift, 4]), 32, 1e4)
    turned_q, turned_k = apply_rotary_pos_emb(
        torch.from_numpy(q[None, None, None]).expand(1, 1, 2, 32),
        torch.from_numpy(k[None, None, None]).expand(1, 1, 2, 32),
        torch.from_numpy(cos)[None],
        torch.from_numpy(sin)[None],
    )
    expected = float(turned_q[0, 0, 0] @ turned_k[0, 0, 1]) / math.sqrt(32)
    assert pair_score(q, k, 9 + shift, 4, 1e4) == pytest.approx(expected, abs=1e-5)


def test_grouped_query_heads_share_as_transformers_repeats_them():
    kv = RNG.normal(size=(3, 5, 4)).astype(np.float32)  # 3 key/value heads
    shared = share_kv_heads(kv, 9)  # 9 query heads: groups of 3
    assert np.array_equal(shared, repeat_kv(torch.from_numpy(kv)[None], 3)[0].numpy())
    assert all(np.array_equal(shared[h], kv[h // 3]) for h in range(9))
    with pytest.raises(ValueError, match="split evenly"):
        share_kv_heads(kv, 4)
