"""Attention Explorer's computation: attention from scratch in NumPy, and BERT engines.

Never imports streamlit or plotly; only core.pretrained imports torch, and only when called.
Importing it only defines things: no environment variables, threads or processes.
"""

from core.attention import (
    MASK_KINDS,
    FullyMaskedRowError,
    attention_steps,
    build_mask,
    causal_mask,
    local_window_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
    split_heads,
    strided_mask,
)
from core.layers import feed_forward, gelu, gelu_tanh, layer_norm, linear, residual
from core.result import AttentionResult
from core.trace import LayerTrace

__all__ = [
    "MASK_KINDS",
    "AttentionResult",
    "FullyMaskedRowError",
    "LayerTrace",
    "attention_steps",
    "build_mask",
    "causal_mask",
    "feed_forward",
    "gelu",
    "gelu_tanh",
    "layer_norm",
    "linear",
    "local_window_mask",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "residual",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
    "strided_mask",
]
