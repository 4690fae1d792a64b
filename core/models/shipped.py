"""The letter GPT-2 that ships with the product: trained by core/train with a fixed seed, saved in
the repository with its training record, so decoders work offline and the train page opens on a
run a class can replay at once. SHIPPED_COMMAND recreates it exactly (tests/core/test_train.py
checks that the shipped files are what the command makes). The registry offers it as "letters"."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED_COMMAND", "SHIPPED_DIR", "SHIPPED_KEY", "SHIPPED_NAME", "shipped_model_dir"]

SHIPPED_KEY = "letters"  # how the shipped model is written in URLs and the model picker
SHIPPED_NAME = "letters GPT-2 (trained here, offline)"
SHIPPED_DIR = Path(__file__).resolve().parents[2] / "models" / "letters-gpt2"
SHIPPED_COMMAND = "python -m core train --seed 0 --out models/letters-gpt2"


def shipped_model_dir() -> Path | None:
    """The shipped model's folder, or None when this copy of the product lacks it."""
    return SHIPPED_DIR if (SHIPPED_DIR / "model.safetensors").is_file() else None
