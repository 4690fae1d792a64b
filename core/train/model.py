"""GPT-2 for training from scratch: its parameters, GPT-2's initialisation, and a batched forward
pass that keeps what the hand-written backward pass (core/train/backward.py) reads.

The forward is core/models/gpt2.py's decoder_block, with its step numbers, run on B sequences at once
and written with the same lesson functions, so the trainer computes what the app teaches:

    1) x = token embedding + position embedding
    then in each block:
    *) LayerNorm first (ln_1)
    2) project       Q | K | V = h W_attn + b_attn (one c_attn product), each split into heads
    3) scores        Q K^T
    4) scale         divided by sqrt(d_k)
    5) causal mask   then softmax: exact zeros above the diagonal
    6) weighted sum  probs V
    7) merge heads   concat W^O + b^O, then the residual
    8) MLP           x + gelu_tanh(LayerNorm(x) W_1 + b_1) W_2 + b_2
    9) ln_f, then 10) the tied unembedding: logits = h W_E^T
    11) the loss: weighted cross-entropy of each position's next token

Rows of the residual stream are (B T, D), so each projection is one matrix product over every
token of the batch; only attention keeps the batch and head axes.

Parameters are a flat dict named as transformers' GPT-2 state dict without "transformer." (Conv1D
weights are already (d_in, d_out), as x @ W needs), so saving them with that prefix gives a
checkpoint GPT2LMHeadModel loads. Every array has the parameters' dtype: float32 to train, float64
for the gradient check.

References: Radford et al. 2019 (GPT-2); transformers' modeling_gpt2.py (_init_weights); nanoGPT.

Letters in shape comments: B sequences, T positions, N = B T rows, D width, H heads, d_k = D / H,
F the MLP's width, V vocabulary, L blocks, P rows of the position table.
"""

from __future__ import annotations

import math

import numpy as np

from core.lesson.attention import attention_steps, causal_mask, merge_heads, split_heads
from core.lesson.layers import gelu_tanh, layer_norm, linear, residual
from core.models.gpt2_config import GPT2Config
from core.train.backward import backward, loss_backward

__all__ = [
    "TRAINABLE_ACTIVATIONS",
    "cross_entropy",
    "forward",
    "init_params",
    "loss_and_grads",
    "param_shapes",
    "per_token_loss",
]

# the activations the backward pass knows the derivative of: both names are the tanh form of GELU
TRAINABLE_ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh")


def param_shapes(config: GPT2Config) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in the order of transformers' state dict."""
    d, f = config.n_embd, config.inner
    shapes = {"wte.weight": (config.vocab_size, d), "wpe.weight": (config.n_positions, d)}
    for i in range(config.n_layer):
        block = {
            "ln_1.weight": (d,),
            "ln_1.bias": (d,),
            "attn.c_attn.weight": (d, 3 * d),
            "attn.c_attn.bias": (3 * d,),
            "attn.c_proj.weight": (d, d),
            "attn.c_proj.bias": (d,),
            "ln_2.weight": (d,),
            "ln_2.bias": (d,),
            "mlp.c_fc.weight": (d, f),
            "mlp.c_fc.bias": (f,),
            "mlp.c_proj.weight": (f, d),
            "mlp.c_proj.bias": (d,),
        }
        shapes.update({f"h.{i}.{name}": shape for name, shape in block.items()})
    return shapes | {"ln_f.weight": (d,), "ln_f.bias": (d,)}


def init_params(config: GPT2Config, rng: np.random.Generator, dtype=np.float32) -> dict[str, np.ndarray]:
    """GPT-2's initialisation: weights and both tables normal(0, 0.02), biases 0, LayerNorm 1 and 0.
    The two projections that write into the residual stream (c_proj) get 0.02 / sqrt(2 L): each
    block adds two of them, and this keeps the stream's variance from growing with depth."""
    check_trainable(config)
    params = {}
    for name, shape in param_shapes(config).items():
        if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            params[name] = np.ones(shape, dtype=dtype)
        elif name.endswith(".bias"):
            params[name] = np.zeros(shape, dtype=dtype)
        else:
            std = 0.02 / math.sqrt(2 * config.n_layer) if name.endswith("c_proj.weight") else 0.02
            params[name] = rng.standard_normal(shape, dtype=dtype) * std  # a float keeps the dtype
    return params


def check_trainable(config: GPT2Config) -> None:
    """ValueError, with what to change, for a config the backward pass cannot differentiate."""
    if config.activation_function not in TRAINABLE_ACTIVATIONS:
        raise ValueError(
            f"activation_function {config.activation_function!r} cannot be trained here; "
            f"use one of {', '.join(TRAINABLE_ACTIVATIONS)}"
        )
    if config.n_head < 1 or config.n_embd % config.n_head:
        raise ValueError(f"n_embd ({config.n_embd}) must be divisible by n_head ({config.n_head})")


