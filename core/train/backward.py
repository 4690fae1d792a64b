"""GPT-2's backward pass by hand: the gradient of each forward step of core/train/model.py, in reverse.

Each forward step y = f(x, W) becomes a backward step that takes dL/dy (written d_y) and returns
dL/dx, plus dL/dW for the step's parameters: the chain rule, one step at a time. The numbers are
the forward's, walked from the loss back to the embeddings:

    11) loss          d_logits = (softmax(logits) - onehot(target)) * weight / sum(weights)
    10) unembedding   logits = h W_E^T: d_W_E = d_logits^T h, d_h = d_logits W_E
    9)  ln_f          LayerNorm's backward
    then each block, the last first:
    8)  MLP           linear, GELU (tanh form), linear, LayerNorm; the residual adds d_out back
    7)  merge heads   W^O's backward, then the rows cut back into heads; the residual again
    6)  weighted sum  context = probs V: d_probs = d_context V^T, d_V = probs^T d_context
    5)  softmax       d_scaled = probs * (d_probs - sum(d_probs * probs)); masked keys have
                      probs 0, so they pass no gradient (the mask itself has none)
    4)  scale         divided by sqrt(d_k), as the forward was
    3)  scores        Q K^T: d_Q = d_scores K, d_K = d_scores^T Q
    2)  project       Q | K | V joined back into one c_attn gradient
    *)  ln_1          LayerNorm's backward; the residual adds the block's d_out
    1)  embeddings    each token's row of W_E gets the gradient of the positions that read it,
                      added to the unembedding's (one table, two uses: the tied weights); the
                      position table's row t gets the sum over the batch

Matrix products run over the (N, D) rows of the whole batch, as in the forward. LayerNorm's
normalised input and GELU's tanh are recomputed here from the cached inputs rather than kept:
they are cheap, and the forward stays the lesson's functions.

References: Karpathy's llm.c (train_gpt2.c, the *_backward functions) and "micrograd"; Goodfellow
et al., Deep Learning, 6.5 (back-propagation).

Letters in shape comments: B sequences, T positions, N = B T rows, D width, H heads, d_k = D / H,
F the MLP's width, V vocabulary, P rows of the position table.
"""

from __future__ import annotations

import math

import numpy as np

from core.lesson.attention import merge_heads, split_heads
from core.models.gpt2_config import GPT2Config

__all__ = [
    "add_rows",
    "attention_backward",
    "backward",
    "block_backward",
    "gelu_tanh_backward",
    "layer_norm_backward",
    "linear_backward",
    "loss_backward",
    "softmax_backward",
]

_GELU_C = math.sqrt(2.0 / math.pi)  # gelu_tanh(x) = x/2 (1 + tanh(C (x + A x^3)))
_GELU_A = 0.044715


