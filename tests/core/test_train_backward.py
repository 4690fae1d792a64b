"""The hand-written GPT-2 backward pass and AdamW (core/train) against PyTorch: every gradient against
autograd through transformers' GPT2LMHeadModel (eager attention) on the same weights, in float64;
the loss against the model's own; the forward against the NumPy engine; AdamW against
torch.optim.AdamW over several steps. Tiny random configs, so nothing is downloaded."""

from __future__ import annotations

import numpy as np
import pytest

from core.models.gpt2 import GPT2Numpy
from core.models.gpt2_config import GPT2Config
from core.train.adamw import AdamW
from core.train.model import forward, init_params, loss_and_grads, param_shapes, per_token_loss

CONFIGS = [
    GPT2Config(vocab_size=11, n_embd=8, n_layer=1, n_head=2, n_positions=9),
    GPT2Config(vocab_size=13, n_embd=12, n_layer=2, n_head=3, n_positions=8, n_inner=20),
    GPT2Config(vocab_size=7, n_embd=16, n_layer=2, n_head=4, n_positions=6, layer_norm_epsilon=1e-3),
]


def random_params(config: GPT2Config, seed: int) -> dict[str, np.ndarray]:
    """float64 parameters far from GPT-2's init (gains away from 1, biases away from 0, larger
    weights), so every term of every gradient is exercised."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(config).items():
        if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            params[name] = 1.0 + 0.3 * rng.standard_normal(shape)
        else:
            params[name] = 0.4 * rng.standard_normal(shape)
    return params


def torch_model(config: GPT2Config, params: dict[str, np.ndarray]):
    """GPT2LMHeadModel in float64 with eager attention, holding a copy of params."""
    import torch
    from transformers import GPT2Config as HFConfig
    from transformers import GPT2LMHeadModel

    settings = HFConfig(
        vocab_size=config.vocab_size,
        n_embd=config.n_embd,
        n_layer=config.n_layer,
        n_head=config.n_head,
        n_positions=config.n_positions,
        n_inner=config.n_inner,
        layer_norm_epsilon=config.layer_norm_epsilon,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        attn_implementation="eager",
        loss_type="ForCausalLM",
        bos_token_id=0,  # GPT-2's 50256 lies outside these tiny vocabularies
        eos_token_id=0,
    )
    model = GPT2LMHeadModel(settings).double().eval()
    named = dict(model.transformer.named_parameters())
    assert set(named) == set(params)
    with torch.no_grad():
        for name, parameter in named.items():
            parameter.copy_(torch.from_numpy(params[name]))
    assert model.lm_head.weight is model.transformer.wte.weight  # tied, as ours
    return model


def batch(config: GPT2Config, seed: int, b: int = 3, t: int | None = None):
    """Random tokens and targets (B, T), and weights with some zeros (at least one position kept)."""
    rng = np.random.default_rng(seed)
    t = t or config.n_positions - 1
    tokens = rng.integers(0, config.vocab_size, (b, t))
    targets = rng.integers(0, config.vocab_size, (b, t))
    weights = rng.uniform(0.2, 2.0, (b, t)) * (rng.random((b, t)) < 0.7)
    weights[0, 0] = 1.0
    return tokens, targets, weights


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"L{c.n_layer}H{c.n_head}D{c.n_embd}")
def test_every_gradient_equals_autograd_through_transformers(config):
    import torch

    params = random_params(config, seed=config.n_embd)
    tokens, targets, weights = batch(config, seed=1)
    assert (weights == 0).any()
    loss, grads, probs = loss_and_grads(params, config, tokens, targets, weights)

    model = torch_model(config, params)
    out = model(torch.from_numpy(tokens), output_attentions=True)
    each = torch.nn.functional.cross_entropy(
        out.logits.reshape(-1, config.vocab_size), torch.from_numpy(targets).reshape(-1), reduction="none"
    )
    w = torch.from_numpy(weights).reshape(-1)
    expected = (w * each).sum() / w.sum()
    expected.backward()

    assert loss == pytest.approx(expected.item(), rel=1e-12)
    assert set(grads) == set(params)
    for name, parameter in model.transformer.named_parameters():
        reference = parameter.grad.numpy()
        assert grads[name].shape == params[name].shape and grads[name].dtype == np.float64, name
        scale = max(np.abs(reference).max(), 1e-3)
        assert np.abs(grads[name] - reference).max() <= 1e-10 * scale, name
    # the attention weights handed back are this pass's: transformers' own, zeros above the diagonal
    np.testing.assert_allclose(probs, np.stack([a.detach().numpy() for a in out.attentions]), atol=1e-12)
    above = np.triu(np.ones(tokens.shape[1], dtype=bool), k=1)
    assert np.all(probs[..., above] == 0.0)


def test_the_loss_equals_gpt2lmheadmodels_next_token_loss():
    """With targets the tokens shifted by one and the last position weighted 0, the loss is what
    GPT2LMHeadModel(labels=tokens) computes; per_token_loss gives the same per position."""
    import torch

    config = CONFIGS[1]
    params = random_params(config, seed=5)
    tokens = np.random.default_rng(2).integers(0, config.vocab_size, (4, config.n_positions))
    targets = np.roll(tokens, -1, axis=1)
    weights = np.ones(tokens.shape)
    weights[:, -1] = 0.0  # the last position has no next token
    loss, _, _ = loss_and_grads(params, config, tokens, targets, weights)
    with torch.no_grad():
        expected = torch_model(config, params)(torch.from_numpy(tokens), labels=torch.from_numpy(tokens)).loss
    assert loss == pytest.approx(expected.item(), rel=1e-6)  # transformers' loss casts logits to float32
    each = per_token_loss(params, config, tokens, targets)
    assert each.shape == tokens.shape
    assert each[:, :-1].mean() == pytest.approx(loss, rel=1e-12)


def test_the_forward_equals_the_numpy_engine_on_every_sequence():
    config = CONFIGS[2]
    params = init_params(config, np.random.default_rng(3))  # float32, as training uses
    tokens = np.random.default_rng(4).integers(0, config.vocab_size, (3, config.n_positions))
    logits, cache = forward(params, config, tokens)
    assert logits.dtype == np.float32 and logits.shape == (*tokens.shape, config.vocab_size)
    assert cache["probs"].shape == (config.n_layer, 3, config.n_head, *tokens.shape[1:] * 2)
    engine = GPT2Numpy(config, {name: value.copy() for name, value in params.items()}, tokenizer=None)
    for row, ids in enumerate(tokens):
        out = engine.forward(ids)
        np.testing.assert_allclose(logits[row], engine.unembed(out.hidden_states[-1]), atol=1e-5)
        np.testing.assert_allclose(cache["probs"][:, row], out.attentions, atol=1e-6)


def test_init_params_follows_gpt2s_initialisation():
    config = GPT2Config(vocab_size=50, n_embd=64, n_layer=4, n_head=4, n_positions=32)
    params = init_params(config, np.random.default_rng(0))
    assert {name: p.shape for name, p in params.items()} == param_shapes(config)
    assert all(p.dtype == np.float32 for p in params.values())
    assert params["h.3.attn.c_proj.weight"].std() == pytest.approx(0.02 / np.sqrt(8), rel=0.05)
    assert params["h.0.mlp.c_fc.weight"].std() == pytest.approx(0.02, rel=0.05)
    assert params["wte.weight"].std() == pytest.approx(0.02, rel=0.05)
    assert np.all(params["ln_f.weight"] == 1) and np.all(params["h.1.attn.c_attn.bias"] == 0)
    assert init_params(config, np.random.default_rng(0), np.float64)["wpe.weight"].dtype == np.float64


def test_bad_inputs_are_refused_with_what_to_do():
    config = CONFIGS[0]
    params = random_params(config, seed=0)
    tokens, targets, _ = batch(config, seed=0, b=2, t=4)
    with pytest.raises(ValueError, match="not all zero"):
        loss_and_grads(params, config, tokens, targets, np.zeros(tokens.shape))
    with pytest.raises(ValueError, match="1 <= T <= 9"):
        forward(params, config, np.zeros((1, 10), dtype=int))
    with pytest.raises(ValueError, match=r"\[0, 11\)"):
        forward(params, config, np.full((1, 3), 11))
    relu = GPT2Config(vocab_size=11, n_embd=8, n_layer=1, n_head=2, activation_function="relu")
    with pytest.raises(ValueError, match="gelu_new"):
        forward(params, relu, tokens)


def test_adamw_equals_torchs_over_several_steps():
    """Decay on the matrices (the default), none on biases and tables, one parameter frozen, and a
    learning rate changed at one step (as a warm-up does)."""
    import torch

    config = CONFIGS[1]
    params = random_params(config, seed=7)
    frozen = {"wpe.weight"}
    rates = [1e-2, 1e-2, 5e-3, 2e-2, 1e-2]
    ours = {name: value.copy() for name, value in params.items()}
    optimiser = AdamW(ours, lr=1e-2, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, frozen=frozen)

    tensors = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    matrices = [n for n in params if params[n].ndim == 2 and n not in ("wte.weight", "wpe.weight")]
    others = [n for n in params if n not in matrices and n not in frozen]
    assert matrices and others
    groups = [
        {"params": [tensors[n] for n in matrices], "weight_decay": 0.1},
        {"params": [tensors[n] for n in others], "weight_decay": 0.0},
    ]
    reference = torch.optim.AdamW(groups, lr=1e-2, betas=(0.8, 0.95), eps=1e-6)

    rng = np.random.default_rng(8)
    for lr in rates:
        grads = {name: rng.standard_normal(value.shape) for name, value in params.items()}
        optimiser.step(ours, grads, lr=lr)
        for group in reference.param_groups:
            group["lr"] = lr
        for name, tensor in tensors.items():
            tensor.grad = torch.from_numpy(grads[name])
        reference.step()
    for name, tensor in tensors.items():
        np.testing.assert_allclose(ours[name], tensor.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=name)
    assert np.array_equal(ours["wpe.weight"], params["wpe.weight"])  # frozen: untouched
    assert not np.array_equal(ours["wte.weight"], params["wte.weight"])


def test_a_few_steps_of_training_lower_the_loss():
    """float32 end to end: forward, backward and AdamW learn a fixed batch."""
    config = GPT2Config(vocab_size=9, n_embd=16, n_layer=2, n_head=2, n_positions=8)
    params = init_params(config, np.random.default_rng(0))
    tokens = np.random.default_rng(1).integers(0, config.vocab_size, (4, 8))
    targets, weights = np.roll(tokens, -1, axis=1), np.ones(tokens.shape)
    optimiser = AdamW(params, lr=1e-2)
    losses = []
    for _ in range(30):
        loss, grads, _ = loss_and_grads(params, config, tokens, targets, weights)
        assert all(g.dtype == np.float32 for g in grads.values())
        optimiser.step(params, grads)
        losses.append(loss)
    assert losses[-1] < 0.7 * losses[0]
