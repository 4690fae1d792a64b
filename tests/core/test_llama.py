"""The NumPy Llama against transformers' eager LlamaForCausalLM on checkpoints built here (random
weights; grouped-query, multi-query and plain multi-head attention; tied and untied unembedding; a
RoPE base of its own): every block's attention within 1e-5, the hidden states and the logits within
2e-4; causal rows with exact zeros above the diagonal; the KV cache equal to recomputing
everything; greedy generation equal to transformers' generate, token by token; ablation against
the same cut made in torch's weights; and the configs it refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import LlamaForCausalLM

from core.models.architectures import load_engine
from core.models.bert_config import UnsupportedModelError
from core.models.llama import LlamaNumpy
from core.models.llama_config import LlamaConfig
from tests.tiny_llama import make_tiny_llama

ATTENTION_TOL, LOGIT_TOL = 1e-5, 2e-4
TEXT = "The trophy would not fit in the suitcase because it was too large."
SHAPES = {
    "gqa-4q-2kv": dict(heads=4, kv_heads=2),
    "mqa-6q-1kv-untied-3layers": dict(layers=3, heads=6, kv_heads=1, width=48, tie_word_embeddings=False),
    "mha-2q-2kv-base-500": dict(heads=2, kv_heads=2, width=16, rope_parameters={"rope_theta": 500.0}),
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def checkpoint(request, tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp(request.param), **SHAPES[request.param])


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The grouped-query shape, with its NumPy engine and transformers' model."""
    path = make_tiny_llama(tmp_path_factory.mktemp("small"), **SHAPES["gqa-4q-2kv"])
    return LlamaNumpy.from_pretrained(path), reference(path)


def reference(path) -> LlamaForCausalLM:
    return LlamaForCausalLM.from_pretrained(path, attn_implementation="eager", dtype=torch.float32).eval()


def torch_outputs(model, ids):
    with torch.no_grad():
        return model(torch.tensor([list(ids)]), output_attentions=True, output_hidden_states=True)


@pytest.mark.parametrize("n_tokens", [5, 37])
def test_forward_matches_transformers(checkpoint, n_tokens):
    engine, model = LlamaNumpy.from_pretrained(checkpoint), reference(checkpoint)
    config = model.config  # the shape asked for is the shape built and read
    assert (engine.config.tie_word_embeddings, engine.config.rope_theta) == (
        config.tie_word_embeddings,
        config.rope_parameters["rope_theta"],
    )
    ids = np.random.default_rng(n_tokens).integers(0, engine.vocab_size, n_tokens)
    out, ours = torch_outputs(model, ids), engine.forward(ids)
    attentions = torch.stack(out.attentions)[:, 0].numpy()  # (L, H, T, T)
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()  # (L + 1, T, D)
    assert ours.attentions.shape == attentions.shape and ours.hidden_states.shape == hidden.shape
    assert np.abs(ours.attentions - attentions).max() < ATTENTION_TOL
    assert np.abs(ours.hidden_states - hidden).max() < LOGIT_TOL
    logits = engine.unembed(ours.hidden_states[-1])
    assert np.abs(logits - out.logits[0].numpy()).max() < LOGIT_TOL


def test_run_tokenizes_as_transformers_and_is_causal(small):
    engine, model = small
    result = engine.run(TEXT)
    out = torch_outputs(model, result.input_ids)
    assert np.abs(result.next_token_logits - out.logits[0, -1].numpy()).max() < LOGIT_TOL
    upper = np.triu(np.ones(result.attentions.shape[-2:], dtype=bool), k=1)
    assert (result.attentions[..., upper] == 0.0).all()  # exact zeros above the diagonal
    assert np.allclose(result.attentions.sum(-1), 1.0, atol=1e-6)
    assert result.engine == "numpy" and not result.special_mask.any()


