"""The NumPy GPT-2 against transformers' eager GPT2LMHeadModel on checkpoints built here (random
weights, odd sizes, with and without the "transformer." prefix, tanh and exact GELU): every
block's attention, the hidden states and the logits within 1e-5; causal rows with exact zeros
above the diagonal; the KV cache equal to recomputing everything; greedy generation equal to
transformers' generate, token by token and score by score; sampled generation's distributions and
its seed; ablation against the same cut made in torch's weights; and the configs it refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import GPT2LMHeadModel

from core.lesson.attention import softmax
from core.models.bert import TextError
from core.models.bert_config import UnsupportedModelError
from core.models.gpt2 import GPT2Numpy, load_gpt2
from core.models.gpt2_config import GPT2Config
from tests.tiny_gpt2 import make_tiny_gpt2

TOL = 1e-5
TEXT = "The trophy would not fit in the suitcase because it was too large."
SHAPES = {
    "2x4-w32": dict(n_layer=2, n_head=4, n_embd=32),
    "3x3-w24-exact-gelu": dict(n_layer=3, n_head=3, n_embd=24, activation_function="gelu"),
    "1x1-w8": dict(n_layer=1, n_head=1, n_embd=8),
    "4x6-w36-no-prefix": dict(n_layer=4, n_head=6, n_embd=36, head=False),
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def checkpoint(request, tmp_path_factory):
    return make_tiny_gpt2(tmp_path_factory.mktemp(request.param), **SHAPES[request.param])


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The first shape, with its NumPy engine and transformers' model, for the tests that need one."""
    path = make_tiny_gpt2(tmp_path_factory.mktemp("small"), **SHAPES["2x4-w32"])
    return GPT2Numpy.from_pretrained(path), reference(path)


def reference(path) -> GPT2LMHeadModel:
    return GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager").eval()


def torch_outputs(model, ids):
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    return out


def test_forward_matches_transformers(checkpoint):
    engine, model = GPT2Numpy.from_pretrained(checkpoint), reference(checkpoint)
    result = engine.run(TEXT)
    out = torch_outputs(model, list(result.input_ids))
    attentions = torch.stack(out.attentions)[:, 0].numpy()  # (L, H, T, T)
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()  # (L + 1, T, D)
    assert result.attentions.shape == attentions.shape and result.hidden_states.shape == hidden.shape
    assert np.abs(result.attentions - attentions).max() < TOL
    assert np.abs(result.hidden_states - hidden).max() < TOL
    assert np.abs(result.next_token_logits - out.logits[0, -1].numpy()).max() < TOL
    assert result.engine == "numpy" and not result.special_mask.any()


def test_attention_is_causal_with_exact_zeros(small):
    result = small[0].run(TEXT)
    above = np.triu(np.ones((result.n_tokens,) * 2, dtype=bool), k=1)
    assert (result.attentions[..., above] == 0.0).all()  # exact zeros, not small numbers
    np.testing.assert_allclose(result.attentions.sum(-1), 1.0, atol=1e-6)
    assert (result.attentions[:, :, 0, 0] == 1.0).all()  # the first token sees only itself


def test_kv_cache_equals_recomputing_everything(small):
    engine = small[0]
    ids = list(engine.encode(TEXT).ids)
    full = engine.forward(ids)
    for split in (1, 5, len(ids) - 1):
        first = engine.forward(ids[:split])
        rest = engine.forward(ids[split:], past=first.cache)
        np.testing.assert_allclose(rest.attentions, full.attentions[:, :, split:, :], atol=1e-6)
        np.testing.assert_allclose(rest.hidden_states, full.hidden_states[:, split:], atol=1e-5)
        for (k_rest, v_rest), (k_full, v_full) in zip(rest.cache, full.cache, strict=True):
            np.testing.assert_allclose(k_rest, k_full, atol=1e-5)
            np.testing.assert_allclose(v_rest, v_full, atol=1e-5)


