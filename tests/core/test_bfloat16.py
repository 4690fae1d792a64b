"""Weights held in bfloat16 (core/models/bfloat16.py), as the hosted demo holds SmolLM2's.

- The halves are torch's own bfloat16, bit for bit: random values of every scale, ties, zeros,
  subnormals; expanding them back is exact.
- A compact Llama (its weights held so, each block expanded as the forward pass reaches it) computes
  what transformers computes on the same weights rounded to bfloat16: attentions within 1e-5, logits
  within 2e-4; its cache and its generation agree with its own recomputation.
"""

from __future__ import annotations

import copy
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from transformers import LlamaForCausalLM

from core.models.bfloat16 import from_bfloat16, to_bfloat16
from core.models.llama import LlamaNumpy
from tests.tiny_llama import make_tiny_llama

ATTENTION_TOL, LOGIT_TOL = 1e-5, 2e-4


def torch_halves(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


FINITE = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, st.integers(1, 64), elements=FINITE))
def test_the_halves_are_torchs_bfloat16_bit_for_bit(values):
    if np.abs(values).max(initial=0) >= 3.389e38:  # rounds past bfloat16's largest: torch says inf
        return
    assert np.array_equal(to_bfloat16(values), torch_halves(values))


def test_rounding_on_hand_worked_values():
    # 1 + 2^-8 lies halfway between bfloat16's 1 and 1 + 2^-7: the tie goes to the even one, 1;
    # 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to the even one, 1 + 2^-6
    values = np.float32([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -2.5, 0.0, -0.0, 1e-40])
    expanded = from_bfloat16(to_bfloat16(values))
    assert expanded[:3].tolist() == [1.0, 1 + 2**-6, 1 + 2**-7]
    assert expanded[3] == -2.5 and expanded[4] == 0.0 and np.signbit(expanded[5])
    assert np.array_equal(to_bfloat16(values), torch_halves(values))


def test_a_large_table_rounds_in_pieces_as_one():
    values = np.random.default_rng(0).standard_normal((3, 700_000)).astype(np.float32)  # past 2^20 values
    halves = to_bfloat16(values)
    assert halves.shape == values.shape and np.array_equal(halves, torch_halves(values))
    assert np.array_equal(from_bfloat16(halves), torch.from_numpy(values).to(torch.bfloat16).float().numpy())


def test_non_finite_weights_are_refused():
    with pytest.raises(ValueError, match="finite"):
        to_bfloat16(np.float32([1.0, np.nan]))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A compact NumPy Llama (grouped-query, untied unembedding) and transformers on the same weights
    rounded to bfloat16 (the parameters only: RoPE's frequencies stay float32 in both)."""
    path = make_tiny_llama(tmp_path_factory.mktemp("bf16"), heads=4, kv_heads=2, tie_word_embeddings=False)
    model = LlamaForCausalLM.from_pretrained(path, attn_implementation="eager", dtype=torch.float32).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(parameter.to(torch.bfloat16).float())
    return LlamaNumpy.from_pretrained(path, compact=True), LlamaNumpy.from_pretrained(path), model


def test_a_compact_llama_computes_what_transformers_computes_on_bfloat16_weights(pair):
    compact, full, model = pair
    assert compact.token_embeddings.dtype == np.uint16 and full.token_embeddings.dtype == np.float32
    ids = np.random.default_rng(1).integers(0, compact.vocab_size, 37)
    ours = compact.forward(ids)
    with torch.no_grad():
        theirs = model(torch.tensor([ids.tolist()]), output_attentions=True)
    attentions = np.stack([a[0].numpy() for a in theirs.attentions])
    assert np.abs(ours.attentions - attentions).max() < ATTENTION_TOL
    assert np.abs(compact.unembed(ours.hidden_states[-1]) - theirs.logits[0].numpy()).max() < LOGIT_TOL
    # and it is not the float32 model: the rounding is there to see
    assert np.abs(ours.attentions - full.forward(ids).attentions).max() > 1e-4
    # the weights the pages show are float32, expanded from the halves
    shown = compact.block_weights(1)
    assert shown.w_q.dtype == np.float32
    assert np.array_equal(shown.w_q, from_bfloat16(to_bfloat16(full.block_weights(1).w_q)))


def test_a_compact_llamas_cache_and_generation_agree_with_recomputing(pair):
    compact = pair[0]
    cached, recomputed = (
        compact.generate("the cat sat", 6),
        compact.generate("the cat sat", 6, use_cache=False),
    )
    assert [s.token_id for s in cached.steps] == [s.token_id for s in recomputed.steps]
    for a, b in zip(cached.steps, recomputed.steps, strict=True):
        np.testing.assert_allclose([p for _, p in a.top], [p for _, p in b.top], atol=1e-5)
        np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-5)


def test_a_compact_llama_runs_at_most_two_passes_at_once(pair):
    """Compact is for a small shared server: a third session's pass waits, so that its memory is not
    added (each pass holds a block's expanded weights)."""
    compact = pair[0]
    inside, most, lock = [0], [0], threading.Lock()

    class Watched(LlamaNumpy):
        def block_weights(self, i):
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            threading.Event().wait(0.02)  # stay a moment, so that other passes would pile up here
            with lock:
                inside[0] -= 1
            return super().block_weights(i)

    watched = copy.copy(compact)
    watched.__class__ = Watched
    ids = np.arange(12) % compact.vocab_size
    with ThreadPoolExecutor(6) as pool:
        outs = list(pool.map(lambda _: watched.forward(ids).attentions, range(6)))
    assert 1 <= most[0] <= 2
    for out in outs:
        np.testing.assert_array_equal(out, outs[0])
