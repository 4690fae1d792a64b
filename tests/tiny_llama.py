"""Llama checkpoints the tests build and save themselves (no download): random weights of any shape
(grouped-query attention included), with the byte-level BPE tokenizer of tests/tiny_gpt2.py."""

from __future__ import annotations

from pathlib import Path

from tests.tiny_gpt2 import train_tokenizer


def make_tiny_llama(
    directory: Path,
    *,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    width: int = 32,
    inner: int = 48,
    positions: int = 64,
    seed: int = 0,
    tie_word_embeddings: bool = True,
    **config,
) -> Path:
    """A LlamaForCausalLM of the given shape with random weights, saved as safetensors with its
    tokenizer; its unembedding tied to the embedding table unless told otherwise (as SmolLM2's). The
    queries and keys are drawn larger than the default init, so the heads' patterns are not all
    flat."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(directory)
    settings = LlamaConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=width,
        intermediate_size=inner,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=positions,
        tie_word_embeddings=tie_word_embeddings,
        **config,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(settings).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(("q_proj.weight", "k_proj.weight")):
                parameter.normal_(0.0, 0.3)
            elif name.endswith("layernorm.weight") or name == "model.norm.weight":
                parameter.uniform_(0.5, 1.5)  # not all ones, so a wrong gain would show
    model.save_pretrained(directory, safe_serialization=True)
    return directory
