"""Attention Explorer's computation: attention from scratch in NumPy, and BERT engines.

Never imports streamlit or plotly; only core.pretrained imports torch, and only when called.
"""

# First, before anything here imports NumPy: the OpenBLAS kernels for this CPU (see core/blas_kernels.py)
from core.blas_kernels import prefer_faster_kernels

prefer_faster_kernels()

from core.attention import (  # noqa: E402
    MASK_KINDS,
    FullyMaskedRowError,
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
from core.layers import feed_forward, gelu, gelu_tanh, layer_norm, linear, residual  # noqa: E402
from core.result import AttentionResult  # noqa: E402

__all__ = [
    "MASK_KINDS",
    "AttentionResult",
    "FullyMaskedRowError",
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
