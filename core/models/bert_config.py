"""What the NumPy BERT reads from config.json, and the checks that refuse a model it cannot run
(before any weights are downloaded), with what to do instead."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path

from core.lesson.layers import ACTIVATIONS
from core.models import registry
from core.models.errors import ModelError

__all__ = ["BertConfig", "UnsupportedModelError", "check_bert_config", "check_supported"]


class UnsupportedModelError(ModelError, ValueError):
    """Not a BERT this engine runs (another architecture or setting); the torch engine may run it."""


@dataclass(frozen=True)
class BertConfig:
    """The fields of a BERT config.json that the forward pass uses."""

    vocab_size: int  # rows of the word-embedding table (the WordPiece vocabulary)
    hidden_size: int  # D, the width of every token vector
    num_hidden_layers: int  # L, encoder layers
    num_attention_heads: int  # H, heads per layer; D must be divisible by H
    intermediate_size: int  # I, the width of the feed-forward's hidden layer
    hidden_act: str = "gelu"  # the feed-forward's activation, a key of core.lesson.layers.ACTIVATIONS
    max_position_embeddings: int = 512  # rows of the position table: the longest input, in tokens
    type_vocab_size: int = 2  # token types (segments): 0 = first sentence, 1 = second
    layer_norm_eps: float = 1e-12  # eps inside LayerNorm's square root

    @property
    def d_k(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, raw: dict, source: str = "config.json") -> BertConfig:
        """Check that `raw` describes a BERT encoder this engine runs, and say what to do when not."""

        def refuse(why: str, use_torch: bool = False):
            advice = "; use the torch engine" if use_torch else ""
            raise UnsupportedModelError(f"{source}: {why}{advice}")

        if (model_type := raw.get("model_type")) != "bert":
            refuse(f"model_type is {model_type!r}; the NumPy engine runs BERT models only", use_torch=True)
        for flag in ("is_decoder", "add_cross_attention"):
            if raw.get(flag):
                refuse(f"{flag} is set; the NumPy engine runs BERT encoders only", use_torch=True)
        if (position := raw.get("position_embedding_type", "absolute")) != "absolute":
            refuse(f"position_embedding_type {position!r} is not supported (only 'absolute')", use_torch=True)
        needed = ("vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size")
        if missing := [n for n in needed if n not in raw]:
            refuse(f"lacks {', '.join(missing)}: it is not a complete BERT config")
        if not (heads := raw.get("num_attention_heads")):
            refuse(f"num_attention_heads is {heads!r}; a BERT needs at least one attention head")
        config = cls(**{f.name: raw[f.name] for f in fields(cls) if f.name in raw})
        d, h = config.hidden_size, config.num_attention_heads
        if d % h:
            refuse(f"hidden_size ({d}) must be divisible by num_attention_heads ({h})")
        if (act := config.hidden_act) not in ACTIVATIONS:
            refuse(f"hidden_act {act!r} is not supported (only {', '.join(ACTIVATIONS)})", use_torch=True)
        if config.num_hidden_layers < 1:
            refuse(f"num_hidden_layers is {config.num_hidden_layers}; need 1 or more")
        return config


def check_bert_config(config: dict) -> None:
    """UnsupportedModelError unless config.json's dict describes a BERT this engine runs (usable as
    core.models.registry.prepare_model_files' check_config: refused before any weights are downloaded)."""
    BertConfig.from_dict(config)


def check_supported(model_dir: str | os.PathLike) -> str | None:
    """None when this engine can run the checkpoint in `model_dir`, else the reason it cannot."""
    model_dir = Path(model_dir)
    try:
        check_bert_config(registry.read_config(model_dir))
    except ModelError as err:
        return str(err)
    if not any((model_dir / n).is_file() for n in ("model.safetensors", "model.safetensors.index.json")):
        return f"no model.safetensors in {model_dir} (the NumPy engine reads safetensors weights only)"
    if not any((model_dir / n).is_file() for n in ("tokenizer.json", "vocab.txt")):
        return f"no tokenizer.json or vocab.txt in {model_dir}"
    return None
