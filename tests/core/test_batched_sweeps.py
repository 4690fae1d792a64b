"""The batched sweeps on a NumPy decoder (core/measures/sweep.py) against plain loops written here, one
run at a time with the engine's own `ablate` or a shortened input, within 1e-5, on tiny GPT-2 and
Llama checkpoints: the ablation grid (each head zeroed, a layer's runs batched through the later
blocks, the last rows unembedded together) and leave-one-out (the T runs of T - 1 tokens batched
through every block), whole and cut into smaller batches; and the progress both report."""

from __future__ import annotations

import numpy as np
import pytest

from core.lesson.attention import softmax
from core.measures import sweep
from core.measures.ablation import head_effects
from core.measures.attribution import attribution, leave_one_out
from core.models.architectures import load_engine
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

pytest.importorskip("torch")  # the stand-ins are built with transformers
TEXT = "the trophy would not fit in the suitcase because it was too big"


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def engine(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"sweeps-{request.param}")
    if request.param == "gpt2":
        return load_engine(str(make_tiny_gpt2(folder, n_layer=3, n_head=4, n_embd=32)))
    return load_engine(str(make_tiny_llama(folder, layers=3, heads=4, kv_heads=2)))


def next_token_probs(engine, ids, ablate=()) -> np.ndarray:
    """The next-token distribution after ids, from one whole forward pass of the engine."""
    final = engine.forward(np.asarray(ids), ablate=ablate).hidden_states[-1, -1]
    return softmax(engine.unembed(final).astype(np.float64))


def shift(p: np.ndarray, q: np.ndarray) -> float:
    return 0.5 * float(np.abs(p - q).sum())


@pytest.mark.parametrize("runs_at_once", [None, 3, 1])  # the product's batches; 3 + 1 heads; one by one
def test_the_batched_ablation_grid_is_the_runs_one_at_a_time(engine, runs_at_once, monkeypatch):
    result = engine.run(TEXT)
    if runs_at_once is not None:
        monkeypatch.setattr(sweep, "BATCH_ROWS", runs_at_once * result.n_tokens)
    reference = next_token_probs(engine, result.input_ids)
    expected = [
        [shift(next_token_probs(engine, result.input_ids, [(layer, head)]), reference) for head in range(4)]
        for layer in range(3)
    ]
    seen = []
    found = head_effects(engine, result, progress=lambda *done: seen.append(done))
    np.testing.assert_allclose(found, expected, atol=1e-5)
    assert np.min(expected) > 1e-4  # every head moves the answer: a zero would match anything
    assert seen == [(i, 12) for i in range(1, 13)]


@pytest.mark.parametrize("runs_at_once", [None, 5, 1])
def test_batched_leave_one_out_is_the_runs_one_at_a_time(engine, runs_at_once, monkeypatch):
    result = engine.run(TEXT)
    if runs_at_once is not None:
        monkeypatch.setattr(sweep, "BATCH_ROWS", runs_at_once * (result.n_tokens - 1))
    ids = np.asarray(result.input_ids)
    reference = next_token_probs(engine, ids)
    expected = [shift(next_token_probs(engine, np.delete(ids, j)), reference) for j in range(len(ids))]
    seen = []
    found = leave_one_out(engine, result, progress=lambda *done: seen.append(done))
    np.testing.assert_allclose(found, expected, atol=1e-5)
    assert np.min(expected) > 1e-4
    assert seen == [(i, len(ids)) for i in range(1, len(ids) + 1)]
    seen.clear()
    np.testing.assert_allclose(attribution(engine, result, lambda *d: seen.append(d)).loo, found, atol=1e-12)
    assert seen[-1] == (len(ids), len(ids))
