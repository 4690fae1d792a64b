"""GPT-2 checkpoints of the curated decoders' real sizes, with random weights: what the Cloud
simulation serves from the stand-in Hub to measure the hosted server's memory (no network reaches
the Hub here). Built with NumPy alone (no torch), so the figures do not depend on transformers.

Each checkpoint is laid out as the Hub's own: config.json as GPT2LMHeadModel writes it,
model.safetensors with GPT2Model's tensor names (no "transformer." prefix, as the gpt2 repository
has them) including each block's `attn.bias`, the 1 × 1 × 1024 × 1024 causal-mask buffer the
Hub's files still carry (which is why gpt2's file is 548 MB and not its 124 M parameters' 498 MB),
and a byte-level BPE tokenizer.json with GPT-2's 50,257 entries: the 256 bytes, 50,000 merges and
<|endoftext|>. The merges are made up (random byte strings grown one byte at a time, seeded), not
learned: training a 50k-merge BPE is slow, and for memory what counts is how many entries the
tokenizer holds, not which.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

__all__ = ["REAL_SHAPES", "make_real_size_gpt2", "safetensors_bytes", "synthetic_gpt2_tokenizer"]

# The curated decoders' shapes (their config.json on the Hub): 12 heads, width 768, 1024 positions,
# 50,257 tokens; distilgpt2 has 6 blocks, gpt2 12.
REAL_SHAPES: dict[str, int] = {"distilbert/distilgpt2": 6, "gpt2": 12}
VOCAB, WIDTH, HEADS, POSITIONS = 50_257, 768, 12, 1024
END_OF_TEXT = "<|endoftext|>"


def safetensors_bytes(n_layer: int) -> int:
    """The tensors' bytes in model.safetensors of an `n_layer`-block GPT-2 of this shape (float32), its
    small JSON header aside: the embeddings, ln_f, and per block its parameters and attn.bias."""
    d, p = WIDTH, POSITIONS
    attention = (d * 3 * d + 3 * d) + (d * d + d) + p * p + 1  # c_attn, c_proj, attn.bias, masked_bias
    block = 2 * d + attention + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d)  # ln_1, ..., ln_2, the MLP
    return 4 * (VOCAB * d + p * d + 2 * d + n_layer * block)


def synthetic_gpt2_tokenizer(directory: Path, n_merges: int = VOCAB - 257, seed: int = 0) -> Path:
    """tokenizer.json: GPT-2's byte-level BPE with `n_merges` seeded made-up merges, then <|endoftext|>
    (id 50256 with the default count, as in GPT-2)."""
    from tokenizers import pre_tokenizers
    from tokenizers.implementations import ByteLevelBPETokenizer

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())  # the 256 bytes as GPT-2 writes them
    vocab = {token: i for i, token in enumerate(alphabet)}
    tokens, merges, rng = list(alphabet), [], random.Random(seed)
    while len(merges) < n_merges:
        left, right = rng.choice(tokens), rng.choice(alphabet)  # a known piece grown by one byte
        if left + right in vocab or len(left) >= 10:
            continue
        merges.append((left, right))
        vocab[left + right] = len(vocab)
        tokens.append(left + right)
    tokenizer = ByteLevelBPETokenizer(vocab, merges)
    tokenizer.add_special_tokens([END_OF_TEXT])
    path = Path(directory) / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def _config(n_layer: int) -> dict:
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": VOCAB - 1,
        "embd_pdrop": 0.1,
        "eos_token_id": VOCAB - 1,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": POSITIONS,
        "n_embd": WIDTH,
        "n_head": HEADS,
        "n_layer": n_layer,
        "n_positions": POSITIONS,
        "resid_pdrop": 0.1,
        "vocab_size": VOCAB,
    }


def _block(rng: np.random.Generator, i: int) -> dict[str, np.ndarray]:
    def normal(*shape: int, std: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    d, ones, zeros = WIDTH, np.ones(WIDTH, np.float32), np.zeros(WIDTH, np.float32)
    return {
        f"h.{i}.ln_1.weight": ones,
        f"h.{i}.ln_1.bias": zeros,
        f"h.{i}.attn.c_attn.weight": normal(d, 3 * d, std=0.3),  # Conv1D: (d_in, d_out)
        f"h.{i}.attn.c_attn.bias": normal(3 * d),
        f"h.{i}.attn.c_proj.weight": normal(d, d),
        f"h.{i}.attn.c_proj.bias": normal(d),
        f"h.{i}.attn.bias": np.tril(np.ones((POSITIONS, POSITIONS), np.float32))[None, None],
        f"h.{i}.attn.masked_bias": np.array(-1e4, np.float32),
        f"h.{i}.ln_2.weight": ones.copy(),
        f"h.{i}.ln_2.bias": zeros.copy(),
        f"h.{i}.mlp.c_fc.weight": normal(d, 4 * d),
        f"h.{i}.mlp.c_fc.bias": normal(4 * d),
        f"h.{i}.mlp.c_proj.weight": normal(4 * d, d),
        f"h.{i}.mlp.c_proj.bias": normal(d),
    }


def make_real_size_gpt2(directory: Path, n_layer: int, *, seed: int = 0) -> Path:
    """A GPT-2 of width 768, 12 heads, 1024 positions and 50,257 tokens with `n_layer` blocks and
    random weights, saved as the Hub's files (config.json, model.safetensors, tokenizer.json)."""
    from safetensors.numpy import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tensors = {
        "wte.weight": rng.standard_normal((VOCAB, WIDTH), dtype=np.float32) * np.float32(0.02),
        "wpe.weight": rng.standard_normal((POSITIONS, WIDTH), dtype=np.float32) * np.float32(0.01),
        "ln_f.weight": np.ones(WIDTH, np.float32),
        "ln_f.bias": np.zeros(WIDTH, np.float32),
    }
    for i in range(n_layer):
        tensors.update(_block(rng, i))
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    (directory / "config.json").write_text(json.dumps(_config(n_layer), indent=2) + "\n")
    synthetic_gpt2_tokenizer(directory, seed=seed)
    return directory