def test_kv_cache_equals_recomputing_everything(small):
    engine = small[0]
    ids = list(engine.encode(TEXT).ids)
    whole = engine.forward(ids)
    first = engine.forward(ids[:9])
    rest = engine.forward(ids[9:], past=first.cache)  # RoPE turns the new keys by positions 9..
    assert np.abs(rest.attentions - whole.attentions[:, :, 9:, :]).max() < 1e-6
    assert np.abs(rest.hidden_states - whole.hidden_states[:, 9:]).max() < 1e-5
    # the cache holds H_kv heads per block: H / H_kv times less than a head per query head
    assert first.cache[0][0].shape == (engine.config.num_key_value_heads, 9, engine.config.head_dim)


def test_greedy_generation_matches_transformers_generate(small):
    engine, model = small
    prompt = list(engine.encode("The bank approved the").ids)
    with torch.no_grad():
        expected = model.generate(
            torch.tensor([prompt]), max_new_tokens=12, do_sample=False, pad_token_id=0, eos_token_id=None
        )[0, len(prompt) :].tolist()
    ours = engine.generate("The bank approved the", 12)
    recomputed = engine.generate("The bank approved the", 12, use_cache=False)
    assert [step.token_id for step in ours.steps] == expected
    assert [step.token_id for step in recomputed.steps] == expected


def test_ablation_equals_zeroing_the_heads_columns_of_w_o(small):
    engine, model = small
    cut = {(0, 1), (1, 3)}
    result = engine.run(TEXT, ablate=cut)
    d_head = engine.config.head_dim
    with torch.no_grad():
        for layer, head in cut:  # the head's d_head inputs of o_proj (nn.Linear: columns) carry nothing
            model.model.layers[layer].self_attn.o_proj.weight[:, head * d_head : (head + 1) * d_head] = 0.0
    out = torch_outputs(model, result.input_ids)
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()
    assert np.abs(result.hidden_states - hidden).max() < LOGIT_TOL
    assert np.abs(result.next_token_logits - out.logits[0, -1].numpy()).max() < LOGIT_TOL
    assert np.abs(result.next_token_logits - engine.run(TEXT).next_token_logits).max() > 1e-3  # it cuts


def test_loads_by_path_choice_as_a_llama(checkpoint):
    assert isinstance(load_engine(f"{checkpoint}/"), LlamaNumpy)


BASE = {"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "intermediate_size": 16}
BASE |= {"num_hidden_layers": 1, "num_attention_heads": 2}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"model_type": "gpt2"}, "Llama-family models only"),
        ({"num_key_value_heads": 3, "num_attention_heads": 4}, "multiple of num_key_value_heads"),
        ({"rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}}, "RoPE scaling 'llama3'"),
        ({"attention_bias": True}, "without biases"),
        ({"hidden_act": "gelu"}, "SwiGLU"),
        ({"num_attention_heads": 3, "hidden_size": 9}, "no even head size"),
    ],
)
def test_configs_it_cannot_run_are_refused_with_the_reason(change, says):
    with pytest.raises(UnsupportedModelError, match=says):
        LlamaConfig.from_dict({**BASE, **change})


def test_the_config_reads_transformers_names():
    config = LlamaConfig.from_dict({**BASE, "num_key_value_heads": 1, "rope_parameters": {"rope_theta": 1e5}})
    assert (config.head_dim, config.group, config.rope_theta) == (4, 2, 100000.0)
    assert LlamaConfig.from_dict({**BASE, "rope_theta": 300.0}).rope_theta == 300.0  # the older name


def test_the_torch_reference_engine_runs_a_llama_as_the_numpy_one(checkpoint):
    from core.models.architectures import is_decoder, load_torch_engine

    numpy_engine, torch_engine = load_engine(str(checkpoint)), load_torch_engine(str(checkpoint))
    assert is_decoder(numpy_engine) and is_decoder(torch_engine)
    cut = {(0, 0), (numpy_engine.n_layers - 1, numpy_engine.n_heads - 1)}
    for ablate in ((), cut):
        ours, theirs = numpy_engine.run(TEXT, ablate=ablate), torch_engine.run(TEXT, ablate=ablate)
        assert ours.tokens == theirs.tokens
        assert np.abs(ours.attentions - theirs.attentions).max() < ATTENTION_TOL
        assert np.abs(ours.next_token_logits - theirs.next_token_logits).max() < LOGIT_TOL