def test_greedy_generation_matches_transformers_generate(small):
    engine, model = small
    prompt = engine.encode("The bank approved").ids
    ours = engine.generate("The bank approved", 12)
    with torch.no_grad():
        theirs = model.generate(
            torch.tensor([prompt]),
            max_new_tokens=12,
            do_sample=False,
            output_scores=True,
            return_dict_in_generate=True,
            pad_token_id=0,
        )
    assert [s.token_id for s in ours.steps] == theirs.sequences[0, len(prompt) :].tolist()
    for step, scores in zip(ours.steps, theirs.scores, strict=True):
        probs = softmax(scores[0].numpy().astype(np.float64))
        best = np.argsort(-probs, kind="stable")[:5]
        assert [p for _, p in step.top] == pytest.approx(probs[best], abs=1e-6)


def test_each_step_attends_over_everything_so_far(small):
    engine = small[0]
    n_prompt = len(engine.encode(TEXT).ids)
    generation = engine.generate(TEXT, 6)
    ids = list(engine.encode(TEXT).ids) + [s.token_id for s in generation.steps]
    full = engine.forward(ids[:-1])  # the positions that predicted each generated token
    for i, step in enumerate(generation.steps):
        assert step.attentions.shape == (engine.n_layers, engine.n_heads, n_prompt + i)
        np.testing.assert_allclose(
            step.attentions, full.attentions[:, :, n_prompt + i - 1, : n_prompt + i], atol=1e-6
        )
    assert generation.prompt == [engine.decode(i) for i in engine.encode(TEXT).ids]


def test_sampling_is_seeded_and_draws_from_the_tempered_distribution(small):
    engine, model = small
    first = engine.generate(TEXT, 8, temperature=0.7, seed=3)
    assert [s.token_id for s in first.steps] == [
        s.token_id for s in engine.generate(TEXT, 8, temperature=0.7, seed=3).steps
    ]
    assert [s.token_id for s in first.steps] == [
        s.token_id for s in engine.generate(TEXT, 8, temperature=0.7, seed=3, use_cache=False).steps
    ]
    ids = list(engine.encode(TEXT).ids) + [s.token_id for s in first.steps]
    logits = torch_outputs(model, ids).logits[0].numpy().astype(np.float64)  # teacher-forced
    n_prompt = len(ids) - len(first.steps)
    for i, step in enumerate(first.steps):
        probs = softmax(logits[n_prompt + i - 1] / 0.7)
        assert step.top[0][1] == pytest.approx(probs.max(), abs=1e-6)
        assert probs[step.token_id] > 0


def test_ablation_equals_zeroing_the_heads_rows_of_w_o(small, tmp_path):
    engine, model = small
    cut = {(0, 1), (1, 3)}
    result = engine.run(TEXT, ablate=cut)
    d_k = engine.config.d_k
    with torch.no_grad():
        for layer, head in cut:  # the head's d_k inputs of c_proj (x @ W: rows) carry nothing
            model.transformer.h[layer].attn.c_proj.weight[head * d_k : (head + 1) * d_k] = 0.0
    out = torch_outputs(model, list(result.input_ids))
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()
    assert np.abs(result.hidden_states - hidden).max() < TOL
    assert np.abs(result.next_token_logits - out.logits[0, -1].numpy()).max() < TOL


def test_text_past_the_context_is_cut_and_generation_past_it_refused(small):
    engine = small[0]
    long_text = "the bank " * 200
    result = engine.run(long_text)
    assert result.n_tokens == engine.max_tokens and result.truncated
    with pytest.raises(ValueError, match="shorten it or generate at most"):
        engine.generate("the bank " * 30, 20)
    for bad in ("", "   ", "\ud800"):
        with pytest.raises(TextError):
            engine.run(bad)
    with pytest.raises(ValueError, match="temperature"):
        engine.generate(TEXT, 2, temperature=0)


def test_loads_by_path_choice(checkpoint):
    assert load_gpt2(f"{checkpoint}/").n_layers >= 1


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"model_type": "bert"}, "runs GPT-2 models only"),
        ({"add_cross_attention": True}, "encoder-decoder"),
        ({"scale_attn_by_inverse_layer_idx": True}, "layer's number"),
        ({"n_head": 5}, "divisible by n_head"),
        ({"activation_function": "swish"}, "not supported"),
    ],
)
def test_configs_it_cannot_run_are_refused_with_the_reason(change, says):
    raw = {"model_type": "gpt2", "vocab_size": 10, "n_embd": 8, "n_layer": 1, "n_head": 2, **change}
    with pytest.raises(UnsupportedModelError, match=says):
        GPT2Config.from_dict(raw)
