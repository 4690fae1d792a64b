"""One Llama block's parameters from a checkpoint, as x @ W, for the NumPy engine (core/models/llama.py).

Llama keeps its projections in torch's nn.Linear, whose weight is (d_out, d_in) and computes
x W^T: each is transposed once, here, so the forward pass reads Q = h W^Q as the lesson writes it.
There are no biases. W^K and W^V are narrower than W^Q: (D, H_kv d_head) against (D, H d_head),
since H / H_kv query heads share each key/value head.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from core.models.checkpoint import take_tensor
from core.models.llama_config import LlamaConfig

__all__ = ["read_block_weights"]


def read_block_weights(tensors: dict[str, np.ndarray], i: int, config: LlamaConfig) -> SimpleNamespace:
    """Block i's parameters: norm1 (RMSNorm before attention), w_q, w_k, w_v, w_o, norm2 (before the
    MLP), w_gate, w_up, w_down (the SwiGLU feed-forward)."""
    d, inner, d_head, block = config.hidden_size, config.intermediate_size, config.head_dim, f"layers.{i}."
    q_width, kv_width = config.num_attention_heads * d_head, config.num_key_value_heads * d_head
    weights = {}
    for ours, module, d_in, d_out in (
        ("w_q", "self_attn.q_proj", d, q_width),
        ("w_k", "self_attn.k_proj", d, kv_width),
        ("w_v", "self_attn.v_proj", d, kv_width),
        ("w_o", "self_attn.o_proj", q_width, d),
        ("w_gate", "mlp.gate_proj", d, inner),
        ("w_up", "mlp.up_proj", d, inner),
        ("w_down", "mlp.down_proj", inner, d),
    ):
        # nn.Linear's weight is (d_out, d_in): transposed once, so that y = x @ W
        weights[ours] = np.ascontiguousarray(take_tensor(tensors, f"{block}{module}.weight", d_out, d_in).T)
    weights["norm1"] = take_tensor(tensors, f"{block}input_layernorm.weight", d)
    weights["norm2"] = take_tensor(tensors, f"{block}post_attention_layernorm.weight", d)
    for array in weights.values():
        array.setflags(write=False)  # traces hand these very arrays to the pages: nobody may edit them
    return SimpleNamespace(**weights)
