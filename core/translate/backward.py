"""The translator's backward pass by hand: core/translate/model.py's forward, step by step in reverse,
with the decoder's building blocks of core/train/backward.py (linear, LayerNorm, GELU, softmax,
attention), which do not care whether the queries and the keys come from the same sentence.

    logits = y W_E^T                 W_E's first gradient, and d_y
    each decoder layer, the last first:
        y = LN(y + MLP(y))           LayerNorm's backward, then the MLP's; the residual adds d back
        y = LN(y + cross(y, x))      the queries' share goes to y, the keys' and values' to the
                                     encoder's output x, summed over every decoder layer
        y = LN(y + self(y))          queries, keys and values all from y
    target embeddings                LayerNorm, then W_E's rows of the target tokens, the positions
    each encoder layer, the last first, from the gradient the cross-attentions gave x
    source embeddings                W_E's rows of the source tokens (one table, three uses)

Masked keys (padding, the future) have weight 0, so they pass no gradient; padding positions feed
nothing the loss reads, so theirs is 0 as well.

Letters in shape comments: B sentences, T positions, N = B T rows, D width, H heads.
"""

from __future__ import annotations

import numpy as np

from core.lesson.attention import merge_heads, split_heads
from core.train.backward import (
    add_rows,
    attention_backward,
    gelu_tanh_backward,
    layer_norm_backward,
    linear_backward,
)
from core.translate.model import OFFSET, TranslatorConfig

__all__ = ["backward"]


def _rows(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1, x.shape[-1])  # (B, T, D) -> (N, D)


def _norm_backward(
    d_y: np.ndarray, summed: np.ndarray, p: dict, name: str, eps: float, grads: dict
) -> np.ndarray:
    """y = LN(summed): d_summed (B, T, D), and the norm's two gradients into `grads`."""
    d, grads[f"{name}.weight"], grads[f"{name}.bias"] = layer_norm_backward(
        _rows(d_y), _rows(summed), p[f"{name}.weight"], eps
    )
    return d.reshape(d_y.shape)


def _linear_backward(d_y: np.ndarray, x: np.ndarray, p: dict, name: str, grads: dict) -> np.ndarray:
    """y = x W + b on (B, T, ·) arrays: d_x, and W's and b's gradients into `grads`."""
    d_x, grads[f"{name}.weight"], grads[f"{name}.bias"] = linear_backward(
        _rows(d_y), _rows(x), p[f"{name}.weight"]
    )
    return d_x.reshape(*d_y.shape[:-1], -1)


def attend_backward(d_out: np.ndarray, kept: dict, p: dict, prefix: str, heads: int, grads: dict):
    """model.attend in reverse: d_out (B, T_q, D) -> (d_x_q (B, T_q, D), d_x_kv (B, T_k, D))."""
    d_concat = _linear_backward(d_out, kept["concat"], p, f"{prefix}.out_proj", grads)
    d_query, d_key, d_value = attention_backward(split_heads(d_concat, heads), kept, scale=True)
    d_x_q = _linear_backward(merge_heads(d_query), kept["x_q"], p, f"{prefix}.q_proj", grads)
    d_x_kv = _linear_backward(merge_heads(d_key), kept["x_kv"], p, f"{prefix}.k_proj", grads)
    d_x_kv += _linear_backward(merge_heads(d_value), kept["x_kv"], p, f"{prefix}.v_proj", grads)
    return d_x_q, d_x_kv


def _mlp_backward(d_out: np.ndarray, kept: dict, p: dict, layer: str, grads: dict) -> np.ndarray:
    d_act = _linear_backward(d_out, kept["act"], p, f"{layer}.fc2", grads)
    d_pre = gelu_tanh_backward(d_act, kept["pre"])
    return _linear_backward(d_pre, kept["mlp_in"], p, f"{layer}.fc1", grads)


def _sublayer_backward(
    d_y: np.ndarray, kept: dict, p: dict, norm: str, eps: float, grads: dict
) -> np.ndarray:
    """y = LN(x + f(x)) up to f: the gradient of x + f(x), which reaches x directly as well."""
    return _norm_backward(d_y, kept["summed"], p, norm, eps, grads)


