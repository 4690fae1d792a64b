"""One GPT-2 block's parameters from a checkpoint, as x @ W, for the NumPy engine (core/models/gpt2.py).

GPT-2 keeps its projections in transformers' Conv1D, whose weight is already (d_in, d_out) and
computes x @ W + b: nothing is transposed (BERT's nn.Linear is). Its one query/key/value
projection, c_attn (D, 3 D), is cut into W^Q, W^K and W^V here, so a block's trace shows the same
names as BERT's and the learn page's.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from core.models.checkpoint import take_tensor
from core.models.gpt2_config import GPT2Config

__all__ = ["read_block_weights"]


def read_block_weights(tensors: dict[str, np.ndarray], i: int, config: GPT2Config) -> SimpleNamespace:
    """Block i's parameters: ln1_gamma, ln1_beta (before attention), w_q, b_q, w_k, b_k, w_v, b_v,
    w_o, b_o (attention's c_proj), ln2_gamma, ln2_beta (before the MLP), w_1, b_1, w_2, b_2 (the MLP)."""
    d, inner, block = config.n_embd, config.inner, f"h.{i}."
    qkv = take_tensor(tensors, f"{block}attn.c_attn.weight", d, 3 * d)  # (D, 3 D): Q | K | V
    qkv_bias = take_tensor(tensors, f"{block}attn.c_attn.bias", 3 * d)
    weights = {}
    for n, name in enumerate("qkv"):
        weights[f"w_{name}"] = np.ascontiguousarray(qkv[:, n * d : (n + 1) * d])  # (D, D)
        weights[f"b_{name}"] = np.ascontiguousarray(qkv_bias[n * d : (n + 1) * d])
    for ours, module, d_in, d_out in (
        ("o", "attn.c_proj", d, d),
        ("1", "mlp.c_fc", d, inner),
        ("2", "mlp.c_proj", inner, d),
    ):
        weights[f"w_{ours}"] = take_tensor(tensors, f"{block}{module}.weight", d_in, d_out)
        weights[f"b_{ours}"] = take_tensor(tensors, f"{block}{module}.bias", d_out)
    for ours, module in (("ln1", "ln_1"), ("ln2", "ln_2")):
        weights[f"{ours}_gamma"] = take_tensor(tensors, f"{block}{module}.weight", d)
        weights[f"{ours}_beta"] = take_tensor(tensors, f"{block}{module}.bias", d)
    for array in weights.values():
        array.setflags(write=False)  # traces hand these very arrays to the pages: nobody may edit them
    return SimpleNamespace(**weights)
