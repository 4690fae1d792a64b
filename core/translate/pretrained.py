"""The translator's torch reference: transformers' BART on the same files, for `attend --engine
torch` on the translator (the NumPy engine, core/translate/engine.py, is held to it within 1e-5 by
the tests). torch is imported inside the function, so that `import core` stays torch-free."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["encoder_attention_torch"]


def encoder_attention_torch(folder: Path, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The encoder's self-attention (L, H, S, S) and hidden states (L + 1, S, D) on ids (S,)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stderr is kept for errors
    import torch
    from transformers import AutoModelForSeq2SeqLM

    bart = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
    with torch.no_grad():
        out = bart.get_encoder()(
            torch.from_numpy(ids[None]), output_attentions=True, output_hidden_states=True
        )
    attentions = np.stack([a[0].numpy() for a in out.attentions]).astype(np.float32)
    return attentions, np.stack([h[0].numpy() for h in out.hidden_states]).astype(np.float32)
