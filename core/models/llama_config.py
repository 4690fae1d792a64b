"""What the NumPy Llama reads from config.json (transformers' LlamaConfig names), and the checks that
refuse a Llama-family checkpoint it cannot run (before any weights are downloaded), with what to do
instead. SmolLM2 is a Llama: model_type "llama"."""

from __future__ import annotations

from dataclasses import dataclass

from core.models.bert_config import UnsupportedModelError

__all__ = ["LlamaConfig", "check_llama_config"]


@dataclass(frozen=True)
class LlamaConfig:
    """The fields of a Llama config.json that the forward pass uses."""

    vocab_size: int  # V, rows of the token-embedding table
    hidden_size: int  # D, the width of every token vector
    intermediate_size: int  # the SwiGLU feed-forward's hidden width
    num_hidden_layers: int  # L, decoder blocks
    num_attention_heads: int  # H, query heads per block
    num_key_value_heads: int  # H_kv, key/value heads per block: each serves H / H_kv query heads
    head_dim: int  # d_head, the size of one head's query, key and value
    max_position_embeddings: int = 2048  # the longest context the model was trained on, in tokens
    rms_norm_eps: float = 1e-6  # eps inside RMSNorm's square root
    rope_theta: float = 10000.0  # RoPE's base: plane i turns at base^(-2i / d_head) radians a position
    tie_word_embeddings: bool = False  # True: the unembedding is the token-embedding table itself

    @property
    def group(self) -> int:
        """How many query heads share one key/value head."""
        return self.num_attention_heads // self.num_key_value_heads

    @classmethod
    def from_dict(cls, raw: dict, source: str = "config.json") -> LlamaConfig:
        """Check that `raw` describes a Llama this engine runs, and say what to do when not."""

        def refuse(why: str, use_torch: bool = False):
            raise UnsupportedModelError(f"{source}: {why}" + ("; use the torch engine" if use_torch else ""))

        if (model_type := raw.get("model_type")) != "llama":
            refuse(f"model_type is {model_type!r}; this engine runs Llama-family models only", use_torch=True)
        needed = (
            "vocab_size",
            "hidden_size",
            "intermediate_size",
            "num_hidden_layers",
            "num_attention_heads",
        )
        if missing := [n for n in needed if n not in raw]:
            refuse(f"lacks {', '.join(missing)}: it is not a complete Llama config")
        rope = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
        if rope.get("rope_type", rope.get("type", "default")) != "default":
            refuse(
                f"RoPE scaling {rope.get('rope_type', rope.get('type'))!r} is not supported", use_torch=True
            )
        if raw.get("attention_bias") or raw.get("mlp_bias"):
            refuse(
                "attention_bias or mlp_bias is set: this engine runs Llamas without biases", use_torch=True
            )
        if raw.get("hidden_act", "silu") != "silu":
            refuse(f"hidden_act {raw['hidden_act']!r} is not SwiGLU's silu", use_torch=True)
        heads = raw["num_attention_heads"]
        kv_heads = raw.get("num_key_value_heads") or heads
        if heads < 1 or kv_heads < 1 or heads % kv_heads:
            refuse(f"num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads})")
        head_dim = raw.get("head_dim") or raw["hidden_size"] // heads
        if head_dim % 2 or (raw.get("head_dim") is None and raw["hidden_size"] % heads):
            refuse(f"hidden_size ({raw['hidden_size']}) and {heads} heads give no even head size")
        theta = rope.get("rope_theta", raw.get("rope_theta", 10000.0))
        config = cls(
            **{name: raw[name] for name in needed},
            num_key_value_heads=kv_heads,
            head_dim=head_dim,
            max_position_embeddings=raw.get("max_position_embeddings", 2048),
            rms_norm_eps=raw.get("rms_norm_eps", 1e-6),
            rope_theta=float(theta),
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
        )
        if config.num_hidden_layers < 1 or config.max_position_embeddings < 1:
            refuse("num_hidden_layers and max_position_embeddings must be 1 or more")
        return config


def check_llama_config(config: dict) -> None:
    """UnsupportedModelError unless config.json's dict describes a Llama this engine runs."""
    LlamaConfig.from_dict(config)