def check_tokens(config: GPT2Config, tokens: np.ndarray) -> np.ndarray:
    """tokens as a (B, T) integer array, or ValueError saying what is wrong."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not 1 <= tokens.shape[1] <= config.n_positions or tokens.shape[0] < 1:
        raise ValueError(f"tokens must be (B, T) with 1 <= T <= {config.n_positions}; got {tokens.shape}")
    if not np.issubdtype(tokens.dtype, np.integer) or tokens.min() < 0 or tokens.max() >= config.vocab_size:
        raise ValueError(f"tokens must be integers that lie in [0, {config.vocab_size})")
    return tokens


def block_forward(x: np.ndarray, p: dict, config: GPT2Config, batch: int) -> tuple[np.ndarray, dict]:
    """One block on x (N, D), the rows of `batch` sequences; p: the block's parameters without the
    "h.{i}." prefix. Returns (the block's output (N, D), what its backward reads)."""
    n, d = x.shape
    heads, eps, t = config.n_head, config.layer_norm_epsilon, n // batch
    # *) LayerNorm first: the block reads its input normalised, and adds back to the input itself
    ln1 = layer_norm(x, p["ln_1.weight"], p["ln_1.bias"], eps)  # (N, D)
    # 2) project: one c_attn product for Q | K | V, cut in three, each split into heads
    qkv = linear(ln1, p["attn.c_attn.weight"], p["attn.c_attn.bias"])  # (N, 3D)
    query, key, value = (split_heads(part.reshape(batch, t, d), heads) for part in np.split(qkv, 3, axis=1))
    # 3) scores, 4) scaled, 5) the causal mask + softmax, 6) weighted sum: every sequence and head at once
    steps = attention_steps(query, key, value, causal_mask(t), scale=config.scale_attn_weights)
    # 7) merge the heads (B, H, T, d_k) -> (N, D), W^O, and the residual: no LayerNorm after it
    concat = merge_heads(steps["context"]).reshape(n, d)
    summed = residual(x, linear(concat, p["attn.c_proj.weight"], p["attn.c_proj.bias"]))
    # 8) the MLP reads the residual stream normalised, and adds to it
    normed = layer_norm(summed, p["ln_2.weight"], p["ln_2.bias"], eps)
    pre = linear(normed, p["mlp.c_fc.weight"], p["mlp.c_fc.bias"])  # (N, F)
    act = gelu_tanh(pre)
    output = residual(summed, linear(act, p["mlp.c_proj.weight"], p["mlp.c_proj.bias"]))
    kept = {"x": x, "ln1": ln1, "query": query, "key": key, "value": value, "probs": steps["probs"]}
    return output, kept | {"concat": concat, "summed": summed, "normed": normed, "pre": pre, "act": act}


def block_params(params: dict, i: int) -> dict[str, np.ndarray]:
    """Block i's parameters, named without the "h.{i}." prefix."""
    prefix = f"h.{i}."
    return {name[len(prefix) :]: value for name, value in params.items() if name.startswith(prefix)}


def forward(params: dict, config: GPT2Config, tokens: np.ndarray) -> tuple[np.ndarray, dict]:
    """tokens (B, T) -> (logits (B, T, V), cache). The cache holds every block's intermediates
    ("blocks"), the stream before and after ln_f, and "probs" (L, B, H, T, T): each block's
    attention weights, exact zeros above the diagonal."""
    check_trainable(config)
    tokens = check_tokens(config, tokens)
    b, t = tokens.shape
    wte = params["wte.weight"]  # (V, D)
    # 1) token + position embeddings, one row per token of the batch
    x = (wte[tokens] + params["wpe.weight"][:t]).reshape(b * t, -1)  # (N, D)
    blocks = []
    for i in range(config.n_layer):
        x, kept = block_forward(x, block_params(params, i), config, b)
        blocks.append(kept)
    # 9) the last LayerNorm, then 10) the tied unembedding: the token table read backwards
    final = layer_norm(x, params["ln_f.weight"], params["ln_f.bias"], config.layer_norm_epsilon)
    logits = final @ wte.T  # (N, V)
    probs = np.stack([kept.pop("probs") for kept in blocks])  # (L, B, H, T, T)
    cache = {"tokens": tokens, "blocks": blocks, "probs": probs, "last": x, "final": final}
    return logits.reshape(b, t, -1), cache


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """11) -log softmax(logits)[target] per position: logits (..., V), targets (...) ->
    (the cross-entropy in nats (...), the log-probabilities (..., V), which the backward reads)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)  # log-sum-exp without overflow
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, np.asarray(targets)[..., None], axis=-1)[..., 0]
    return -picked, log_probs


def per_token_loss(params: dict, config: GPT2Config, tokens: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(B, T) cross-entropy in nats of each target under the model, forward only (for evaluation)."""
    logits, _ = forward(params, config, tokens)
    return cross_entropy(logits, _check_targets(config, targets, logits.shape[:2]))[0]


def loss_and_grads(
    params: dict, config: GPT2Config, tokens: np.ndarray, targets: np.ndarray, weights: np.ndarray
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    """loss = sum(weights * cross-entropy) / sum(weights) over the (B, T) positions, and its gradient
    for every parameter (same names and shapes as params). weights >= 0, not all zero: a zero leaves
    a position out (a prompt the model is not asked to predict). Returns (loss, grads, probs
    (L, B, H, T, T)), the attention weights of this very pass, so heads are scored without another."""
    logits, cache = forward(params, config, tokens)
    targets = _check_targets(config, targets, logits.shape[:2])
    weights = np.asarray(weights, dtype=logits.dtype)
    if weights.shape != targets.shape or (weights < 0).any() or not weights.sum() > 0:
        raise ValueError(f"weights must be (B, T) = {targets.shape}, >= 0, and not all zero")
    weights = weights / weights.sum()
    losses, log_probs = cross_entropy(logits, targets)
    d_logits = loss_backward(log_probs, targets, weights)  # (B, T, V)
    grads = backward(params, config, cache, d_logits)
    return float((weights * losses).sum()), grads, cache["probs"]


def _check_targets(config: GPT2Config, targets: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    targets = np.asarray(targets)
    if targets.shape != shape or not np.issubdtype(targets.dtype, np.integer):
        raise ValueError(f"targets must be integers shaped like tokens {shape}; got {targets.shape}")
    if targets.min() < 0 or targets.max() >= config.vocab_size:
        raise ValueError(f"targets must lie in [0, {config.vocab_size})")
    return targets
