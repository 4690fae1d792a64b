"""Ablation and leave-one-out on a decoder (core/measures/ablation.py, attribution.py): the output is
the next-token distribution after the text, an effect its total variation distance. Checked against
transformers' GPT2LMHeadModel driven by hand here (head_mask-free: the heads are zeroed by editing
c_proj's input in a copy of the weights), and the NumPy engine's restart against a full rerun."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.measures.ablation import ablated_last_hidden, head_effects, model_output, total_variation
from core.measures.attribution import attribution, leave_one_out
from core.models.architectures import load_engine, load_torch_engine
from tests.tiny_gpt2 import make_tiny_gpt2

TEXT = "the cat sat on the mat because it was warm"


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp("measures_gpt2"), n_layer=3, n_head=4, n_embd=32)


@pytest.fixture(scope="module")
def engines(gpt2_dir):
    return load_engine(str(gpt2_dir)), load_torch_engine(str(gpt2_dir))


def _next_token_probs(model, ids, cut=()) -> np.ndarray:
    """transformers' next-token distribution after ids, with heads zeroed by scaling c_proj's rows
    (the heads' d_k input rows of W^O) to zero in the model itself, restored afterwards."""
    d_k = model.config.n_embd // model.config.n_head
    saved = {}
    with torch.no_grad():
        for layer, head in cut:
            weight = model.transformer.h[layer].attn.c_proj.weight  # Conv1D: (d_in, d_out), x @ W
            saved.setdefault(layer, weight.clone())
            weight[head * d_k : (head + 1) * d_k] = 0.0
        logits = model(torch.tensor([list(ids)])).logits[0, -1].double()
        for layer, weight in saved.items():
            model.transformer.h[layer].attn.c_proj.weight.copy_(weight)
    return torch.softmax(logits, -1).numpy()


def test_total_variation_by_hand():
    assert total_variation(np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])) == pytest.approx(0.5)
    assert total_variation(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 0.0


def test_head_effects_are_the_next_token_distributions_moving(engines):
    numpy_engine, torch_engine = engines
    result = numpy_engine.run(TEXT)
    grid = head_effects(numpy_engine, result)
    ids = result.input_ids
    reference = _next_token_probs(torch_engine.model, ids)
    np.testing.assert_allclose(model_output(numpy_engine, result.hidden_states[-1]), reference, atol=1e-6)
    expected = np.array(
        [
            [
                total_variation(_next_token_probs(torch_engine.model, ids, [(layer, head)]), reference)
                for head in range(4)
            ]
            for layer in range(3)
        ]
    )
    np.testing.assert_allclose(grid, expected, atol=1e-6)
    assert grid.max() > 0.0
    np.testing.assert_allclose(head_effects(torch_engine, torch_engine.run(TEXT)), grid, atol=1e-6)


def test_the_restart_equals_a_full_rerun(engines):
    numpy_engine, _ = engines
    result = numpy_engine.run(TEXT)
    heads = [(1, 2), (2, 0)]
    full = numpy_engine.hidden_states(result.input_ids, ablate=heads)[-1]
    np.testing.assert_allclose(ablated_last_hidden(numpy_engine, result, heads), full, atol=1e-6)


def test_leave_one_out_on_a_decoder_against_transformers(engines):
    numpy_engine, torch_engine = engines
    result = numpy_engine.run(TEXT)
    ids = np.asarray(result.input_ids)
    reference = _next_token_probs(torch_engine.model, ids)
    expected = [
        total_variation(_next_token_probs(torch_engine.model, np.delete(ids, j)), reference)
        for j in range(len(ids))
    ]
    np.testing.assert_allclose(leave_one_out(numpy_engine, result), expected, atol=1e-6)
    np.testing.assert_allclose(leave_one_out(torch_engine, torch_engine.run(TEXT)), expected, atol=1e-6)


def test_attribution_reads_the_last_row_and_has_no_norms(engines):
    numpy_engine, _ = engines
    result = numpy_engine.run(TEXT)
    found = attribution(numpy_engine, result)
    assert set(found.columns) == {"attention", "rollout"}  # GPT-2 has no layer_weights: no norms
    np.testing.assert_allclose(
        found.columns["attention"], result.attentions[-1, :, -1].mean(axis=0), atol=1e-7
    )
