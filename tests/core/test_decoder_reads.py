"""The logit lens and the first-token share (core/measures/decoder_reads.py): the lens against
transformers' own ln_f and lm_head applied to its hidden states, its last row equal to the model's
prediction; the share against a loop written here and a hand-made map."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import GPT2LMHeadModel, LlamaForCausalLM

from core.measures.decoder_reads import first_token_share, logit_lens, settled_rows
from core.models.gpt2 import GPT2Numpy
from core.models.llama import LlamaNumpy
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

TEXT = "The bank approved the loan because the river was calm."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = make_tiny_gpt2(tmp_path_factory.mktemp("reads"), n_layer=3, n_head=2, n_embd=16)
    return GPT2Numpy.from_pretrained(path), GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager")


def assert_lens_equals_transformers(engine, model, final_norm) -> None:
    """The lens against `final_norm` (the model's own module) and lm_head applied to transformers'
    hidden states; the last row is the model's prediction."""
    result = engine.run(TEXT)
    lens = logit_lens(engine, result.hidden_states)
    with torch.no_grad():
        out = model(torch.from_numpy(result.input_ids)[None], output_hidden_states=True)
        readings = [final_norm(h) for h in out.hidden_states[:-1]] + [out.hidden_states[-1]]
        probs = torch.softmax(torch.stack([model.lm_head(r)[0] for r in readings]).double(), -1).numpy()
    np.testing.assert_array_equal(lens.top_ids, probs.argmax(-1))
    np.testing.assert_allclose(lens.top_probs, probs.max(-1), atol=1e-6)
    assert lens.top_ids[-1, -1] == int(np.argmax(result.next_token_logits))


def test_logit_lens_equals_transformers_ln_f_and_lm_head(tiny):
    engine, model = tiny
    assert_lens_equals_transformers(engine, model, model.transformer.ln_f)


def test_logit_lens_on_a_llama_reads_through_its_final_rmsnorm(tmp_path):
    path = make_tiny_llama(tmp_path, layers=3)
    model = LlamaForCausalLM.from_pretrained(path, attn_implementation="eager")
    assert_lens_equals_transformers(LlamaNumpy.from_pretrained(path), model, model.model.norm)


def test_first_token_share_equals_a_loop(tiny):
    attentions = tiny[0].run(TEXT).attentions
    layers, heads, t, _ = attentions.shape
    expected = np.array(
        [
            [sum(attentions[layer, h, i, 0] for i in range(1, t)) / (t - 1) for h in range(heads)]
            for layer in range(layers)
        ]
    )
    np.testing.assert_allclose(first_token_share(attentions), expected, atol=1e-7)


def test_first_token_share_by_hand():
    sink = np.tril(np.ones((4, 4)))  # every row puts all its weight on token 0
    sink[:, 1:] = 0.0
    sink[:, 0] = 1.0
    uniform = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]  # row i: 1 / (i + 1) on each
    share = first_token_share(np.stack([sink, uniform])[None])
    np.testing.assert_allclose(share, [[1.0, (1 / 2 + 1 / 3 + 1 / 4) / 3]])
    assert np.isnan(first_token_share(np.ones((1, 1, 1, 1)))).all()


def test_settled_rows_by_hand_and_against_a_loop():
    # columns: settled from the embeddings; only in the last layer; agrees early, breaks, settles at 2
    top = np.array([[5, 1, 7], [5, 2, 3], [5, 9, 7], [5, 4, 7]])
    np.testing.assert_array_equal(settled_rows(top), [0, 3, 2])
    rng = np.random.default_rng(0)
    top = rng.integers(0, 3, size=(6, 40))
    expected = [min(r for r in range(6) if (top[r:, j] == top[-1, j]).all()) for j in range(40)]
    np.testing.assert_array_equal(settled_rows(top), expected)