def _embed_backward(
    d_x: np.ndarray, embedded: np.ndarray, ids: np.ndarray, p: dict, side: str, grads: dict, eps: float
) -> None:
    """x = LN(W_E[ids] + P[2 + t]): the rows of W_E the tokens read, and the position rows."""
    d_sum = _norm_backward(d_x, embedded, p, f"model.{side}.layernorm_embedding", eps, grads)
    add_rows(grads["model.shared.weight"], ids.reshape(-1), _rows(d_sum))
    table = np.zeros_like(p[f"model.{side}.embed_positions.weight"])
    table[OFFSET : OFFSET + ids.shape[1]] = d_sum.sum(axis=0)
    grads[f"model.{side}.embed_positions.weight"] = table


def _decoder_backward(
    d_y: np.ndarray, cache: dict, p: dict, config: TranslatorConfig, grads: dict
) -> np.ndarray:
    """Every decoder layer, the last first: d_y becomes the target embeddings' gradient; returns the
    gradient of the encoder's output, summed over the layers' cross-attentions."""
    eps, d_memory = config.eps, np.zeros_like(cache["memory"])
    for i in reversed(range(config.decoder_layers)):
        name, kept = f"model.decoder.layers.{i}", cache["decoder"]["layers"][i]
        d_sum = _sublayer_backward(d_y, kept["mlp"], p, f"{name}.final_layer_norm", eps, grads)
        d_y = d_sum + _mlp_backward(d_sum, kept["mlp"], p, name, grads)
        d_sum = _sublayer_backward(d_y, kept["cross"], p, f"{name}.encoder_attn_layer_norm", eps, grads)
        d_x_q, d_x_kv = attend_backward(d_sum, kept["cross"], p, f"{name}.encoder_attn", config.heads, grads)
        d_y, d_memory = d_sum + d_x_q, d_memory + d_x_kv
        d_sum = _sublayer_backward(d_y, kept["self"], p, f"{name}.self_attn_layer_norm", eps, grads)
        d_x_q, d_x_kv = attend_backward(d_sum, kept["self"], p, f"{name}.self_attn", config.heads, grads)
        d_y = d_sum + d_x_q + d_x_kv
    _embed_backward(d_y, cache["decoder"]["embedded"], cache["decoder"]["tgt"], p, "decoder", grads, eps)
    return d_memory


def _encoder_backward(d_x: np.ndarray, cache: dict, p: dict, config: TranslatorConfig, grads: dict) -> None:
    eps = config.eps
    for i in reversed(range(config.encoder_layers)):
        name, kept = f"model.encoder.layers.{i}", cache["encoder"]["layers"][i]
        d_sum = _sublayer_backward(d_x, kept["mlp"], p, f"{name}.final_layer_norm", eps, grads)
        d_x = d_sum + _mlp_backward(d_sum, kept["mlp"], p, name, grads)
        d_sum = _sublayer_backward(d_x, kept["self"], p, f"{name}.self_attn_layer_norm", eps, grads)
        d_x_q, d_x_kv = attend_backward(d_sum, kept["self"], p, f"{name}.self_attn", config.heads, grads)
        d_x = d_sum + d_x_q + d_x_kv
    _embed_backward(d_x, cache["encoder"]["embedded"], cache["encoder"]["src"], p, "encoder", grads, eps)


def backward(p: dict, config: TranslatorConfig, cache: dict, d_logits: np.ndarray) -> dict[str, np.ndarray]:
    """Every parameter's gradient, given d_logits (B, T, V) and the forward's cache: named as `p`."""
    grads: dict[str, np.ndarray] = {}
    shared = p["model.shared.weight"]  # (V, D)
    grads["model.shared.weight"] = _rows(d_logits).T @ _rows(cache["decoder"]["final"])  # the unembedding
    d_y = d_logits @ shared  # (B, T, D)
    d_memory = _decoder_backward(d_y, cache, p, config, grads)
    _encoder_backward(d_memory, cache, p, config, grads)
    return {name: grads[name] for name in p}
