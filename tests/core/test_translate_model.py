"""The translator's forward and backward (core/translate/) against transformers' BART on the same
weights: logits and each kind of attention within 1e-5 (float32) and every parameter's gradient equal
to torch autograd's (float64), on random weights and a padded batch of random sentences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BartConfig, BartForConditionalGeneration

from core.train.backward import loss_backward
from core.train.model import cross_entropy
from core.translate.backward import backward
from core.translate.checkpoint import from_state_dict, to_state_dict
from core.translate.model import TranslatorConfig, cross_attentions, forward, init_params, param_shapes

CONFIG = TranslatorConfig(vocab_size=23, d_model=16, heads=4, ffn=24, encoder_layers=2, decoder_layers=2)


def bart(params: dict, dtype=torch.float32) -> BartForConditionalGeneration:
    model = BartForConditionalGeneration(BartConfig(**CONFIG.bart_config(), attn_implementation="eager"))
    model = model.to(dtype)  # before loading: float64 weights copied into float32 ones would be rounded
    state = {k: torch.from_numpy(np.asarray(v)) for k, v in to_state_dict(params).items()}
    model.load_state_dict(state, strict=True)
    return model.eval()


def batch(rng: np.random.Generator, b: int = 3, s: int = 7, t: int = 6):
    """Random ids (specials avoided) with padding after different lengths on both sides."""
    src = rng.integers(4, CONFIG.vocab_size, size=(b, s))
    tgt = rng.integers(4, CONFIG.vocab_size, size=(b, t))
    labels = rng.integers(4, CONFIG.vocab_size, size=(b, t))
    for i, (ls, lt) in enumerate(((s, t), (s - 2, t - 1), (s - 4, t - 3))[:b]):
        src[i, ls:], tgt[i, lt:], labels[i, lt:] = CONFIG.pad_id, CONFIG.pad_id, CONFIG.pad_id
    return src, tgt, labels


def scaled(params: dict, factor: float) -> dict:
    """Weights larger than BART's 0.02, so the attention is not nearly uniform and every path counts."""
    return {k: v * factor if v.ndim > 1 else v + 0.1 * np.sin(np.arange(v.size)) for k, v in params.items()}


def test_the_state_dict_round_trips():
    params = init_params(CONFIG, np.random.default_rng(0))
    back = from_state_dict(to_state_dict(params), list(param_shapes(CONFIG)))
    assert all(np.array_equal(back[k], params[k]) for k in params)


def test_logits_and_every_kind_of_attention_equal_bart():
    rng = np.random.default_rng(1)
    params = scaled(init_params(CONFIG, rng), 20)
    src, tgt, _ = batch(rng)
    logits, cache = forward(params, CONFIG, src, tgt)
    with torch.no_grad():
        out = bart(params)(
            input_ids=torch.from_numpy(src),
            attention_mask=torch.from_numpy((src != CONFIG.pad_id).astype(np.int64)),
            decoder_input_ids=torch.from_numpy(tgt),
            output_attentions=True,
        )
    real_t = tgt != CONFIG.pad_id  # positions that are not padding: the ones a reader sees
    np.testing.assert_allclose(logits[real_t], out.logits.numpy()[real_t], atol=1e-5)
    for i, layer in enumerate(cache["encoder"]["layers"]):
        keys = src != CONFIG.pad_id
        mine, theirs = layer["self"]["probs"], out.encoder_attentions[i].numpy()
        np.testing.assert_allclose(
            mine.transpose(0, 2, 1, 3)[keys], theirs.transpose(0, 2, 1, 3)[keys], atol=1e-5
        )
    for i, layer in enumerate(cache["decoder"]["layers"]):
        theirs = out.decoder_attentions[i].numpy().transpose(0, 2, 1, 3)
        np.testing.assert_allclose(
            layer["self"]["probs"].transpose(0, 2, 1, 3)[real_t], theirs[real_t], atol=1e-5
        )
    cross = cross_attentions(cache)  # (L, B, H, T, S)
    for i in range(CONFIG.decoder_layers):
        theirs = out.cross_attentions[i].numpy().transpose(0, 2, 1, 3)
        np.testing.assert_allclose(cross[i].transpose(0, 2, 1, 3)[real_t], theirs[real_t], atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_every_gradient_equals_torch_autograd(seed):
    rng = np.random.default_rng(seed)
    params = {k: v.astype(np.float64) for k, v in scaled(init_params(CONFIG, rng), 10).items()}
    src, tgt, labels = batch(rng)
    weights = (labels != CONFIG.pad_id).astype(np.float64)
    weights /= weights.sum()
    logits, cache = forward(params, CONFIG, src, tgt)
    _, log_probs = cross_entropy(logits, labels)
    grads = backward(params, CONFIG, cache, loss_backward(log_probs, labels, weights))
    model = bart(params, torch.float64)
    out = model(
        input_ids=torch.from_numpy(src),
        attention_mask=torch.from_numpy((src != CONFIG.pad_id).astype(np.int64)),
        decoder_input_ids=torch.from_numpy(tgt),
    )
    losses = torch.nn.functional.cross_entropy(
        out.logits.flatten(0, 1), torch.from_numpy(labels).flatten(), reduction="none"
    )
    (losses * torch.from_numpy(weights).flatten()).sum().backward()
    theirs = {name: p.grad.numpy() for name, p in model.named_parameters() if p.grad is not None}
    mine = to_state_dict(grads)
    for name, grad in theirs.items():
        np.testing.assert_allclose(mine[name], grad, atol=1e-10, err_msg=name)
    assert set(theirs) >= set(param_shapes(CONFIG))  # every trained parameter was compared
