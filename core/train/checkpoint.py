"""Saving what training made as a Hugging Face GPT-2 checkpoint (config.json, model.safetensors, the
letter tokenizer) that GPT2LMHeadModel.from_pretrained and the NumPy engine both load; and the
same parameters as a GPT2Numpy engine in memory, for the measurements that follow a run."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np

from core.models.gpt2_config import GPT2Config
from core.train.data import START
from core.train.tokenizer import save_tokenizer

__all__ = ["engine_from_params", "save_checkpoint"]


def save_checkpoint(params: dict[str, np.ndarray], config: GPT2Config, out: Path) -> Path:
    """Write the model to `out` (created if needed) as GPT2LMHeadModel saves it: tensors named
    "transformer.*", no lm_head.weight (tied to wte)."""
    from safetensors.numpy import save_file

    out.mkdir(parents=True, exist_ok=True)
    raw = {f.name: getattr(config, f.name) for f in fields(config)}
    raw |= {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "bos_token_id": START,
        "eos_token_id": START,
        "tie_word_embeddings": True,
        # trained without dropout: a model loaded for training elsewhere should behave the same
        **{"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0},
    }
    (out / "config.json").write_text(json.dumps(raw, indent=2) + "\n")
    tensors = {f"transformer.{name}": np.ascontiguousarray(a, dtype=np.float32) for name, a in params.items()}
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    save_tokenizer(out, config.n_positions)
    return out


def engine_from_params(params: dict[str, np.ndarray], config: GPT2Config, name: str = "letters GPT-2"):
    """The NumPy GPT-2 engine on a copy of `params` (it takes its tensors out of the dict it gets)."""
    from core.models.gpt2 import GPT2Numpy
    from core.train.tokenizer import letter_tokenizer

    return GPT2Numpy(
        config, {k: np.array(v, dtype=np.float32) for k, v in params.items()}, letter_tokenizer(), name
    )
