"""One BERT layer's parameters from a checkpoint, as x @ W, for the NumPy engine (core/models/bert.py);
the tensors are read by core/models/checkpoint.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from core.models.bert_config import BertConfig
from core.models.checkpoint import take_tensor

__all__ = ["read_layer_weights"]


def read_layer_weights(tensors: dict[str, np.ndarray], i: int, config: BertConfig) -> SimpleNamespace:
    """Layer i's parameters under core.lesson.trace's names (w_q, b_q, ..., w_o, b_o, ln_gamma, ln_beta) and
    the feed-forward's (w_1, b_1, w_2, b_2, ln2_gamma, ln2_beta); x @ W with W shaped (d_in, d_out)."""
    d, inter, layer = config.hidden_size, config.intermediate_size, f"encoder.layer.{i}."
    weights = {}
    for ours, module, d_in, d_out in (
        ("q", "attention.self.query", d, d),
        ("k", "attention.self.key", d, d),
        ("v", "attention.self.value", d, d),
        ("o", "attention.output.dense", d, d),
        ("1", "intermediate.dense", d, inter),
        ("2", "output.dense", inter, d),
    ):
        # torch's Linear.weight is (d_out, d_in), for x W^T: transpose once, to x @ W
        weights[f"w_{ours}"] = np.ascontiguousarray(
            take_tensor(tensors, f"{layer}{module}.weight", d_out, d_in).T
        )
        weights[f"b_{ours}"] = take_tensor(tensors, f"{layer}{module}.bias", d_out)
    for ours, module in (("ln", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
        weights[f"{ours}_gamma"] = take_tensor(tensors, f"{layer}{module}.weight", d)
        weights[f"{ours}_beta"] = take_tensor(tensors, f"{layer}{module}.bias", d)
    for array in weights.values():
        array.setflags(write=False)  # traces hand these very arrays to the pages: nobody may edit them
    return SimpleNamespace(**weights)
