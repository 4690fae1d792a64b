"""Reading a checkpoint's weights for the NumPy engines: every safetensors tensor (shards too), and
each tensor taken once, as float32, with its shape checked. Only safetensors: never a pickle."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.models.errors import ModelFilesError

__all__ = ["read_safetensors", "take_tensor"]


def read_safetensors(
    model_dir: Path, prefix: str = "bert.", hold: Callable[[np.ndarray], np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """Every tensor of the checkpoint, named without `prefix`: the base model's name inside a
    checkpoint with a head ("bert." of a masked-LM BERT, "transformer." of GPT2LMHeadModel). hold:
    what to keep of each tensor as it is read (core.models.bfloat16.to_bfloat16: half of it), so the
    checkpoint in full precision is never in memory at once."""
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
                    key = name.removeprefix(prefix).replace("LayerNorm.gamma", "LayerNorm.weight")
                    tensor = f.get_tensor(name)
                    tensors[key.replace("LayerNorm.beta", "LayerNorm.bias")] = (
                        hold(tensor) if hold else tensor
                    )
        except FileNotFoundError:
            raise ModelFilesError(f"missing weights file {file}") from None
        except (SafetensorError, OSError, ValueError, TypeError) as err:  # a damaged file, or bf16 weights
            raise ModelFilesError(f"cannot read {file}: {err}") from err
    return tensors


def take_tensor(tensors: dict[str, np.ndarray], name: str, *shape: int) -> np.ndarray:
    """One tensor as float32 (or as the bfloat16 halves read_safetensors held), its shape checked;
    popped, so the checkpoint is never held twice."""
    if name not in tensors:
        raise ModelFilesError(
            f"the checkpoint has no tensor {name!r}: it is not the architecture its config.json names"
        )
    if (array := tensors.pop(name)).shape != shape:
        raise ModelFilesError(f"tensor {name!r} has shape {array.shape}, config.json implies {shape}")
    return np.ascontiguousarray(array, dtype=np.uint16 if array.dtype == np.uint16 else np.float32)
