"""The price of one more token (core/cost/generation.py): the cache's size by hand and against the
arrays a forward pass really keeps; the curves' lengths on a tiny GPT-2 (no timing thresholds: the
machine is noisy; that a cached step computes what recomputing does is tests/core/test_gpt2.py's)."""

from __future__ import annotations

import numpy as np
import pytest

from core.cost.generation import cache_megabytes, cache_numbers, next_token_curves
from core.models.gpt2 import GPT2Numpy
from core.models.llama import LlamaNumpy
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    path = make_tiny_gpt2(
        tmp_path_factory.mktemp("cost_gpt2"), n_layer=2, n_head=4, n_embd=32, n_positions=64
    )
    return GPT2Numpy.from_pretrained(path)


def test_cache_size_by_hand_and_as_the_forward_pass_keeps_it(engine):
    assert cache_numbers(12, 12, 64, 1024) == 2 * 12 * 12 * 64 * 1024  # gpt2 at its full context
    out = engine.forward(np.arange(10))
    kept = sum(key.size + value.size for key, value in out.cache)
    assert kept == cache_numbers(engine.n_layers, engine.n_heads, engine.head_size, 10)
    assert cache_megabytes(engine, 10) == pytest.approx(kept * 4 / 10**6)  # MB, not MiB (2**20 bytes)


def test_a_grouped_query_cache_holds_its_key_value_heads_only(tmp_path):
    """4 query heads sharing 2 key/value heads: the cache the engine keeps is half a full one's."""
    llama = LlamaNumpy.from_pretrained(make_tiny_llama(tmp_path, layers=2, heads=4, kv_heads=2, width=32))
    out = llama.forward(np.arange(10))
    kept = sum(key.size + value.size for key, value in out.cache)
    assert kept == cache_numbers(2, 2, 8, 10) == 2 * 2 * 2 * 8 * 10
    assert cache_megabytes(llama, 10) == pytest.approx(kept * 4 / 10**6)
    assert cache_megabytes(llama, 10, kv_heads=llama.n_heads) == pytest.approx(2 * cache_megabytes(llama, 10))


def test_curves_cover_the_contexts_that_fit(engine):
    cached, recomputed = next_token_curves(engine, contexts=(4, 16, 63, 64, 200), repeats=1)
    assert cached.lengths == recomputed.lengths == (4, 16, 63)  # 64 + 1 positions do not fit in 64
    assert all(s > 0 for s in cached.seconds + recomputed.seconds)
    assert cached.name != recomputed.name and np.isfinite(cached.exponent)