def loss_backward(log_probs: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """11) the weighted cross-entropy's gradient for the logits: log_probs (..., V), targets (...),
    weights (...) already divided by their sum. d/d_logits of -log softmax(logits)[target] is
    softmax(logits) - onehot(target)."""
    d_logits = np.exp(log_probs)  # softmax(logits)
    rows = d_logits.reshape(-1, d_logits.shape[-1])  # (N, V), a view
    rows[np.arange(len(rows)), np.ravel(targets)] -= 1.0
    d_logits *= weights[..., None]
    return d_logits


def linear_backward(d_y: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """y = x W + b, x (N, d_in), W (d_in, d_out) -> (d_x (N, d_in), d_W (d_in, d_out), d_b (d_out,))."""
    return d_y @ w.T, x.T @ d_y, d_y.sum(axis=0)


def layer_norm_backward(
    d_y: np.ndarray, x: np.ndarray, gamma: np.ndarray, eps: float
) -> tuple[np.ndarray, ...]:
    """y = gamma * x_hat + beta, x_hat = (x - mean) / sqrt(var + eps) over the last axis; x (N, D).
    Returns (d_x, d_gamma, d_beta). Every x_hat of a row depends on the whole row through its mean
    and variance: the two row means below are those paths."""
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)  # (N, 1)
    x_hat = centred * rstd
    d_x_hat = d_y * gamma
    d_x = rstd * (
        d_x_hat
        - d_x_hat.mean(axis=-1, keepdims=True)
        - x_hat * (d_x_hat * x_hat).mean(axis=-1, keepdims=True)
    )
    return d_x, (d_y * x_hat).sum(axis=0), d_y.sum(axis=0)


def gelu_tanh_backward(d_y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """y = x/2 (1 + tanh u), u = C (x + A x³), so dy/dx = (1 + tanh u)/2 + x/2 (1 - tanh² u) C (1 + 3 A x²).
    Computed in place on three (N, F) buffers: these are among the largest arrays of a step, and
    allocating a fresh one costs about as much as the arithmetic on it."""
    x2 = x * x
    th = x2 * _GELU_A  # tanh u
    th += 1.0
    th *= x
    th *= _GELU_C
    np.tanh(th, out=th)
    outer = x2  # x/2 C (1 + 3 A x²) (1 - tanh² u), over x2's buffer
    outer *= 3.0 * _GELU_A
    outer += 1.0
    outer *= x
    outer *= 0.5 * _GELU_C
    sech2 = th * th
    np.subtract(1.0, sech2, out=sech2)
    outer *= sech2
    th += 1.0  # the slope: (1 + tanh u)/2 + outer
    th *= 0.5
    th += outer
    th *= d_y
    return th


def softmax_backward(d_probs: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """5) probs = softmax(z) over the last axis -> d_z = probs * (d_probs - sum(d_probs * probs)).
    Overwrites d_probs (it is the caller's own temporary) rather than allocate another."""
    row_sums = np.einsum("...k,...k->...", d_probs, probs)[..., None]  # (..., T_q, 1)
    d_probs -= row_sums
    d_probs *= probs
    return d_probs


def attention_backward(d_context: np.ndarray, kept: dict, scale: bool) -> tuple[np.ndarray, ...]:
    """6) to 3) in reverse, every sequence and head at once: d_context (B, H, T, d_k) ->
    (d_query, d_key, d_value), each (B, H, T, d_k)."""
    query, key, value, probs = kept["query"], kept["key"], kept["value"], kept["probs"]
    # 6) weighted sum: context = probs V
    d_probs = d_context @ np.swapaxes(value, -1, -2)  # (B, H, T, T)
    d_value = np.swapaxes(probs, -1, -2) @ d_context  # (B, H, T, d_k)
    # 5) softmax (the causal mask's zeros stay zeros)
    d_scores = softmax_backward(d_probs, probs)
    # 4) scale: the forward divided by sqrt(d_k)
    if scale:
        d_scores /= math.sqrt(query.shape[-1])
    # 3) scores = Q K^T
    d_query = d_scores @ key  # (B, H, T, d_k)
    d_key = np.swapaxes(d_scores, -1, -2) @ query  # (B, H, T, d_k)
    return d_query, d_key, d_value


def block_backward(
    d_out: np.ndarray, kept: dict, probs: np.ndarray, p: dict, config: GPT2Config, batch: int
) -> tuple[np.ndarray, dict]:
    """One block's backward: d_out (N, D), the gradient of its output -> (d_x (N, D), the gradients
    of its parameters named as p, without the "h.{i}." prefix). probs: its attention (B, H, T, T)."""
    n, d = d_out.shape
    eps, grads = config.layer_norm_epsilon, {}
    # 8) MLP: output = summed + gelu(LN(summed) W_1 + b_1) W_2 + b_2
    d_act, grads["mlp.c_proj.weight"], grads["mlp.c_proj.bias"] = linear_backward(
        d_out, kept["act"], p["mlp.c_proj.weight"]
    )
    d_pre = gelu_tanh_backward(d_act, kept["pre"])  # (N, F)
    d_normed, grads["mlp.c_fc.weight"], grads["mlp.c_fc.bias"] = linear_backward(
        d_pre, kept["normed"], p["mlp.c_fc.weight"]
    )
    d_ln2, grads["ln_2.weight"], grads["ln_2.bias"] = layer_norm_backward(
        d_normed, kept["summed"], p["ln_2.weight"], eps
    )
    d_summed = d_out + d_ln2  # the residual: summed reaches the output directly and through the MLP
    # 7) merge heads + W^O: the concat's rows cut back into heads
    d_concat, grads["attn.c_proj.weight"], grads["attn.c_proj.bias"] = linear_backward(
        d_summed, kept["concat"], p["attn.c_proj.weight"]
    )
    d_context = split_heads(d_concat.reshape(batch, n // batch, d), config.n_head)  # (B, H, T, d_k)
    # 6) to 3) attention
    d_heads = attention_backward(d_context, kept | {"probs": probs}, config.scale_attn_weights)
    # 2) project: Q | K | V side by side again, as c_attn computed them
    d_qkv = np.concatenate([merge_heads(g).reshape(n, d) for g in d_heads], axis=1)  # (N, 3D)
    d_ln1, grads["attn.c_attn.weight"], grads["attn.c_attn.bias"] = linear_backward(
        d_qkv, kept["ln1"], p["attn.c_attn.weight"]
    )
    # *) ln_1, and the residual: x reaches summed directly and through attention
    d_x, grads["ln_1.weight"], grads["ln_1.bias"] = layer_norm_backward(
        d_ln1, kept["x"], p["ln_1.weight"], eps
    )
    return d_summed + d_x, grads


def add_rows(table: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """table[rows[i]] += values[i] for every i, repeated rows summed (table[rows] += values would
    keep one of them). Sorted, so each run of equal rows is one sum: np.add.at does the same
    about ten times slower on rows of a matrix."""
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # where each run begins
    table[ordered[starts]] += np.add.reduceat(values[order], starts, axis=0)


def backward(params: dict, config: GPT2Config, cache: dict, d_logits: np.ndarray) -> dict[str, np.ndarray]:
    """Every parameter's gradient, given d_logits (B, T, V) and the forward's cache: a dict with the
    names and shapes of params."""
    tokens = cache["tokens"]
    b, t = tokens.shape
    wte = params["wte.weight"]  # (V, D)
    d_logits = d_logits.reshape(b * t, -1)  # (N, V)
    grads = {}
    # 10) the tied unembedding, logits = final W_E^T: W_E's first gradient
    grads["wte.weight"] = d_logits.T @ cache["final"]  # (V, D)
    d_final = d_logits @ wte  # (N, D)
    # 9) ln_f
    d_x, grads["ln_f.weight"], grads["ln_f.bias"] = layer_norm_backward(
        d_final, cache["last"], params["ln_f.weight"], config.layer_norm_epsilon
    )
    # 8) to *) each block, the last first
    for i in reversed(range(config.n_layer)):
        prefix = f"h.{i}."
        p = {name[len(prefix) :]: value for name, value in params.items() if name.startswith(prefix)}
        d_x, block_grads = block_backward(d_x, cache["blocks"][i], cache["probs"][i], p, config, b)
        grads.update({prefix + name: g for name, g in block_grads.items()})
    # 1) embeddings: x = W_E[tokens] + W_P[:T]; a token read at several positions sums their gradients
    add_rows(grads["wte.weight"], tokens.reshape(-1), d_x)
    grads["wpe.weight"] = np.zeros_like(params["wpe.weight"])  # (P, D): rows past T get nothing
    grads["wpe.weight"][:t] = d_x.reshape(b, t, -1).sum(axis=0)
    return {name: grads[name] for name in params}
