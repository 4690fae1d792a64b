"""Reading a BERT checkpoint's weights for the NumPy engine (core/models/bert.py): every safetensors tensor
(shards too), each taken once with its shape checked, and one layer's parameters as x @ W."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from core.models.bert_config import BertConfig
from core.models.errors import ModelFilesError

__all__ = ["read_layer_weights", "read_safetensors", "take_tensor"]


def read_safetensors(model_dir: Path) -> dict[str, np.ndarray]:
    """Every tensor of the checkpoint, named without the "bert." prefix of a masked-LM checkpoint."""
    from safetensors import SafetensorError, safe_open

    single, index = model_dir / "model.safetensors", model_dir / "model.safetensors.index.json"
    if single.is_file():
        files = [single]
    elif index.is_file():  # a checkpoint saved in shards
        files = [model_dir / f for f in sorted(set(json.loads(index.read_text())["weight_map"].values()))]
    else:
        raise ModelFilesError(
            f"no model.safetensors in {model_dir}; the NumPy engine reads safetensors weights only "
            "(convert a pytorch_model.bin with transformers' save_pretrained(safe_serialization=True))"
        )
    tensors = {}
    for file in files:
        try:
            with safe_open(file, framework="numpy") as f:
                for name in f.keys():  # noqa: SIM118 (safe_open is not a dict)
                    # checkpoints from before 2019 call LayerNorm's parameters gamma and beta
                    key = name.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight")
                    tensors[key.replace("LayerNorm.beta", "LayerNorm.bias")] = f.get_tensor(name)
        except FileNotFoundError:
            raise ModelFilesError(f"missing weights file {file}") from None
        except (SafetensorError, OSError, ValueError, TypeError) as err:  # a damaged file, or bf16 weights
            raise ModelFilesError(f"cannot read {file}: {err}") from err
    return tensors


def take_tensor(tensors: dict[str, np.ndarray], name: str, *shape: int) -> np.ndarray:
    """One tensor as float32, its shape checked; popped, so the checkpoint is never held twice."""
    if name not in tensors:
        raise ModelFilesError(f"the checkpoint has no tensor {name!r}: it does not look like a BERT encoder")
    if (array := tensors.pop(name)).shape != shape:
        raise ModelFilesError(f"tensor {name!r} has shape {array.shape}, config.json implies {shape}")
    return np.ascontiguousarray(array, dtype=np.float32)


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
