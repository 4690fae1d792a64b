"""What the NumPy GPT-2 reads from config.json, and the checks that refuse a decoder it cannot run
(before any weights are downloaded), with what to do instead."""

from __future__ import annotations

from dataclasses import dataclass, fields

from core.lesson.layers import ACTIVATIONS
from core.models.bert_config import UnsupportedModelError

__all__ = ["GPT2Config", "check_gpt2_config"]


@dataclass(frozen=True)
class GPT2Config:
    """The fields of a GPT-2 config.json that the forward pass uses (transformers' names)."""

    vocab_size: int  # rows of the token-embedding table, which is also the unembedding (tied)
    n_embd: int  # D, the width of every token vector
    n_layer: int  # L, decoder blocks
    n_head: int  # H, heads per block; D must be divisible by H
    n_positions: int = 1024  # rows of the learned position table: the longest context, in tokens
    n_inner: int | None = None  # the MLP's hidden width; None means 4 D
    activation_function: str = "gelu_new"  # a key of core.lesson.layers.ACTIVATIONS (gelu_new: tanh form)
    layer_norm_epsilon: float = 1e-5  # eps inside LayerNorm's square root
    scale_attn_weights: bool = True  # divide the scores by sqrt(d_k), as every GPT-2 does

    @property
    def d_k(self) -> int:
        return self.n_embd // self.n_head

    @property
    def inner(self) -> int:
        return self.n_inner or 4 * self.n_embd

    @classmethod
    def from_dict(cls, raw: dict, source: str = "config.json") -> GPT2Config:
        """Check that `raw` describes a GPT-2 this engine runs, and say what to do when not."""

        def refuse(why: str, use_torch: bool = False):
            advice = "; use the torch engine" if use_torch else ""
            raise UnsupportedModelError(f"{source}: {why}{advice}")

        if (model_type := raw.get("model_type")) != "gpt2":
            refuse(f"model_type is {model_type!r}; this engine runs GPT-2 models only", use_torch=True)
        if raw.get("add_cross_attention"):
            refuse("add_cross_attention is set: a decoder of an encoder-decoder", use_torch=True)
        if raw.get("scale_attn_by_inverse_layer_idx"):
            refuse("scale_attn_by_inverse_layer_idx is set (scores also divided by the layer's number)", True)
        needed = ("vocab_size", "n_embd", "n_layer", "n_head")
        if missing := [n for n in needed if n not in raw]:
            refuse(f"lacks {', '.join(missing)}: it is not a complete GPT-2 config")
        config = cls(**{f.name: raw[f.name] for f in fields(cls) if f.name in raw})
        d, h = config.n_embd, config.n_head
        if h < 1 or d % h:
            refuse(f"n_embd ({d}) must be divisible by n_head ({h})")
        if (act := config.activation_function) not in ACTIVATIONS:
            refuse(f"activation_function {act!r} is not supported (only {', '.join(ACTIVATIONS)})", True)
        if config.n_layer < 1 or config.n_positions < 1:
            refuse(f"n_layer ({config.n_layer}) and n_positions ({config.n_positions}) must be 1 or more")
        return config


def check_gpt2_config(config: dict) -> None:
    """UnsupportedModelError unless config.json's dict describes a GPT-2 this engine runs."""
    GPT2Config.from_dict(config)
